package ui

import (
	"testing"
)

// A "not applied" written against the provider's check on the screen
// (the typed override): the detail shows the operation not_applied under
// the check that found the delivery. It said "Provider check: sandbox
// delivered sbx_…" as if that were news to welcome — the warning a
// recorded "has it" gets on a not_applied operation ("Yet it is marked not
// applied: the next call with this key sends it again") was behind the
// check on the screen.
func TestAdvANotAppliedUnderACheckThatFoundItSaysTheNextCallSendsItAgain(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 100, 30)
	selectOp(t, h, "acme/notify-1")
	h.keys("enter", "c", "n")
	h.typeText("never")
	h.keys("tab")
	h.typeText("INC-1")
	h.keys("enter")
	h.typeText("override")
	h.keys("enter")
	if got := l.get(t, "acme", "notify-1").Operation.State; got != "not_applied" {
		t.Fatalf("setup: %s", got)
	}
	containsText(t, h, "NOT_APPLIED", "Yet it is marked not applied: the next call with this key sends it again")
}
