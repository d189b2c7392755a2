package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A lookup that found another request under the key (has_other) refuses
// both marks, override or not, one by one and in bulk: "mark applied"
// would tell every caller an effect happened that was never asked for,
// and "not applied" sends the next call under the same downstream key —
// a provider that honours keys answers it with the other request's
// result, a wrong receipt for the caller. A new key is the way, and is
// never refused for it. It outranks every lookup before it: after "has
// it", "has another request" and a later "cannot tell", the old "has it"
// used to bind again (the refusal read only the latest lookup) and "mark
// applied" went through on it. A later lookup that said something (has
// nothing, has it) is what the key holds now.
func TestAnotherRequestUnderTheKeyRefusesBothMarks(t *testing.T) {
	cases := []struct {
		name     string
		findings []model.FindingKind
		refused  bool
		allowed  model.Action // when not refused: this decision goes through
	}{
		{"other", []model.FindingKind{model.FindingHasOther}, true, ""},
		{"it-other", []model.FindingKind{model.FindingHasIt, model.FindingHasOther}, true, ""},
		{"it-other-cannot", []model.FindingKind{model.FindingHasIt, model.FindingHasOther, model.FindingCannotTell}, true, ""},
		{"nothing-other-cannot", []model.FindingKind{model.FindingHasNothing, model.FindingHasOther, model.FindingCannotTell}, true, ""},
		{"it-other-retry", []model.FindingKind{model.FindingHasIt, model.FindingHasOther, ""}, true, ""},
		{"other-nothing", []model.FindingKind{model.FindingHasOther, model.FindingHasNothing}, false, model.ActionMarkNotApplied},
		{"other-it-cannot", []model.FindingKind{model.FindingHasOther, model.FindingHasIt, model.FindingCannotTell}, false, model.ActionMarkApplied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t, fast())
			l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
			ctx := context.Background()
			unknownWithDelivery(t, l, "k")
			recordHistory(t, l, "k", "sbx_9", c.findings)
			op := l.op("acme", "k")
			if got := reconcile.OtherRequestRefuses(model.ActionMarkNotApplied, *op); got != c.refused {
				t.Errorf("OtherRequestRefuses(not applied) %v; want %v (finding %+v, binding %+v)", got, c.refused, op.Finding, op.BindingFinding)
			}
			if got := reconcile.OtherRequestRefuses(model.ActionMarkApplied, *op); got != c.refused {
				t.Errorf("OtherRequestRefuses(applied) %v; want %v", got, c.refused)
			}
			if reconcile.OtherRequestRefuses(model.ActionAuthorizeKey, *op) {
				t.Error("OtherRequestRefuses(new key): true; a new key is always the way")
			}
			if !c.refused {
				d := reconcile.Decision{Tenant: "acme", Key: "k", Operator: "alice", Reason: "checked", Evidence: "ticket 1", WithinGrace: true}
				var err error
				if c.allowed == model.ActionMarkApplied {
					_, err = l.svc.MarkApplied(ctx, d)
				} else {
					_, err = l.svc.MarkNotApplied(ctx, d)
				}
				if err != nil {
					t.Fatalf("%s after a later lookup said more: %v", c.allowed, err)
				}
				return
			}
			r := l.svc.ReviewByFinding([]model.Operation{*op})
			if len(r.Apply) != 0 || len(r.NotApplied) != 0 || len(r.Recheck) != 0 {
				t.Errorf("review: %+v; want nothing proposed", r)
			}
			before := l.snapshot()
			for _, override := range []bool{false, true} {
				d := reconcile.Decision{Tenant: "acme", Key: "k", Operator: "alice", Reason: "checked", Evidence: "ticket 1", Override: override, WithinGrace: true}
				for _, action := range []model.Action{model.ActionMarkApplied, model.ActionMarkNotApplied} {
					var err error
					if action == model.ActionMarkApplied {
						_, err = l.svc.MarkApplied(ctx, d)
					} else {
						_, err = l.svc.MarkNotApplied(ctx, d)
					}
					if model.CodeOf(err) != model.CodeIllegal {
						t.Fatalf("%s (override %v): %v; want refused (illegal)", action, override, err)
					}
					for _, words := range []string{"different request", "authorize a new key", "nothing was written"} {
						if !strings.Contains(err.Error(), words) {
							t.Errorf("%s (override %v): %q does not say %q", action, override, err, words)
						}
					}
					if action == model.ActionMarkNotApplied && !strings.Contains(err.Error(), "cannot mark acme/k not applied") {
						t.Errorf("not applied refused with %q; want it to name the decision", err)
					}
					out, err := l.svc.DecideMany(ctx, action, d, []reconcile.Target{reconcile.TargetOf(*op)})
					if err != nil || len(out) != 1 || out[0].Verdict == reconcile.VerdictWritten {
						t.Fatalf("bulk %s (override %v): %+v %v; want not written", action, override, out, err)
					}
				}
			}
			if l.snapshot() != before {
				t.Fatal("a refused decision changed the ledger")
			}
			d := reconcile.Decision{Tenant: "acme", Key: "k", Operator: "alice", Reason: "send it under a new key", WithinGrace: true}
			if _, _, err := l.svc.AuthorizeNewKey(ctx, d); err != nil {
				t.Errorf("authorize a new key: %v", err)
			}
		})
	}
}
