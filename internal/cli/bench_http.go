package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// runBenchHTTP is `retrysafe bench --http URL`: load on a running gateway
// from this separate process over the network (loopback in the README),
// against bare SQLite transactions of a new call's writes (and single-row
// ones) timed in the same run.
func runBenchHTTP(ctx context.Context, rawURL, token, baselineDir string, workers, ops, rounds int, mix string, asJSON, baseline bool, stdout, stderr io.Writer) int {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--http must be the gateway's base URL, e.g. http://127.0.0.1:8080"))
	case token == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--token (or $RETRYSAFE_TOKEN) is required with --http: retrysafe tokens create --tenant bench"))
	case workers < 1 || workers > 1024:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--workers must be between 1 and 1024"))
	case ops < 1 || ops > 10_000_000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--ops must be between 1 and 10000000"))
	case mix != "new" && mix != "replay" && mix != "conflict":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--mix must be new, replay or conflict"))
	case rounds < 1 || rounds > 1000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--rounds must be between 1 and 1000"))
	case baseline && !isDir(baselineDir):
		return fail(stderr, model.Errorf(model.CodeInvalid, "--baseline-dir %s is not a directory", baselineDir))
	}
	base := strings.TrimRight(rawURL, "/")
	rep := benchReport{Ledger: base, Mix: mix, Workers: workers, Ops: ops, Durability: "durable"}
	var bare, floor benchBare
	if baseline {
		bare, floor = sqliteBares(ctx, filepath.Join(baselineDir, ".retrysafe-http-bench.baseline-"+strconv.Itoa(os.Getpid())), workers, store.Durable)
	}
	if err := benchHTTPCalls(ctx, u, base, token, &rep, rounds, bare, floor); err != nil {
		return fail(stderr, err)
	}
	if asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "bench: %d %s calls over HTTP to %s, %d concurrent clients\n", rep.Ops, rep.Mix, base, rep.Workers)
		fmt.Fprintf(stdout, "  gateway      %9.0f calls/s  p50 %6.2f ms  p99 %6.2f ms  errors %d\n", rep.OpsPerSec, rep.P50Ms, rep.P99Ms, rep.Errors)
		fmt.Fprintf(stdout, "  load generator CPU  %6.1f µs/call (this bench process, user+system; the gateway's own is not in it)\n", rep.CPUMicrosPerCall)
		if rep.Baseline != nil {
			fmt.Fprintf(stdout, "  bare SQLite  %9.0f tx/s     p50 %6.2f ms  p99 %6.2f ms  (%d transactions of a new call's four writes, synchronous=FULL, in %s)\n",
				rep.Baseline.TxPerSec, rep.Baseline.P50Ms, rep.Baseline.P99Ms, rep.Baseline.Transactions, baselineDir)
			rep.printFloor(stdout)
			rep.printRatios(stdout, "bare SQLite")
		}
		if rep.FirstError != "" {
			fmt.Fprintf(stdout, "  first error: %s\n", rep.FirstError)
		}
	}
	if rep.Errors > 0 {
		return exitInternal
	}
	return exitOK
}

// benchRequestTimeout bounds one request of the load (as the HTTP client's
// Timeout did before).
const benchRequestTimeout = 60 * time.Second

// benchPoster sends one call and returns the answer's status, the body
// read to its end. Each client (goroutine) has its own.
type benchPoster interface {
	post(key string, body []byte, trace string) (int, error)
	close()
}

// rawPoster is one client's keep-alive HTTP/1.1 connection to an http://
// gateway: the request written by hand in one write, the answer read by
// net/http's own parser (http.ReadResponse), the body drained so the next
// request reuses the connection. The load generator shares the cores with
// the gateway it measures, and net/http's client spent about 100 µs of CPU
// per call (its transport hands every request between three goroutines);
// this spends about a third of that — CPU the gateway gets instead.
type rawPoster struct {
	addr, host, path, token string
	c                       net.Conn
	br                      *bufio.Reader
	buf                     []byte
}

