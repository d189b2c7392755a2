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

// heldNewKey: k's reply was lost, an operator authorized k2 in its place,
// and a lookup of k then found the delivery: k2 is held (authorized,
// contradicted), its one decision mark applied with k's reference.
func heldNewKey(t *testing.T, mk func(*clock) *ledger) (*ledger, string) {
	t.Helper()
	clk := newClock()
	l := mk(clk)
	ctx := context.Background()
	l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
	d := decision(l.op("acme", "k"))
	d.NewKey = "k2"
	if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob")
	if err != nil || looked.Finding.Kind != model.FindingHasIt || looked.Finding.Ref == "" {
		t.Fatalf("check of k: %+v %v; want has it", looked.Finding, err)
	}
	if k2 := l.op("acme", "k2"); k2.State != model.StateAuthorized || !k2.Contradicted {
		t.Fatalf("set-up: k2 %s contradicted=%v; want held", k2.State, k2.Contradicted)
	}
	clk.Advance(time.Second)
	return l, looked.Finding.Ref
}

// A held new key was never sent: a lookup of its own downstream key always
// finds nothing. That "finding" used to bind its only legal decision — mark
// applied demanded the override (--against-finding), and the dry run said
// it would be refused. The check of a new key asks about the key it
// replaced (and says so), and what binds a new key's decision is the
// replaced key's finding, never a lookup of its own key (recorded by an
// older retrysafe, or by Look).
func TestAHeldNewKeysOwnLookupNeverBindsItsDecision(t *testing.T) {
	for _, tc := range []struct {
		name string
		// look records what the operator's check of k2 recorded.
		look func(t *testing.T, l *ledger) reconcile.Looked
		bulk bool
	}{
		{"ops check of the new key asks about the replaced key", func(t *testing.T, l *ledger) reconcile.Looked {
			_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k2", "ops check by bob")
			if err != nil {
				t.Fatal(err)
			}
			return looked
		}, false},
		{"a lookup of the new key's own key, as an older retrysafe recorded it", func(t *testing.T, l *ledger) reconcile.Looked {
			looked, err := l.svc.Look(context.Background(), l.op("acme", "k2"), "console by carol")
			if err != nil || looked.Finding.Kind != model.FindingHasNothing {
				t.Fatalf("own lookup: %+v %v; want has nothing (never sent)", looked.Finding, err)
			}
			return looked
		}, false},
		{"the same, decided in bulk", func(t *testing.T, l *ledger) reconcile.Looked {
			looked, err := l.svc.Look(context.Background(), l.op("acme", "k2"), "console by carol")
			if err != nil {
				t.Fatal(err)
			}
			return looked
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				l, ref := heldNewKey(t, mk)
				looked := tc.look(t, l)
				if looked.ReplacedKey != "" {
					if looked.ReplacedKey != "k" || looked.Finding.Kind != model.FindingHasIt || looked.Finding.Ref != ref {
						t.Fatalf("check of k2: asked %q, %+v; want k asked, has it · %s", looked.ReplacedKey, looked.Finding, ref)
					}
					for _, a := range l.detail("acme", "k2").Attempts {
						if a.Outcome == model.OutcomeLookup {
							t.Errorf("k2 got a lookup attempt of its own (%s); the check asked about k", a.Finding)
						}
					}
				} else if !strings.Contains(tc.name, "own key") && !strings.Contains(tc.name, "bulk") {
					t.Fatalf("check of k2 asked about its own key: %+v", looked.Finding)
				}
				k2 := l.detail("acme", "k2").Operation
				if against, text := reconcile.AgainstFinding(model.ActionMarkApplied, k2); against {
					t.Errorf("the review says mark applied on k2 goes against %q", text)
				}
				d := decision(&k2)
				d.Evidence = ref
				if tc.bulk {
					// Typed evidence for all rows: the receipt still names
					// the reference of the finding that binds (k's).
					d.Evidence = "INC-7: resent by mistake"
					out, err := l.svc.DecideMany(context.Background(), model.ActionMarkApplied, d, []reconcile.Target{reconcile.TargetOf(k2)})
					if err != nil || out[0].Verdict != reconcile.VerdictWritten {
						t.Fatalf("bulk mark k2 applied: %+v %v; want written without the override", out, err)
					}
				} else if err := l.decide(model.ActionMarkApplied, d); err != nil {
					t.Fatalf("mark k2 applied with k's reference, no override: %v", err)
				}
				if k2 := l.op("acme", "k2"); k2.State != model.StateApplied || k2.Contradicted || k2.ProviderRef != ref {
					t.Fatalf("k2: %s contradicted=%v ref %q; want applied, settled, %s", k2.State, k2.Contradicted, k2.ProviderRef, ref)
				}
				if n := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); n != 1 {
					t.Fatalf("%d deliveries; want 1", n)
				}
			})
		})
	}
}

