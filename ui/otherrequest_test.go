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

// After "has it", "has another request" and a later "cannot tell", the
// lookup that found another request still binds (it outranks the "has
// it" before it): the list shows it ("has another request (earlier)"),
// no key offers a mark — neither a nor n, in the list or the detail —
// pressing either is refused with what to do (a new key, s), the review
// by finding proposes nothing, and a bulk "not applied" refuses the row.
// Nothing is written.
func TestTheConsoleOffersNeitherMarkOnAnotherRequestUnderTheKey(t *testing.T) {
	l := newLedger(t)
	noGrace(l)
	l.unknown(t, "acme", "k", "bob@acme.example")
	op := l.get(t, "acme", "k").Operation
	testledger.Lookups{Worker: "triage by bob", Ref: "sbx_7", Detail: func(f model.FindingKind) string {
		switch f {
		case model.FindingHasOther:
			return "sandbox has a different request under this key (sbx_7 is a send_notification request with other arguments than this operation's): no evidence"
		case model.FindingCannotTell:
			return "cannot tell: the provider is down"
		}
		return "sandbox delivered sbx_7"
	}}.Record(t, l.st, &op, model.FindingHasIt, model.FindingHasOther, model.FindingCannotTell)
	before := l.get(t, "acme", "k").Operation
	h := open(t, config(l), 200, 40)
	var row string
	for _, line := range strings.Split(h.view(), "\n") {
		if strings.Contains(line, " k ") {
			row = line
		}
	}
	if !strings.Contains(row, "other") || strings.Contains(row, "has it") || strings.Contains(row, "can't") {
		t.Errorf("the list row: %q; want has another request (other), not has it", row)
	}
	selectOp(t, h, "acme/k")
	h.lacks("n not applied", "a applied")
	h.keys("n")
	containsText(t, h, "Cannot mark acme/k not applied", "sbx_7", "a different request", "authorize a new key (s)", "Nothing was written")
	h.keys("a")
	containsText(t, h, "Cannot mark acme/k applied", "authorize a new key (s)")

	h.keys("esc", "R")
	containsText(t, h, "Nothing proposed")
	h.lacks("Not applied — 1", "Mark applied — 1")
	h.keys("esc")

	selectOp(t, h, "acme/k")
	h.keys("enter")
	containsText(t, h, "An earlier lookup found another request under the key: sbx_7", "authorize a new key (s)")
	h.lacks("n not applied", "a applied", "An earlier lookup found nothing", "An earlier lookup found it", "n mark not applied", "mark it not applied (n)")
	h.keys("n")
	containsText(t, h, "Cannot mark acme/k not applied", "authorize a new key (s)")
	h.keys("esc", "esc")

	// A bulk "not applied" refuses the row as it was read (the review
	// asks the provider again first: this test's sandbox holds this
	// request, so it is the rows as read that are checked here).
	now := l.get(t, "acme", "k").Operation
	for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionMarkApplied} {
		v := evalBulk(action, []model.Operation{now}, []*model.Operation{nil}, now.UpdatedAt)
		if !v.refusedRow[0] || v.nOther != 1 {
			t.Errorf("bulk %s: refused %v, other %d; want the row refused for another request", action, v.refusedRow[0], v.nOther)
		}
	}
	if v := evalBulk(model.ActionAuthorizeKey, []model.Operation{now}, []*model.Operation{nil}, now.UpdatedAt); v.refusedRow[0] {
		t.Error("bulk new key: refused; a new key is the way")
	}
	if n := otherRequestNote(now); !strings.Contains(n, "sbx_7") || !strings.Contains(n, "new key (s)") {
		t.Errorf("the bulk row's note %q; want it to name sbx_7 and a new key (s)", n)
	}
	if got := l.get(t, "acme", "k").Operation; got.State != before.State || got.Version != before.Version {
		t.Errorf("after the console: %s v%d; want %s v%d (nothing written)", got.State, got.Version, before.State, before.Version)
	}
}
