package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
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
