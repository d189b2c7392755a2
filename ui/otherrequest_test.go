package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// An operation whose latest lookup found a different request under its
// downstream key (a copy of the ledger, or a key reused after its
// tombstone was forgotten, sent it) — after an earlier "has it" asked by
// key alone, which may have been about that request: the list shows
// "has another request", not "has it (earlier)"; a (mark applied) is
// refused with what to do, the review by finding proposes nothing, and a
// bulk "mark applied" of it refuses the row. Nothing is written.
func TestTheConsoleRefusesMarkAppliedOnAnotherRequestUnderTheKey(t *testing.T) {
	l := newLedger(t)
	noGrace(l)
	l.unknown(t, "acme", "k", "bob@acme.example")
	op := l.get(t, "acme", "k").Operation
	testledger.Lookups{Worker: "triage by bob", Ref: "sbx_7", Detail: func(f model.FindingKind) string {
		if f == model.FindingHasOther {
			return "sandbox has a different request under this key (sbx_7 is a send_notification request with other arguments than this operation's): no evidence"
		}
		return "sandbox delivered sbx_7"
	}}.Record(t, l.st, &op, model.FindingHasIt, model.FindingHasOther)
	before := l.get(t, "acme", "k").Operation
	h := open(t, config(l), 140, 40)
	var row string
	for _, line := range strings.Split(h.view(), "\n") {
		if strings.Contains(line, " k ") {
			row = line
		}
	}
	if !strings.Contains(row, "has another request") || strings.Contains(row, "has it") {
		t.Errorf("the list row: %q; want has another request, not has it", row)
	}
	selectOp(t, h, "acme/k")
	h.keys("a")
	containsText(t, h, "Cannot mark acme/k applied", "sbx_7", "a different request", "authorize a new key (s)", "Nothing was written")

	h.keys("esc", "R")
	containsText(t, h, "Nothing proposed — cannot tell, has another request")
	h.lacks("Mark applied — 1")
	h.keys("esc")

	selectOp(t, h, "acme/k")
	h.keys("space", "a")
	h.typeText("ticket 9")
	h.keys("tab")
	h.typeText("the provider has it")
	h.keys("enter")
	containsText(t, h, "1 refused: the provider has a different request under the key", "refused: the provider holds sbx_7, a different request")
	if got := l.get(t, "acme", "k").Operation; got.State != before.State || got.Version != before.Version {
		t.Errorf("after the console: %s v%d; want %s v%d (nothing written)", got.State, got.Version, before.State, before.Version)
	}
}
