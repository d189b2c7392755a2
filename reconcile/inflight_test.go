package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A lookup made while a claim is live — the operation in_progress, its
// lease held, the request perhaps still on its way to the provider — used
// to record "has nothing" like any other. The request then arrived, its
// reply was lost (unknown), and that "has nothing" was the operation's
// fresh, conclusive finding (its number after the claim's attempt): the
// evidence for "not applied" with no look first, a bulk review proposed
// it, `--finding has-nothing` selected it, and the next call sent the
// e-mail a second time. Such a lookup is "cannot tell", and says why.
func TestALookupDuringALiveClaimIsNeverHasNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// look is made while the claim is live (after it, before the
		// request leaves).
		look func(t *testing.T, l *ledger) (reconcile.Looked, error)
	}{
		{"ops check (CheckAndRecord)", func(t *testing.T, l *ledger) (reconcile.Looked, error) {
			_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "ops check by bob")
			return looked, err
		}},
		{"a lookup of the operation as listed (triage, look-first)", func(t *testing.T, l *ledger) (reconcile.Looked, error) {
			return l.svc.Look(context.Background(), l.op("acme", "k"), "triage by bob")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				l := mk(newClock())
				ctx := context.Background()
				var (
					looked   reconcile.Looked
					lookErr  error
					checkErr error
				)
				l.svc.At = func(p reconcile.Point) {
					if p != reconcile.PointAfterClaim {
						return
					}
					l.svc.At = nil
					if op := l.op("acme", "k"); op.State != model.StateInProgress {
						t.Fatalf("set-up: %s; want in_progress", op.State)
					}
					_, _, checkErr = l.svc.Check(ctx, "acme", "k")
					looked, lookErr = tc.look(t, l)
				}
				l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
				if lookErr != nil {
					t.Fatal(lookErr)
				}
				if checkErr == nil || !strings.Contains(checkErr.Error(), "on its way") {
					t.Errorf("Service.Check during the claim: %v; want cannot tell, a request may be on its way", checkErr)
				}
				if looked.Finding.Kind != model.FindingCannotTell || !looked.InFlight || looked.Err == nil ||
					!strings.Contains(looked.Err.Error(), "on its way") || !strings.Contains(looked.Finding.Detail, "on its way") {
					t.Fatalf("lookup during the claim: %+v in_flight=%v err=%v; want cannot tell, saying a request may be on its way",
						looked.Finding, looked.InFlight, looked.Err)
				}
				if l.deliveries("acme", "k") != 1 {
					t.Fatalf("set-up: %d deliveries; want 1 (reply lost)", l.deliveries("acme", "k"))
				}
				op := l.op("acme", "k")
				if op.State != model.StateUnknown {
					t.Fatalf("set-up: %s; want unknown", op.State)
				}
				if op.Finding == nil || op.Finding.Conclusive() || op.Binding().Conclusive() {
					t.Fatalf("finding after the claim: %+v; want not conclusive", op.Finding)
				}
				if !l.svc.NeedsLook(model.ActionMarkNotApplied, *op) {
					t.Error("NeedsLook: false; a 'not applied' must ask the provider first")
				}
				if against, _ := reconcile.AgainstFinding(model.ActionMarkApplied, *op); against {
					t.Error("AgainstFinding(mark applied): true; the in-flight lookup is no finding")
				}
				l.svc.AuthoritativeLookups = map[string]bool{op.Provider: true}
				if r := l.svc.ReviewByFinding([]model.Operation{*op}); len(r.NotApplied) != 0 || len(r.Left) != 1 {
					t.Errorf("review: %+v; want it left for a person", r)
				}
				ops, err := l.st.List(ctx, store.ListQuery{Finding: model.FilterHasNothing, Limit: 100})
				if err != nil || len(ops) != 0 {
					t.Errorf("--finding has-nothing: %d operations (%v); want none", len(ops), err)
				}
				// "Not applied" on no typed evidence: the in-flight lookup
				// is none.
				d := decision(op)
				d.Evidence, d.Finding = "", reconcile.EvidenceOf(op.Finding)
				if err := l.decide(model.ActionMarkNotApplied, d); err == nil {
					t.Fatal("not applied on the in-flight lookup alone was written")
				}
				// The look-first asks again, and finds the delivery.
				out, err := l.svc.LookFirst(ctx, model.ActionMarkNotApplied, []model.Operation{*op}, "ops resolve by bob")
				if err != nil || out[0].Finding.Kind != model.FindingHasIt {
					t.Fatalf("look-first: %+v %v; want has it", out[0].Finding, err)
				}
			})
		})
	}
}

// A lookup of an in_progress operation whose lease has ended (the worker
// gone, no sweep yet) is what triage asks: no request of it can still
// leave, and once the grace after the lease end has passed (a request
// that left may still be processed by the provider until then) its "has
// nothing" stays a finding.
func TestALookupAfterTheLeaseEndedIsAFinding(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		l.svc.At = func(p reconcile.Point) {
			if p != reconcile.PointAfterClaim {
				return
			}
			l.svc.At = nil
			clk.Advance(reconcile.DefaultLease + reconcile.DefaultDispatchGrace + 1)
			_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "ops check by bob")
			if err != nil || looked.InFlight || looked.Finding.Kind != model.FindingHasNothing {
				t.Errorf("lookup past the lease: %+v in_flight=%v %v; want has nothing", looked.Finding, looked.InFlight, err)
			}
		}
		l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
	})
}