func (p *rawPoster) post(key string, body []byte, trace string) (int, error) {
	if p.c == nil {
		c, err := net.DialTimeout("tcp", p.addr, benchRequestTimeout)
		if err != nil {
			return 0, err
		}
		p.c, p.br = c, bufio.NewReaderSize(c, 16<<10)
	}
	b := append(p.buf[:0], "POST "...)
	b = append(b, p.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, p.host...)
	b = append(b, "\r\nAuthorization: Bearer "...)
	b = append(b, p.token...)
	b = append(b, "\r\nContent-Type: application/json\r\nIdempotency-Key: "...)
	b = append(b, key...)
	b = append(b, "\r\nX-Trace-Id: "...)
	b = append(b, trace...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	p.buf = b
	p.c.SetDeadline(time.Now().Add(benchRequestTimeout))
	if _, err := p.c.Write(b); err != nil {
		p.close()
		return 0, err
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		p.close()
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		p.close()
	}
	return resp.StatusCode, err
}

func (p *rawPoster) close() {
	if p.c != nil {
		p.c.Close()
		p.c, p.br = nil, nil
	}
}

// clientPoster is net/http's client, for https:// gateways.
type clientPoster struct {
	ctx        context.Context
	client     *http.Client
	url, token string
}

func (p *clientPoster) post(key string, body []byte, trace string) (int, error) {
	req, err := http.NewRequestWithContext(p.ctx, "POST", p.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("X-Trace-Id", trace)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

func (p *clientPoster) close() {}

// benchHTTPCalls is benchCalls over HTTP: an error is any answer other
// than the mix's (new → 201, replay → 200 replayed, conflict → 422).
func benchHTTPCalls(ctx context.Context, u *url.URL, base, token string, rep *benchReport, rounds int, bare, floor benchBare) error {
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	client := &http.Client{Timeout: benchRequestTimeout, Transport: &http.Transport{
		MaxIdleConns: rep.Workers * 2, MaxIdleConnsPerHost: rep.Workers * 2, IdleConnTimeout: time.Minute}}
	newPoster := func() benchPoster {
		if u.Scheme == "http" {
			addr := u.Host
			if u.Port() == "" {
				addr = net.JoinHostPort(u.Hostname(), "80")
			}
			return &rawPoster{addr: addr, host: u.Host, path: strings.TrimRight(u.EscapedPath(), "/") + "/v1/tools/create_support_task", token: token}
		}
		return &clientPoster{ctx: ctx, client: client, url: base + "/v1/tools/create_support_task", token: token}
	}
	if err := benchProbe(ctx, client, base, token); err != nil {
		return err
	}
	pool := min(rep.Ops, 1000)
	if rep.Mix != "new" {
		setup := newPoster()
		defer setup.close()
		for i := 0; i < pool; i++ {
			if code, err := setup.post(fmt.Sprintf("hbench-%s-%d", run, i), benchArgs(defaultBenchArgs, i, false), "setup"); err != nil || code != http.StatusCreated {
				return model.Errorf(model.CodeInternal, "bench setup: %d %v (is the token right? is the gateway up?)", code, err)
			}
		}
	}
	// The pool's keys and bodies are made once, before the clock starts:
	// the load generator shares the cores with the gateway it measures.
	var poolKeys []string
	var poolBodies [][]byte
	if rep.Mix != "new" {
		for j := 0; j < pool; j++ {
			poolKeys = append(poolKeys, fmt.Sprintf("hbench-%s-%d", run, j))
			poolBodies = append(poolBodies, benchArgs(defaultBenchArgs, j, rep.Mix == "conflict"))
		}
	}
	want := map[string]int{"new": http.StatusCreated, "replay": http.StatusOK, "conflict": http.StatusUnprocessableEntity}[rep.Mix]
	lat := make([]time.Duration, rep.Ops)
	var (
		errs     atomic.Int64
		firstErr atomic.Value
	)
	// Each client keeps its connection across rounds.
	posters := make([]benchPoster, rep.Workers)
	for w := range posters {
		posters[w] = newPoster()
		defer posters[w].close()
	}
	timed := func(from, to int) (time.Duration, error) {
		return timeWorkers(ctx, rep.Workers, from, to, func(w, i int) {
			p := posters[w]
			var key string
			var body []byte
			if rep.Mix == "new" {
				key, body = fmt.Sprintf("hbench-%s-new-%d", run, i), benchArgs(defaultBenchArgs, i, false)
			} else {
				key, body = poolKeys[i%pool], poolBodies[i%pool]
			}
			t0 := time.Now()
			code, err := p.post(key, body, "bench-"+strconv.Itoa(i))
			lat[i] = time.Since(t0)
			if err != nil || code != want {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, fmt.Sprintf("%s: HTTP %d %v", key, code, err))
			}
		})
	}
	return rep.runRounds(rounds, timed, bare, floor, lat, &errs, &firstErr)
}

// benchProbe asks the gateway, before any clock starts, for one of the
// token's receipts (nothing written): a gateway that is down, or one that
// refuses the token, is said so at once, instead of after every call of
// the run has failed and the bare rounds have been timed for nothing.
func benchProbe(ctx context.Context, client *http.Client, base, token string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/operations?limit=1", nil)
	if err != nil {
		return model.Errorf(model.CodeInvalid, "--http %s: %v", base, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return model.Errorf(model.CodeUnavailable, "bench: no gateway answers at %s: %v (is retrysafe serve running there?)", base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var problem struct{ Title, Detail string }
	what := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &problem) == nil && problem.Title != "" {
		what = problem.Title
		if problem.Detail != "" {
			what += ": " + problem.Detail
		}
	}
	hint := ""
	if resp.StatusCode == http.StatusUnauthorized {
		hint = " (make one for this gateway's ledger: retrysafe tokens create --db LEDGER --tenant bench)"
	}
	return model.Errorf(model.CodeInvalid, "bench: the gateway at %s answered HTTP %d to a read with this token, so nothing was run: %s%s",
		base, resp.StatusCode, textsafe.Visible(what), hint)
}
