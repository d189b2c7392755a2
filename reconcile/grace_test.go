package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The client stops waiting for a request at its claim's lease end; the
// provider does not stop processing it. A lookup right after the lease
// used to find nothing and record "has nothing" — the evidence for "not
// applied" — while the provider was still working on the request: the
// next call sent it again and the first landed too, two deliveries. A
// lookup that finds nothing within the grace after the latest request's
// wait ended is "cannot tell", saying when to ask again; after the grace
// it is a finding.
func TestALookupWithinTheGraceAfterADispatchIsNeverHasNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setUp leaves acme/k with a request sent and nothing at the
		// provider, the clock just past the claim's lease end.
		setUp func(t *testing.T, l *ledger, clk *clock)
	}{
		{"the request timed out (unknown)", func(t *testing.T, l *ledger, clk *clock) {
			l.svc.DispatchTimeout = 20 * time.Millisecond
			res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}})
			if res.Op == nil || res.Op.State != model.StateUnknown {
				t.Fatalf("set-up: %s (%s); want unknown", res.Class, res.Message)
			}
			clk.Advance(l.svc.Lease + time.Second)
		}},
		{"the lease ended with the claim in_progress (no sweep yet)", func(t *testing.T, l *ledger, clk *clock) {
			if died, _ := l.callDying(notify("acme", "k", "a@example.com"), reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
				t.Fatal("set-up: the call did not stop after its claim")
			}
			if op := l.op("acme", "k"); op.State != model.StateInProgress {
				t.Fatalf("set-up: %s; want in_progress", op.State)
			}
			clk.Advance(l.svc.Lease + time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				clk := newClock()
				l := mk(clk)
				l.svc.Lease = 2 * time.Second
				tc.setUp(t, l, clk)
				ctx := context.Background()
				_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob")
				if err != nil {
					t.Fatal(err)
				}
				if looked.Finding.Kind != model.FindingCannotTell || !looked.InFlight || looked.Err == nil ||
					!strings.Contains(looked.Err.Error(), "ask again after") {
					t.Fatalf("lookup within the grace: %+v in_flight=%v err=%v; want cannot tell, saying when to ask again",
						looked.Finding, looked.InFlight, looked.Err)
				}
				if op := l.op("acme", "k"); op.Binding().Conclusive() {
					t.Fatalf("finding within the grace: %+v; want no evidence", op.Finding)
				}
				looked, err = l.svc.Look(ctx, l.op("acme", "k"), "triage by bob")
				if err != nil || looked.Finding.Kind != model.FindingCannotTell {
					t.Fatalf("triage's lookup within the grace: %+v %v; want cannot tell", looked.Finding, err)
				}
				clk.Advance(reconcile.DefaultDispatchGrace)
				_, looked, err = l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob")
				if err != nil || looked.InFlight || looked.Finding.Kind != model.FindingHasNothing {
					t.Fatalf("lookup after the grace: %+v in_flight=%v %v; want has nothing", looked.Finding, looked.InFlight, err)
				}
			})
		})
	}
}