// A bulk "mark applied" takes one typed evidence for every row; a row with
// a "has it" of its own used to get that text (another operation's
// reference, typed for the first row) as its receipt's provider reference.
// Each row's receipt names the reference of the "has it" that binds it now;
// the typed evidence stays the decision's evidence, and a row with no such
// finding gets no reference from it (it would replay b's): none, or its
// own attempts'.
func TestABulkMarkAppliedGivesEachRowItsOwnReference(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		ctx := context.Background()
		refs := map[string]string{}
		for _, k := range []string{"a", "b", "c"} {
			l.call(notify("acme", k, k+"@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
			if k == "c" {
				continue // never checked
			}
			clk.Advance(time.Second)
			_, looked, err := l.svc.CheckAndRecord(ctx, "acme", k, "triage by bob")
			if err != nil || looked.Finding.Kind != model.FindingHasIt {
				t.Fatalf("check %s: %+v %v", k, looked.Finding, err)
			}
			refs[k] = looked.Finding.Ref
		}
		if refs["a"] == refs["b"] {
			t.Fatalf("set-up: one reference for two deliveries: %v", refs)
		}
		var targets []reconcile.Target
		for _, k := range []string{"a", "b", "c"} {
			targets = append(targets, reconcile.TargetOf(*l.op("acme", k)))
		}
		d := reconcile.Decision{Operator: "oncall", Reason: "provider has them", Evidence: refs["b"]}
		out, err := l.svc.DecideMany(ctx, model.ActionMarkApplied, d, targets)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"a": refs["a"], "b": refs["b"], "c": ""}
		for i, k := range []string{"a", "b", "c"} {
			if out[i].Verdict != reconcile.VerdictWritten {
				t.Fatalf("%s: %s %v", k, out[i].Verdict, out[i].Err)
			}
			det := l.detail("acme", k)
			var rc model.Receipt
			mustUnmarshal(t, det.Operation.Receipt, &rc)
			if det.Operation.ProviderRef != want[k] || rc.ProviderRef != want[k] {
				t.Errorf("%s: provider ref %q, receipt %q; want %q (its own has-it, else none)", k, det.Operation.ProviderRef, rc.ProviderRef, want[k])
			}
			if ev := det.Decisions[len(det.Decisions)-1].Evidence; ev != refs["b"] {
				t.Errorf("%s: the decision's evidence is %q; want the typed %q", k, ev, refs["b"])
			}
		}
	})
}

// Service.Check (ledger.Check: the Go API's check that records nothing)
// of a new key not yet used asked its own downstream key — never sent, so
// always "has nothing" — while ops check and the console's c ask about
// the key it replaced. Both ask the replaced key now: on a held key,
// "has it", with the replaced key's reference.
func TestCheckOfANewKeyAsksTheKeyItReplaced(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l, ref := heldNewKey(t, mk)
		op, ev, err := l.svc.Check(context.Background(), "acme", "k2")
		if err != nil || !ev.Found || ev.Ref != ref || op.Key != "k2" || ev.DownstreamKey != l.dk("acme", "k") {
			t.Fatalf("Check(k2): op %v, %+v, %v; want has it %s under k's downstream key", op.Key, ev, err, ref)
		}
	})
}
