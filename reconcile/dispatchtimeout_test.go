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
// service's default dispatch timeout (it was cut to 10 s whatever the
// provider's timeout). A real slow server, a real SQLite ledger; a sweep
// that comes round while the request is in flight, within the claim's
// lease, leaves the claim alone.
func TestADispatchWaitsForTheProvidersTimeoutUnderItsLease(t *testing.T) {
	l := newLedger(t)
	var svc *reconcile.Service
	var mu sync.Mutex
	deliveries, swept := 0, reconcile.SweepReport{}
	var sweepErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(1200 * time.Millisecond) // past the service's dispatch timeout
		rep, err := svc.Sweep(context.Background())
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		deliveries++
		swept, sweepErr = rep, err
		mu.Unlock()
		io.WriteString(w, `{"id":"ch_1"}`)
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "sandbox", Timeout: 3 * time.Second,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", RefPointer: "/id"}})
	if err != nil {
		t.Fatal(err)
	}
	svc = reconcile.New(l.st, config.Default().Tools, provider.Registry{"sandbox": p})
	svc.DispatchTimeout = 500 * time.Millisecond // the default, for a provider naming none
	svc.Lease = 4 * time.Second

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

// A lease shorter than the provider's timeout still ends the wait (a
// sweep may make the operation unknown past it, and the next call send it
// again), and the error says the lease cut it, not the provider's timeout.
func TestADispatchCutByTheLeaseSaysSo(t *testing.T) {
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
	p, err := httpapi.New(httpapi.Config{Name: "sandbox", Timeout: 3 * time.Second,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := reconcile.New(l.st, config.Default().Tools, provider.Registry{"sandbox": p})
	svc.Lease = 600 * time.Millisecond
	start := time.Now()
	res, _ := svc.Call(context.Background(), notify("acme", "slow-3", "a@example.com"), reconcile.CallOptions{})
	took := time.Since(start)
	if res.Class != model.ClassUnknown || took > 2*time.Second ||
		!strings.Contains(res.Message, "waited only until the claim's lease ended") || !strings.Contains(res.Message, "shorter than provider sandbox's timeout (3s)") {
		t.Errorf("after %v: %+v; want unknown at the lease's end, saying the lease cut the wait", took, res)
	}
}
