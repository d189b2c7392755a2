package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// oldRef is the reference of acme/k's "has it" (its late answer).
func oldRef(t *testing.T, l *ledger) string {
	t.Helper()
	for _, a := range l.get(t, "acme", "k").Attempts {
		if a.Finding == model.FindingHasIt && a.ProviderRef != "" {
			return a.ProviderRef
		}
	}
	t.Fatal("set-up: k has no \"has it\"")
	return ""
}

// A held new key (k2: authorized, and k's provider then applied k) was
// never sent. c on it asked about k2's own downstream key — always "has
// nothing" — and that finding then bound its one decision: a demanded the
// typed override. c asks about the key it replaced now and says so, a
// starts from k's reference, and y writes it. A lookup of k2's own key
// recorded before (an older console) does not bind either: a starts from
// k's reference all the same.
func TestAHeldNewKeysCheckAsksAboutTheReplacedKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check bool // c before a
	}{{"c, then a", true}, {"a after an older console's own-key lookup", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t)
			l.supersedeWhileDispatching(t, nil)
			ref := oldRef(t, l)
			if !tc.check {
				k2 := l.get(t, "acme", "k2").Operation
				if looked, err := l.svc.Look(context.Background(), &k2, "console by carol"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
					t.Fatalf("own lookup: %+v %v", looked.Finding, err)
				}
			}
			h := open(t, config(l), 120, 40)
			h.keys("8")
			selectOp(t, h, "acme/k2")
			h.keys("enter")
			if tc.check {
				h.keys("c")
				containsText(t, h, "asked about the key it replaced, k")
				h.lacks("holds no delivery")
				for _, a := range l.get(t, "acme", "k2").Attempts {
					if a.Outcome == model.OutcomeLookup {
						t.Fatalf("c recorded a lookup of k2's own key: %s", a.Finding)
					}
				}
			}
			h.keys("a")
			if v := h.view(); !strings.Contains(v, "› "+ref) {
				t.Fatalf("mark applied on the held key does not start from k's reference %s:\n%s", ref, v)
			}
			h.keys("tab")
			h.typeText("the provider applied the old key")
			h.keys("enter")
			h.lacks("override")
			h.keys("y")
			if got := l.get(t, "acme", "k2").Operation; got.State != model.StateApplied || got.Contradicted || got.ProviderRef != ref {
				t.Fatalf("k2 after mark applied: %s contradicted=%v ref %q; want applied with %s\n%s", got.State, got.Contradicted, got.ProviderRef, ref, h.view())
			}
		})
	}
}

// The bulk a (mark applied on marked rows) took one evidence for every row
// ("a provider reference (sbx_12)"): a row with its own "has it" got
// another operation's reference in its receipt. The form says each row's
// own reference goes in its receipt, and the write does so; the typed
// evidence is each decision's evidence.
func TestABulkMarkAppliedGivesEachRowItsOwnReference(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "found-1", "a@acme.example")
	l.unknown(t, "acme", "found-2", "b@acme.example")
	refs := map[string]string{}
	for _, k := range []string{"found-1", "found-2"} {
		_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", k, "triage by bob")
		if err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check %s: %+v %v", k, looked.Finding, err)
		}
		refs[k] = looked.Finding.Ref
	}
	h := open(t, config(l), 120, 40)
	selectOp(t, h, "acme/found-2")
	h.keys("space")
	selectOp(t, h, "acme/found-1")
	h.keys("space", "a")
	containsText(t, h, "keeps its own reference in its receipt")
	h.typeText(refs["found-2"])
	h.keys("tab")
	h.typeText("provider has both")
	h.keys("enter", "y")
	for _, k := range []string{"found-1", "found-2"} {
		d := l.get(t, "acme", k)
		if d.Operation.State != model.StateApplied || d.Operation.ProviderRef != refs[k] {
			t.Errorf("%s: %s ref %q; want applied with its own %s\n%s", k, d.Operation.State, d.Operation.ProviderRef, refs[k], h.view())
		}
		if ev := d.Decisions[len(d.Decisions)-1].Evidence; ev != refs["found-2"] {
			t.Errorf("%s: decision evidence %q; want the typed %q", k, ev, refs["found-2"])
		}
	}
}

// The detail of a held new key showed, as its finding, a lookup of its
// own downstream key (never sent: "has nothing") when one was recorded (an
// older console's c): the finding that binds its decision is the key it
// replaced, and that is the one shown — with the key it was asked about.
func TestAHeldNewKeysDetailShowsTheReplacedKeysFinding(t *testing.T) {
	l := newLedger(t)
	l.supersedeWhileDispatching(t, nil)
	ref := oldRef(t, l)
	k2 := l.get(t, "acme", "k2").Operation
	if looked, err := l.svc.Look(context.Background(), &k2, "console by carol"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
		t.Fatalf("own lookup: %+v %v", looked.Finding, err)
	}
	h := open(t, config(l), 160, 70)
	h.keys("8")
	selectOp(t, h, "acme/k2")
	h.keys("enter")
	containsText(t, h, "of the key it replaced, k")
	v := h.view()
	for _, line := range strings.Split(v, "\n") {
		if strings.Contains(line, "finding") && strings.Contains(line, "has nothing") {
			t.Fatalf("the held key's finding line shows its own lookup: %q\n%s", line, v)
		}
	}
	if !strings.Contains(v, ref) {
		t.Fatalf("the finding line does not show k's reference %s:\n%s", ref, v)
	}
}
