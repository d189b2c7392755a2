package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A dispatch is over when its claim's lease is: past it, a sweep has made
// the operation unknown, a lookup finds nothing, an operator marks it not
// applied and the next call sends it — and a request the first worker
// still had on its way (a slow provider, a slow network, a worker paused
// between its claim and its request) must not reach the provider after
// that. The dispatch used to wait its own timeout (10 s by default),
// whatever the lease (`--lease 100ms` was taken), and the provider took
// the first request too: two deliveries of one operation.
func TestADispatchDoesNotOutliveItsClaimsLease(t *testing.T) {
	l := newLedger(t, withClock(testledger.NewClock(time.Now())))
	l.svc.Lease = 300 * time.Millisecond
	req := model.Request{Tenant: "acme", Key: "k", Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":"cfo@acme.example","body":"invoice"}`)}
	claimed := make(chan struct{})
	l.svc.At = func(p reconcile.Point) {
		if p == reconcile.PointAfterClaim {
			close(claimed)
		}
	}
	first := make(chan reconcile.Result, 1)
	go func() {
		res, _ := l.svc.Call(context.Background(), req, reconcile.CallOptions{Faults: provider.Faults{Delay: 3 * time.Second}})
		first <- res
	}()
	<-claimed
	l.svc.At = nil
	// The lease ends; the sweep, the lookup, the decision and the retry
	// all happen while the first request is on its way.
	l.clock.Advance(time.Second)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	op, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "oncall")
	if err != nil {
		t.Fatal(err)
	}
	if op.State == model.StateUnknown {
		// Within the grace after the request's wait a lookup cannot
		// tell (the provider may still be processing it); after it, it
		// finds nothing.
		// Unless the first worker found its lease ended before its
		// request could leave (a loaded machine: the clock moved on
		// first) and recorded that nothing was sent: then nothing can
		// still arrive, and "has nothing" is the truth.
		if looked.Finding.Kind != model.FindingCannotTell && !firstNotSent(l.detail("acme", "k")) {
			t.Fatalf("lookup within the grace: %s; want cannot tell", looked.Finding.Kind)
		}
		l.clock.Advance(l.svc.Lease + l.svc.DispatchGrace("sandbox"))
		if _, looked, err = l.svc.CheckAndRecord(context.Background(), "acme", "k", "oncall"); err != nil {
			t.Fatal(err)
		}
		if looked.Finding.Kind != model.FindingHasNothing {
			t.Fatalf("lookup before any delivery: %s", looked.Finding.Kind)
		}
		d := decision(l.op("acme", "k"))
		d.Evidence, d.Finding = "", &looked.Evidence
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassDone {
		t.Fatalf("the retry after \"not applied\": %s (%s)", res.Class, res.Message)
	}
	res := <-first
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries of one operation (the first worker was told %s: %s); want 1", n, res.Class, res.Message)
	}
	l.audit()
}

// A sweep sends its re-dispatches one after another; one whose lease
// ended before its turn sends nothing, and its claim, to a provider that
// honours downstream keys, is released — the next sweep (or call) sends
// it — not settled as not_applied, which no sweep picks up.
func TestASweepsClaimWhoseLeaseEndedBeforeItsTurnIsReleased(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		for i := 0; i < 3; i++ {
			p, err := config.Default().Tools.Prepare(notify("acme", fmt.Sprintf("k%d", i), "ops@example.com"))
			if err != nil {
				return err
			}
			if _, err := l.svc.ClaimTx(tx, p, "sandbox-idem", 0, l.st.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	// Each re-dispatch takes longer than a lease.
	l.svc.At = func(p reconcile.Point) {
		if p == reconcile.PointAfterDispatch {
			clk.Advance(l.svc.Lease + time.Second)
		}
	}
	rep, err := l.svc.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.svc.At = nil
	states := map[model.State]int{}
	for i := 0; i < 3; i++ {
		states[l.op("acme", fmt.Sprintf("k%d", i)).State]++
	}
	if states[model.StateApplied] != 1 || states[model.StateInProgress] != 2 {
		t.Fatalf("after a sweep whose re-dispatches outlast their leases (%+v): %v; want 1 applied, 2 in_progress", rep, states)
	}
	clk.Advance(time.Millisecond) // a released claim's lease ends when it was released
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		key := fmt.Sprintf("k%d", i)
		if op := l.op("acme", key); op.State != model.StateApplied {
			t.Errorf("%s after the next sweep: %s", key, op.State)
		}
		if n := l.deliveries("acme", key); n != 1 {
			t.Errorf("%s: %d deliveries", key, n)
		}
	}
	l.audit()
}

// firstNotSent: d's first attempt recorded that its request never left.
func firstNotSent(d *model.Detail) bool {
	return len(d.Attempts) > 0 && strings.HasPrefix(d.Attempts[0].Error, "not sent:")
}
