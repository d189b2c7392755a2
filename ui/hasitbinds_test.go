package ui

import (
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// A provider never takes a delivery back: after a lookup found the effect,
// a later "has nothing" (its file went back in time unnoticed) and then
// "cannot tell" must not make the console's "not applied" (or a new key)
// a plain y — the earlier "has it" binds, as it does in the ledger
// (store.Tx.LatestConclusiveFinding), so the form asks for the override
// and y writes nothing.
func TestAnEarlierHasItOutlivesALaterHasNothingInTheConsole(t *testing.T) {
	for _, seq := range [][]model.FindingKind{
		{model.FindingHasIt, model.FindingHasNothing, model.FindingCannotTell},
		{model.FindingHasIt, model.FindingCannotTell, model.FindingHasNothing, model.FindingCannotTell},
	} {
		t.Run(fmt.Sprint(seq), func(t *testing.T) {
			l := newLedger(t)
			l.unknown(t, "acme", "refund-1", "cfo@acme.example")
			op := l.get(t, "acme", "refund-1").Operation
			testledger.Lookups{Worker: "ops check by bob", Ref: "sbx_1", Detail: func(f model.FindingKind) string {
				if f == model.FindingCannotTell {
					return "cannot tell: the provider file went back in time"
				}
				return ""
			}}.Record(t, l.st, &op, seq...)
			h := open(t, config(l), 100, 30)
			selectOp(t, h, "acme/refund-1")
			h.keys("n")
			h.typeText("customer says no mail came")
			h.keys("tab")
			h.typeText("ticket 4411")
			h.keys("enter")
			containsText(t, h, "! Against an earlier check", "found the effect (sbx_1)", "Type override and press enter")
			h.keys("y")
			if got := l.get(t, "acme", "refund-1").Operation; got.State != model.StateUnknown {
				t.Fatalf("y wrote not applied against the earlier has-it: %s", got.State)
			}
		})
	}
}

// The same when the last lookup itself found nothing (no "cannot tell"
// after it), or the key was tried again since (the finding is stale): the
// form reads the earlier lookups, the earlier "has it"
// binds, and y writes nothing — the ledger would refuse it anyway, and the
// form must ask for what the ledger needs.
func TestAnEarlierHasItBindsWhenTheLastLookupFoundNothing(t *testing.T) {
	for _, seq := range [][]model.FindingKind{
		{model.FindingHasIt, model.FindingHasNothing},
		{model.FindingHasIt, ""},                          // the key tried again: the finding is stale, not untrue
		{model.FindingHasIt, "", model.FindingHasNothing}, // and a lookup after that found nothing
	} {
		t.Run(fmt.Sprint(seq), func(t *testing.T) { hasItThenNotApplied(t, seq) })
	}
}

func hasItThenNotApplied(t *testing.T, seq []model.FindingKind) {
	l := newLedger(t)
	l.unknown(t, "acme", "refund-1", "cfo@acme.example")
	op := l.get(t, "acme", "refund-1").Operation
	testledger.Lookups{Worker: "ops check by bob", Ref: "sbx_1"}.Record(t, l.st, &op, seq...)
	h := open(t, config(l), 100, 30)
	selectOp(t, h, "acme/refund-1")
	h.keys("n")
	h.typeText("customer says no mail came")
	h.keys("tab")
	h.typeText("ticket 4411")
	h.keys("enter")
	containsText(t, h, "! Against an earlier check", "found the effect (sbx_1)", "Nothing since takes it back", "Type override and press enter")
	h.keys("y")
	if got := l.get(t, "acme", "refund-1").Operation; got.State != model.StateUnknown {
		t.Fatalf("y wrote not applied against the earlier has-it: %s", got.State)
	}
	h.keys("backspace")
	h.typeText("override")
	h.keys("enter")
	if got := l.get(t, "acme", "refund-1").Operation; got.State != model.StateNotApplied {
		t.Fatalf("override did not write it: %s\n%s", got.State, h.view())
	}
}
