package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// BenchmarkTriage5000 measures a triage run over 5,000 unknown operations
// against the in-process sandbox provider (half of them hold a delivery),
// at the rate limit given by RETRYSAFE_TRIAGE_RATE (default 250 lookups a
// second: the run cannot take less than 20 s) with 16 lookups at once:
//
//	go test ./reconcile -run '^$' -bench Triage5000 -benchtime 1x
//
// RETRYSAFE_TRIAGE_RATE=100000 shows what the ledger and the provider
// cost without the limit.
func BenchmarkTriage5000(b *testing.B) {
	rate := 250.0
	if v := os.Getenv("RETRYSAFE_TRIAGE_RATE"); v != "" {
		var err error
		if rate, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatal(err)
		}
	}
	const n = 5000
	l := newLedger(b, fast())
	setup := time.Now()
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				f := provider.Faults{LoseReply: true}
				svc := *l.svc
				if i%2 == 1 {
					// No delivery: the provider is slower than the caller waits.
					f = provider.Faults{Delay: time.Second}
					svc.DispatchTimeout = 5 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res, err := svc.Call(ctx, notify(fmt.Sprintf("t%d", i%20), fmt.Sprintf("k%d", i), "a@example.com"), reconcile.CallOptions{Faults: f})
				cancel()
				if res.Class != model.ClassUnknown {
					b.Errorf("setup call %d: %+v %v", i, res, err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	b.Logf("setup: %d unknown operations in %v", n, time.Since(setup).Round(time.Millisecond))
	b.ResetTimer()
	for b.Loop() {
		rep, err := l.svc.Triage(context.Background(), reconcile.TriageOptions{Concurrency: 16, Rate: rate, By: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		t := rep.Totals()
		if rep.Candidates != n || t.HasIt != n/2 || t.HasNothing != n/2 || t.CannotTell+t.Errors != 0 {
			b.Fatalf("report %+v %+v", rep, t)
		}
		b.ReportMetric(rep.Elapsed.Seconds(), "s/run")
		b.ReportMetric(float64(n)/rep.Elapsed.Seconds(), "lookups/s")
	}
}
