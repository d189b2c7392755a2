package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A provider may still apply a request after the client stopped waiting
// for it: within the grace after the latest request (DispatchGrace), "not
// applied" — and a new key, which asks the provider first — is how the
// request gets sent a second time. Both are refused in the decision's
// own transaction, naming the key, when the request was sent and when
// one may decide; nothing is written. Decision.WithinGrace is the
// explicit override; "applied" sends nothing again and is not held.
func TestADecisionWithinTheGraceAfterTheLatestRequestIsRefused(t *testing.T) {
	// The claim recorded that its provider may apply a request until its
	// lease end plus its config's grace (a worker may send as late as just
	// before the lease ends): a decision's grace, like a lookup's, ends no
	// sooner.
	pastApplyBy := reconcile.DefaultLease + reconcile.DefaultDispatchGrace + time.Second
	for _, tc := range []struct {
		name        string
		action      model.Action
		after       time.Duration // the clock moves this far past the timeout
		withinGrace bool          // Decision.WithinGrace
		noGrace     bool          // Service.Grace < 0: the grace is off
		refused     bool
	}{
		{"not applied right after the timeout", model.ActionMarkNotApplied, time.Second, false, false, true},
		{"not applied just before the grace ends", model.ActionMarkNotApplied, reconcile.DefaultDispatchGrace - time.Second, false, false, true},
		{"a new key right after the timeout", model.ActionAuthorizeKey, time.Second, false, false, true},
		{"applied right after the timeout", model.ActionMarkApplied, time.Second, false, false, false},
		{"not applied after the grace", model.ActionMarkNotApplied, pastApplyBy, false, false, false},
		{"a new key after the grace", model.ActionAuthorizeKey, pastApplyBy, false, false, false},
		{"not applied within it, overridden", model.ActionMarkNotApplied, time.Second, true, false, false},
		{"a new key within it, overridden", model.ActionAuthorizeKey, time.Second, true, false, false},
		{"not applied with the grace off", model.ActionMarkNotApplied, time.Second, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				clk := newClock()
				l := mk(clk)
				if tc.noGrace {
					l.svc.Grace = -1
				}
				l.svc.DispatchTimeout = 20 * time.Millisecond
				sent := clk.Now()
				res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}})
				if res.Op == nil || res.Op.State != model.StateUnknown {
					t.Fatalf("set-up: %s (%s); want unknown", res.Class, res.Message)
				}
				clk.Advance(tc.after)
				before := l.op("acme", "k")
				d := decision(before)
				d.WithinGrace = tc.withinGrace // decision() overrides it
				err := l.decide(tc.action, d)
				after := l.detail("acme", "k")
				if !tc.refused {
					if err != nil {
						t.Fatalf("%s: %v; want it written", tc.action.Verb(), err)
					}
					if after.Operation.State == model.StateUnknown || len(after.Decisions) != 1 {
						t.Fatalf("%s: %s with %d decisions; want it decided", tc.action.Verb(), after.Operation.State, len(after.Decisions))
					}
					return
				}
				if err == nil {
					t.Fatalf("%s within the grace: written; want refused", tc.action.Verb())
				}
				if !model.IsCode(err, model.CodeIllegal) || !errors.Is(err, reconcile.ErrWithinGrace) {
					t.Fatalf("refusal %v (code %s); want illegal, within the grace", err, model.CodeOf(err))
				}
				var gr *reconcile.GraceRefusal
				if !errors.As(err, &gr) || gr.Until.IsZero() || gr.Sent.UTC().Format(time.RFC3339) != sent.UTC().Format(time.RFC3339) {
					t.Fatalf("refusal %#v; want the request's time (%s) and when to decide", gr, sent)
				}
				until := gr.Until.UTC().Format(time.RFC3339)
				for _, want := range []string{"acme/k", "sent at " + sent.UTC().Format(time.RFC3339), "decide after " + until + " (UTC)", "nothing was written", "--within-grace"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not say %q", err, want)
					}
				}
				if after.Operation.Version != before.Version || after.Operation.State != model.StateUnknown || len(after.Decisions) != 0 {
					t.Fatalf("after the refusal: %s v%d, %d decisions; want nothing written", after.Operation.State, after.Operation.Version, len(after.Decisions))
				}
				if ops, err := l.st.List(context.Background(), storeAll()); err != nil || len(ops) != 1 {
					t.Fatalf("%d operations (%v) after the refusal; want no new key", len(ops), err)
				}
				// Once the grace is over the same decision is written.
				clk.Advance(gr.Until.Sub(clk.Now()) + time.Millisecond)
				d = decision(l.op("acme", "k"))
				d.WithinGrace = false
				if err := l.decide(tc.action, d); err != nil {
					t.Fatalf("%s after the grace: %v", tc.action.Verb(), err)
				}
			})
		})
	}
}

// A bulk decision skips the rows within the grace — each with its reason
// — and writes the others; the rows' own compare-and-sets are unchanged.
func TestDecideManySkipsTheRowsWithinTheGrace(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		l.svc.DispatchTimeout = 20 * time.Millisecond
		slow := reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}}
		if res := l.call(notify("acme", "old", "a@example.com"), slow); res.Class != model.ClassUnknown {
			t.Fatalf("set-up: %s", res.Class)
		}
		clk.Advance(reconcile.DefaultDispatchGrace + time.Minute)
		if res := l.call(notify("acme", "new", "b@example.com"), slow); res.Class != model.ClassUnknown {
			t.Fatalf("set-up: %s", res.Class)
		}
		clk.Advance(time.Second)
		targets := []reconcile.Target{reconcile.TargetOf(*l.op("acme", "new")), reconcile.TargetOf(*l.op("acme", "old"))}
		d := reconcile.Decision{Operator: "oncall", Reason: "INC-7", Evidence: "provider console shows nothing"}
		for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionAuthorizeKey} {
			if action == model.ActionAuthorizeKey {
				targets = targets[:1]
			}
			out, err := l.svc.DecideMany(context.Background(), action, d, targets)
			if err != nil {
				t.Fatal(err)
			}
			if out[0].Verdict != reconcile.VerdictSkipped || !errors.Is(out[0].Err, reconcile.ErrWithinGrace) ||
				!strings.Contains(out[0].Err.Error(), "decide after") {
				t.Fatalf("%s: the row within the grace: %s %v; want skipped, saying when to decide", action.Verb(), out[0].Verdict, out[0].Err)
			}
			if action == model.ActionMarkNotApplied && out[1].Verdict != reconcile.VerdictWritten {
				t.Fatalf("the row after the grace: %s %v; want written", out[1].Verdict, out[1].Err)
			}
		}
		if op := l.op("acme", "new"); op.State != model.StateUnknown {
			t.Fatalf("the row within the grace is %s; want unknown (nothing written)", op.State)
		}
		d.WithinGrace = true
		out, err := l.svc.DecideMany(context.Background(), model.ActionMarkNotApplied, d, targets[:1])
		if err != nil || out[0].Verdict != reconcile.VerdictWritten {
			t.Fatalf("overridden: %+v %v; want written", out, err)
		}
	})
}

// A request answered definitely (rejected: failed) leaves no grace: a new
// key for a failed operation is authorized at once.
func TestANewKeyAfterADefiniteAnswerHasNoGrace(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		if res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Reject: true}}); res.Class != model.ClassFailed {
			t.Fatalf("set-up: %s", res.Class)
		}
		if err := l.decide(model.ActionAuthorizeKey, decision(l.op("acme", "k"))); err != nil {
			t.Fatalf("a new key for a rejected request: %v; want authorized", err)
		}
	})
}
