package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A bulk "applied" with one typed --evidence: a row a "has it" binds gets
// that finding's reference in its receipt; a row with none keeps the typed
// text as its decision's evidence only — its receipt names no reference
// (several operations replaying one typed reference) — and a row's own
// per-target evidence (a review by finding) stays its reference.
func TestDecideManyTypedEvidenceIsNoRowsReference(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		ctx := context.Background()
		for _, k := range []string{"found", "plain", "own"} {
			l.call(notify("acme", k, k+"@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
		}
		_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "found", "ops check by bob")
		if err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check: %+v %v", looked.Finding, err)
		}
		clk.Advance(time.Second)
		var targets []reconcile.Target
		for _, k := range []string{"found", "plain", "own"} {
			tg := reconcile.TargetOf(*l.op("acme", k))
			if k == "own" {
				tg.Evidence = "OWN-REF"
			}
			targets = append(targets, tg)
		}
		d := reconcile.Decision{Operator: "alice", Reason: "provider console", Evidence: "TYPED-ONE"}
		out, err := l.svc.DecideMany(ctx, model.ActionMarkApplied, d, targets)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ key, ref, evidence string }{
			{"found", looked.Finding.Ref, "TYPED-ONE"}, {"plain", "", "TYPED-ONE"}, {"own", "OWN-REF", "OWN-REF"},
		} {
			det := l.detail("acme", c.key)
			var rc model.Receipt
			if err := json.Unmarshal(det.Operation.Receipt, &rc); err != nil {
				t.Fatal(err)
			}
			if det.Operation.ProviderRef != c.ref || rc.ProviderRef != c.ref {
				t.Errorf("%s: provider ref %q receipt %q, want %q (%+v)", c.key, det.Operation.ProviderRef, rc.ProviderRef, c.ref, out)
			}
			if len(det.Decisions) != 1 || det.Decisions[0].Evidence != c.evidence {
				t.Errorf("%s: decisions %+v, want evidence %q", c.key, det.Decisions, c.evidence)
			}
		}
	})
}
