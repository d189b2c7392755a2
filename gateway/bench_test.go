package gateway_test

// Benchmarks of a replay through the gateway, on a real SQLite ledger in a
// temporary directory: the handler in process (no sockets: the gateway's
// own CPU per replay) and over loopback HTTP with keep-alive clients.
// Speed goals live here and in the README, never in the tests.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// benchGateway is a gateway on a fresh ledger with a token for "bench"
// and pool keys already created (each replays from then on).
func benchGateway(b *testing.B, pool int) (http.Handler, string) {
	b.Helper()
	l := testledger.New(b, testledger.WithNow(time.Now), testledger.ProviderFile("provider.db"))
	g, err := gateway.New(gateway.Config{Service: l.Svc, Tools: catalog{}, Worker: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	secret, tok, err := model.NewToken("bench", "bench", time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Store.CreateToken(context.Background(), &tok); err != nil {
		b.Fatal(err)
	}
	h := g.Handler()
	// The keys are made 32 at a time, so their commits are shared.
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < pool; i = int(next.Add(1)) - 1 {
				if code := serveReplay(h, secret, i); code != http.StatusCreated {
					b.Errorf("setup key %d: %d", i, code)
				}
			}
		}()
	}
	wg.Wait()
	return h, secret
}

func replayRequest(secret string, i int) *http.Request {
	r := httptest.NewRequest("POST", "/v1/tools/create_support_task",
		strings.NewReader(`{"subject":"printer `+strconv.Itoa(i)+` on fire"}`))
	r.Header.Set("Authorization", "Bearer "+secret)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", "bench-"+strconv.Itoa(i))
	r.Header.Set("X-Trace-Id", "bench-"+strconv.Itoa(i))
	return r
}

func serveReplay(h http.Handler, secret string, i int) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, replayRequest(secret, i))
	return w.Code
}

// BenchmarkReplayHandler is the gateway's own cost of a replay: 32
// concurrent callers of the handler, no network.
func BenchmarkReplayHandler(b *testing.B) {
	const pool = 1000
	h, secret := benchGateway(b, pool)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		// The label sets the replays apart from the setup in a profile
		// (go tool pprof -tagfocus phase=replay).
		pprof.Do(context.Background(), pprof.Labels("phase", "replay"), func(context.Context) {
			for pb.Next() {
				i := int(next.Add(1)) % pool
				if code := serveReplay(h, secret, i); code != http.StatusOK {
					b.Errorf("replay %d: %d", i, code)
					return
				}
			}
		})
	})
	reportRates(b, cpu0)
}

// BenchmarkNewHandler is the gateway's own cost of a new durable
// operation: 32 concurrent callers of the handler, each call a key never
// used, no network; GC at serve's 400 %.
func BenchmarkNewHandler(b *testing.B) {
	h, secret := benchGateway(b, 0)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	run := strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	var next atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		pprof.Do(context.Background(), pprof.Labels("phase", "new"), func(context.Context) {
			for pb.Next() {
				i := int(next.Add(1))
				w := httptest.NewRecorder()
				r := httptest.NewRequest("POST", "/v1/tools/create_support_task",
					strings.NewReader(`{"subject":"printer `+strconv.Itoa(i)+` on fire"}`))
				r.Header.Set("Authorization", "Bearer "+secret)
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Idempotency-Key", "new-"+run+strconv.Itoa(i))
				h.ServeHTTP(w, r)
				if w.Code != http.StatusCreated {
					b.Errorf("new %d: %d %s", i, w.Code, w.Body)
					return
				}
			}
		})
	})
	reportRates(b, cpu0)
}

// BenchmarkReplayLoopback is a replay over loopback HTTP/1.1 with 32
// keep-alive clients in this process (client and server share the CPU).
func BenchmarkReplayLoopback(b *testing.B) {
	const pool = 1000
	h, secret := benchGateway(b, pool)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}
	var next atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1)) % pool
			req, _ := http.NewRequest("POST", srv.URL+"/v1/tools/create_support_task",
				strings.NewReader(`{"subject":"printer `+strconv.Itoa(i)+` on fire"}`))
			req.Header.Set("Authorization", "Bearer "+secret)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "bench-"+strconv.Itoa(i))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("replay %d: %d", i, resp.StatusCode)
				return
			}
		}
	})
	reportRates(b, cpu0)
}

// cpuTime is the CPU this process has used (user and system): per replay,
// the measure a loaded machine disturbs least.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportRates(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replays/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
