package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operation recorded as applied — by a person's decision here, on
// evidence the provider does not bear out — that a later lookup (ops
// check, the console's c) finds nothing of was recorded and nothing
// more: its receipt went on reporting done an e-mail the provider never
// got, and nobody was told. The lookup contradicts the recorded outcome:
// the finding is recorded and the operation flagged contradicted — its
// state, receipt and reference stay as they were (nothing changes an
// applied outcome by itself). A lookup that finds the effect
// flags nothing, and neither does one of a new key marked applied on the
// key it replaced (never sent under its own downstream key, it can only
// have nothing there).
func TestALookupThatFindsNothingOfAnAppliedOperationFlagsIt(t *testing.T) {
	for _, c := range []struct {
		name string
		// setUp leaves an applied operation and returns its key.
		setUp   func(t *testing.T, l *ledger, clk *clock) string
		finding model.FindingKind
		flagged bool
	}{
		{"marked applied, the provider has nothing", func(t *testing.T, l *ledger, clk *clock) string {
			l.svc.DispatchTimeout = 20 * time.Millisecond
			res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}})
			if res.Op == nil || res.Op.State != model.StateUnknown || l.deliveries("acme", "k") != 0 {
				t.Fatalf("set-up: %s (%s), %d deliveries; want unknown, none", res.Class, res.Message, l.deliveries("acme", "k"))
			}
			clk.Advance(l.svc.Lease + reconcile.DefaultDispatchGrace + time.Second)
			if err := l.decide(model.ActionMarkApplied, decision(l.op("acme", "k"))); err != nil {
				t.Fatal(err)
			}
			return "k"
		}, model.FindingHasNothing, true},
		{"applied by the provider, which has it", func(t *testing.T, l *ledger, clk *clock) string {
			if res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{}); res.Op == nil || res.Op.State != model.StateApplied {
				t.Fatalf("set-up: %s (%s); want applied", res.Class, res.Message)
			}
			clk.Advance(time.Minute)
			return "k"
		}, model.FindingHasIt, false},
		{"a new key marked applied on the key it replaced", func(t *testing.T, l *ledger, clk *clock) string {
			k2 := l.op("acme", "k2")
			d := decision(k2)
			for _, a := range l.detail("acme", "k").Attempts {
				if a.Finding == model.FindingHasIt {
					d.Evidence = a.ProviderRef
				}
			}
			if err := l.decide(model.ActionMarkApplied, d); err != nil {
				t.Fatalf("mark k2 applied: %v", err)
			}
			clk.Advance(time.Minute)
			return "k2"
		}, model.FindingHasNothing, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				var l *ledger
				clk := newClock()
				if c.name == "a new key marked applied on the key it replaced" {
					l = supersededThenLateApplied(t, func(cl *clock) *ledger { clk = cl; return mk(cl) })
				} else {
					l = mk(clk)
					l.svc.Lease = 2 * time.Second
				}
				key := c.setUp(t, l, clk)
				before := l.op("acme", key)
				if before.State != model.StateApplied || before.Contradicted {
					t.Fatalf("set-up: %s contradicted=%v; want applied, not flagged", before.State, before.Contradicted)
				}
				_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", key, "ops check by bob")
				if err != nil || !looked.Recorded || looked.Finding.Kind != c.finding {
					t.Fatalf("check: %+v recorded=%v %v; want %s, recorded", looked.Finding, looked.Recorded, err, c.finding)
				}
				after := l.op("acme", key)
				if after.Contradicted != c.flagged {
					t.Errorf("after the lookup: contradicted=%v; want %v", after.Contradicted, c.flagged)
				}
				if after.State != model.StateApplied || string(after.Receipt) != string(before.Receipt) || after.ProviderRef != before.ProviderRef {
					t.Errorf("after the lookup: %s, receipt %s, ref %q; want applied with its receipt and reference unchanged", after.State, after.Receipt, after.ProviderRef)
				}
				if after.Finding == nil || after.Finding.Kind != c.finding {
					t.Errorf("recorded finding %+v; want %s", after.Finding, c.finding)
				}
				if c.flagged {
					if got := reconcile.LegalFor(*after); len(got) != 1 || got[0] != model.ActionAuthorizeKey {
						t.Errorf("decisions on it: %v; want only a deliberate new key", got)
					}
					// A replay still returns the receipt it recorded.
					if res := l.call(notify("acme", key, "a@example.com"), reconcile.CallOptions{}); res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed {
						t.Errorf("a replay: %s %s; want the stored receipt", res.Class, res.Outcome)
					}
				}
				l.audit()
			})
		})
	}
}
