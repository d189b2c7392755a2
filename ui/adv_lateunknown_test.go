package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// lateOnUnknown makes an unknown operation the provider's own late answer
// says was applied: the worker's claim outlives its lease, a sweep makes
// it unknown, and then the provider's "applied" (with its reference)
// arrives — recorded on the operation (its provider ref, a new version),
// which stays unknown for a person to settle.
func (l *ledger) lateOnUnknown(t *testing.T, tenant, key, to string) {
	t.Helper()
	l.sweptAtDispatch(t, tenant, key, to, nil)
}

// An unknown operation whose provider answered "applied" late (sbx_…, on
// the operation as its provider ref) is one the provider has: marking it
// not applied, or a new key, sends the e-mail a second time. Before, the
// console asked for nothing — no warning, no override — and wrote it, and
// the detail said the provider "may or may not have applied it".
func TestAdvNotAppliedAgainstTheProvidersLateAppliedOnAnUnknownNeedsTheOverride(t *testing.T) {
	for _, from := range []string{"list", "detail"} {
		t.Run(from, func(t *testing.T) {
			l := newLedger(t)
			l.lateOnUnknown(t, "acme", "late-1", "cfo@acme.example")
			op := l.get(t, "acme", "late-1").Operation
			if op.State != model.StateUnknown || op.ProviderRef == "" {
				t.Fatalf("setup: want unknown with a provider ref, got %s %q", op.State, op.ProviderRef)
			}
			h := open(t, config(l), 120, 40)
			selectOp(t, h, "acme/late-1")
			if from == "detail" {
				h.keys("enter")
				containsText(t, h, "! The provider said it applied it ("+op.ProviderRef+")", "marking it not applied (n) or a new key (s) goes against it")
			}
			h.keys("n")
			containsText(t, h, "! Against", op.ProviderRef)
			h.typeText("never sent")
			h.keys("tab")
			h.typeText("INC-1")
			h.keys("enter", "y")
			if got := l.get(t, "acme", "late-1").Operation.State; got != model.StateUnknown {
				t.Fatalf("marked %s without the override, though the provider said applied (%s)", got, op.ProviderRef)
			}
		})
	}
}

// A bulk "not applied" over marked rows that include one whose provider
// answered "applied" late: the bulk review has no word for that answer
// (the ledger holds a decision only to recorded lookups), and when the
// provider cannot be asked it wrote the row on the typed evidence alone.
// The console will not open the bulk form with such a row marked: it
// names it, to be decided on its own (where n asks for the override).
func TestAdvABulkNotAppliedLeavesOutNoRowWhoseProviderAnsweredAppliedLate(t *testing.T) {
	l := newLedger(t)
	l.lateOnUnknown(t, "acme", "late-1", "cfo@acme.example")
	l.unknown(t, "acme", "plain-1", "ops@acme.example")
	ref := l.get(t, "acme", "late-1").Operation.ProviderRef
	h := open(t, config(l), 120, 40)
	h.keys("*", "n")
	containsText(t, h, "acme/late-1", ref)
	h.lacks("Mark not applied — 2 marked operations")
	if h.m.overlay == overlayAction {
		t.Fatal("the bulk form opened")
	}
	// Marks on the other rows only: the form opens.
	h.keys("esc", "esc")
	selectOp(t, h, "acme/plain-1")
	h.keys("space", "n")
	h.contains("Mark not applied — 1 marked operation")
}
