package reconcile_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An HTTP provider's configured timeout is how long a dispatch waits for
// it (the README: "per request, connection to last byte"), not the
// service's default dispatch timeout — and the claim's lease covers it:
// a sweep that comes round while the request is in flight, after the
// service's own lease, finds the claim still held and leaves it alone.
// A real slow server, a real SQLite ledger; the provider does not honour
// keys, so an expired lease would be unknown and a second request a
// second effect.
func TestADispatchWaitsForTheProvidersTimeoutUnderItsLease(t *testing.T) {
	l := newLedger(t)
	var svc *reconcile.Service
	var mu sync.Mutex
	deliveries, swept := 0, reconcile.SweepReport{}
	var sweepErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(1200 * time.Millisecond) // past the service's lease (1 s) and dispatch timeout
		rep, err := svc.Sweep(context.Background())
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		deliveries++
		swept, sweepErr = rep, err
		mu.Unlock()
		io.WriteString(w, `{"id":"ch_1"}`)
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "sandbox", Timeout: 4 * time.Second,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", RefPointer: "/id"}})
	if err != nil {
		t.Fatal(err)
	}
	svc = reconcile.New(l.st, config.Default().Tools, provider.Registry{"sandbox": p})
	svc.DispatchTimeout = 500 * time.Millisecond // the default, for a provider naming none
	svc.Lease = time.Second

	start := time.Now()
	res, err := svc.Call(context.Background(), notify("acme", "slow-1", "a@example.com"), reconcile.CallOptions{})
	took := time.Since(start)
	if err != nil || res.Class != model.ClassDone || res.Receipt == nil || res.Receipt.ProviderRef != "ch_1" {
		t.Fatalf("after %v: %+v, %v; want created, ch_1", took, res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if deliveries != 1 || sweepErr != nil || swept.Unknown != 0 || swept.Redispatched != 0 {
		t.Errorf("deliveries %d, sweep in flight %+v %v; want one delivery and the claim left alone", deliveries, swept, sweepErr)
	}
	d := l.detail("acme", "slow-1")
	if d.Operation.State != model.StateApplied {
		t.Errorf("state %s; want applied", d.Operation.State)
	}
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeLeaseExpired || a.Outcome == model.OutcomeLateResult {
			t.Errorf("attempt %s: %s", a.Outcome, a.Error)
		}
	}
}

// A provider slower than its own timeout: the dispatch gives up at that
// timeout (not the service's default), and says so.
func TestADispatchGivesUpAtTheProvidersTimeout(t *testing.T) {
	l := newLedger(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	p, err := httpapi.New(httpapi.Config{Name: "sandbox", Timeout: 1200 * time.Millisecond,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := reconcile.New(l.st, config.Default().Tools, provider.Registry{"sandbox": p})
	svc.DispatchTimeout = 200 * time.Millisecond
	start := time.Now()
	res, _ := svc.Call(context.Background(), notify("acme", "slow-2", "a@example.com"), reconcile.CallOptions{})
	took := time.Since(start)
	if res.Class != model.ClassUnknown || !strings.Contains(res.Message, "no answer within the timeout") || took < 1100*time.Millisecond || took > 4*time.Second {
		t.Errorf("after %v: %+v; want unknown after the provider's 1.2 s", took, res)
	}
}

// A claim on a provider with a long timeout is held for that timeout (and
// a margin), longer than the service's lease; a worker that died after
// such a claim may have had its request waited for until the claim's end.
// After the sweep makes it unknown, a lookup that finds nothing within the
// grace after that end is "cannot tell" — not "has nothing" counted from
// the service's shorter lease.
func TestTheGraceAfterASweptClaimCountsTheProvidersLongerLease(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "sandbox", Timeout: 60 * time.Second,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"}, Lookup: &httpapi.Endpoint{URL: srv.URL + "/d/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := reconcile.New(l.st, config.Default().Tools, provider.Registry{"sandbox": p})
	svc.Lease, svc.Grace = time.Second, 0
	// The worker claims (as Call would: the provider's 60 s and a margin)
	// and dies before its request's answer is recorded.
	svc.At = func(pt reconcile.Point) {
		if pt == reconcile.PointAfterClaim {
			panic("worker dies")
		}
	}
	func() {
		defer func() { recover() }()
		svc.Call(context.Background(), notify("acme", "died", "a@example.com"), reconcile.CallOptions{})
	}()
	svc.At = nil
	op := l.op("acme", "died")
	if op.State != model.StateInProgress || op.LeaseUntil.Sub(clk.Now()) < 60*time.Second {
		t.Fatalf("claim: %s, lease until %v (now %v); want in_progress for the provider's 60 s and more", op.State, op.LeaseUntil, clk.Now())
	}
	clk.Advance(op.LeaseUntil.Sub(clk.Now()) + time.Second)
	if rep, err := svc.Sweep(context.Background()); err != nil || rep.Unknown != 1 {
		t.Fatalf("sweep: %+v %v", rep, err)
	}
	_, looked, err := svc.CheckAndRecord(context.Background(), "acme", "died", "oncall")
	if err != nil {
		t.Fatal(err)
	}
	if looked.Finding.Kind != model.FindingCannotTell {
		t.Errorf("lookup 1 s after the claim's end: %s (%s); want cannot tell — the request may still be processed", looked.Finding.Kind, looked.Finding.Detail)
	}
}
