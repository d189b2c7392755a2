package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operator marks an unknown operation not applied while the worker's
// dispatch is still in flight; the provider then answers "applied". The
// operation is flagged contradicted — and neither the late worker nor the
// next call may dispatch it again to a provider that ignores downstream
// keys: that would be a second delivery.
func TestContradictedNotAppliedIsNotDispatchedAgain(t *testing.T) {
	l, req := raceNotAppliedAgainstALateApplied(t)
	late := l.call(req, reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateNotApplied || !op.Contradicted {
		t.Fatalf("after the late result: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	if late.Class != model.ClassUnknown {
		t.Errorf("the late worker was told %s (%s); it must stop, not retry", late.Class, late.Message)
	}
	res := l.call(req, reconcile.CallOptions{})
	if res.Class != model.ClassUnknown {
		t.Errorf("a retry of the contradicted key got %s (%s); want unknown", res.Class, res.Message)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries for one operation; want 1", n)
	}
	// The decision stands; a person can still authorize a deliberate new key.
	d := decision(l.op("acme", "k"))
	d.NewKey = "k2"
	if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
		t.Fatal(err)
	}
}

// A contradicted not_applied — the operator said "not applied", then the
// provider's late answer said "applied" — can be marked applied: that agrees
// with the provider, settles the contradiction, and the next retry replays
// with no second effect. Without it the only way out was a new key, which
// would send the effect again.
func TestContradictedNotAppliedCanBeMarkedApplied(t *testing.T) {
	l, req := raceNotAppliedAgainstALateApplied(t)
	l.call(req, reconcile.CallOptions{})
	op := l.op("acme", "k")
	if op.State != model.StateNotApplied || !op.Contradicted {
		t.Fatalf("setup: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	if !reconcile.AllowedFor(*op, model.ActionMarkApplied) || reconcile.Allowed(op.State, model.ActionMarkApplied) {
		t.Fatal("mark applied must be legal for a contradicted not_applied, and only for a contradicted one")
	}
	d := decision(op)
	d.Evidence = "sbx_1"
	if err := l.decide(model.ActionMarkApplied, d); err != nil {
		t.Fatal(err)
	}
	if op := l.op("acme", "k"); op.State != model.StateApplied || op.Contradicted {
		t.Fatalf("after marking it applied: %s contradicted=%v; want applied, settled", op.State, op.Contradicted)
	}
	res := l.call(req, reconcile.CallOptions{})
	if res.Class != model.ClassDone || res.Receipt == nil || res.Receipt.Status != "replayed" {
		t.Fatalf("retry after the decision: %s %+v; want a replayed receipt", res.Class, res.Receipt)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries; want 1", n)
	}
}

// raceNotAppliedAgainstALateApplied returns a ledger and a notification
// request whose first call, once made, ends contradicted: while it is in
// flight its lease ends, a sweep makes it unknown and an operator marks it
// not applied; then the provider's answer "applied" arrives.
func raceNotAppliedAgainstALateApplied(t *testing.T) (*ledger, model.Request) {
	t.Helper()
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.svc.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterDispatch {
			return
		}
		l.svc.At = nil
		clk.Advance(reconcile.DefaultLease + time.Second)
		if _, err := l.svc.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		d := decision(l.op("acme", "k"))
		d.Evidence = "provider search showed nothing yet"
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
	}
	return l, notify("acme", "k", "a@example.com")
}
