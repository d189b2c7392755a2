package reconcile_test

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// unknownWithALateApplied is an operation a sweep made unknown while its
// worker was still waiting on the provider, which then answered
// "applied": the answer's reference is on the operation, which stays
// unknown for a person.
func unknownWithALateApplied(t *testing.T) *ledger {
	t.Helper()
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.atDispatchAfterSweep(t, clk, nil)
	l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateUnknown || op.ProviderRef == "" {
		t.Fatalf("set-up: %s, reference %q; want unknown with the late answer's reference", op.State, op.ProviderRef)
	}
	return l
}

// contradictedNotApplied is an operation a person marked not applied while
// its dispatch was in flight; the provider then answered "applied".
func contradictedNotApplied(t *testing.T) *ledger {
	t.Helper()
	l, req := raceNotAppliedAgainstALateApplied(t)
	l.call(req, reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateNotApplied || !op.Contradicted {
		t.Fatalf("set-up: %s, contradicted %v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	return l
}

// The provider's own late answer that it applied the call binds every
// path to a decision as a lookup's "has it" does — not only the console
// that shows it: "not applied", or a new key, against it needs the
// explicit second confirmation, or the next call sends the e-mail or
// payment a second time. Refused, nothing is written; confirmed, it is.
func TestALateAppliedAnswerBindsDecisionsAsAHasItDoes(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(*testing.T) *ledger
		action model.Action
		to     model.State
	}{
		{"unknown, then marked not applied", unknownWithALateApplied, model.ActionMarkNotApplied, model.StateNotApplied},
		{"unknown, then a new key", unknownWithALateApplied, model.ActionAuthorizeKey, model.StateSuperseded},
		{"contradicted not applied, then a new key", contradictedNotApplied, model.ActionAuthorizeKey, model.StateSuperseded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.setup(t)
			before := l.op("acme", "k")
			decisionsBefore := len(l.detail("acme", "k").Decisions)
			d := decision(before)
			d.Evidence = "the provider's search shows nothing"
			err := l.decide(c.action, d)
			after := l.detail("acme", "k")
			if !model.IsCode(err, model.CodeIllegal) || after.Operation.Version != before.Version || len(after.Decisions) != decisionsBefore {
				t.Fatalf("%s without the confirmation: %v, version %d → %d, decisions %d → %d; want refused, nothing written",
					c.action, err, before.Version, after.Operation.Version, decisionsBefore, len(after.Decisions))
			}
			d.Override = true
			if err := l.decide(c.action, d); err != nil {
				t.Fatalf("%s with the confirmation: %v", c.action, err)
			}
			if got := l.op("acme", "k").State; got != c.to {
				t.Errorf("confirmed %s: %s; want %s", c.action, got, c.to)
			}
		})
	}
	t.Run("unknown, then marked applied", func(t *testing.T) {
		l := unknownWithALateApplied(t)
		if err := l.decide(model.ActionMarkApplied, decision(l.op("acme", "k"))); err != nil {
			t.Errorf("mark applied, with the late answer: %v", err)
		}
	})
}
