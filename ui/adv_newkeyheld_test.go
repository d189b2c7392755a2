package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operator authorized a new key for an unknown operation; the provider
// then answered, late, that it applied the old one. The new key's first
// call is refused (reconcile): the console says so on its detail, where it
// used to say "the first call with it claims it", and offers what settles
// it — mark it applied, with the old key's reference.
func TestAdvANewKeyWhoseOldKeyWasAppliedLateSaysItIsHeld(t *testing.T) {
	l := newLedger(t)
	l.supersedeWhileDispatching(t, nil)
	if op := l.get(t, "acme", "k2").Operation; op.State != model.StateAuthorized || !op.Contradicted {
		t.Fatalf("set-up: k2 %s contradicted=%v", op.State, op.Contradicted)
	}
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "acme/k2")
	h.keys("enter")
	h.contains("the provider later said it applied the key this one replaced", "a mark applied")
	h.confirmMarkApplied("sbx_1", "the provider applied the old key")
	h.keys("y")
	if got := l.get(t, "acme", "k2").Operation; got.State != model.StateApplied || got.Contradicted {
		t.Fatalf("k2 after mark applied: %s contradicted=%v", got.State, got.Contradicted)
	}
}

// A failed operation the provider's late answer says it applied: its
// replays tell callers "rejected for good", and the console offered only a
// new key (a second e-mail). It now offers a, mark applied, starting from
// the provider's reference, as for a contradicted not_applied.
func TestAdvAFailedOperationTheProviderSaysItAppliedCanBeMarkedApplied(t *testing.T) {
	l := fixture(t)
	l.contradictLate(t, "initech", "notify-rejected", "sbx_late", "provider said applied after the operation had moved to failed")
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "initech/notify-rejected")
	h.keys("enter")
	h.contains("but the provider later said it applied it", "a mark applied")
	h.keys("a")
	if v := h.view(); !strings.Contains(v, "› sbx_late") {
		t.Fatalf("mark applied does not start from the provider's reference:\n%s", v)
	}
	h.keys("tab")
	h.typeText("the provider applied the first attempt")
	h.keys("enter", "y")
	if got := l.get(t, "initech", "notify-rejected").Operation; got.State != model.StateApplied || got.Contradicted {
		t.Fatalf("after mark applied: %s contradicted=%v\n%s", got.State, got.Contradicted, h.view())
	}
}

// An operation marked applied that a late provider answer contradicts
// ("rejected"): its receipt may report done an e-mail never sent, and no
// decision was offered. A new key is now (reconcile.LegalFor) — against
// the receipt, so the review asks for the typed override and y writes
// nothing.
func TestAdvANewKeyForAContradictedAppliedNeedsTheOverride(t *testing.T) {
	l := fixture(t)
	l.contradictLate(t, "initech", "notify-settled", "", "provider said rejected after the operation had moved to applied")
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "initech/notify-settled")
	h.keys("enter")
	h.contains("a later provider answer says it was not", "s supersede")
	h.keys("s")
	h.typeText("the provider says it rejected it")
	h.keys("enter", "enter")
	containsText(t, h, "Against the receipt", "override")
	h.keys("y")
	if got := l.get(t, "initech", "notify-settled").Operation.State; got != model.StateApplied {
		t.Fatalf("a new key was authorized against the receipt without the override: %s", got)
	}
	h.keys("backspace")
	h.typeText("override")
	h.keys("enter")
	if got := l.get(t, "initech", "notify-settled").Operation.State; got != model.StateSuperseded {
		t.Fatalf("override did not write it: %s\n%s", got, h.view())
	}
}

// A console opened with a config that does not name the operations'
// provider (the agents' --config left out): a bulk "not applied" asked
// nothing and its review said nothing of the provider — y wrote every
// row on the typed evidence, the one the provider has too. It asks now:
// each row is "cannot tell", and the review says y writes them on the
// typed evidence alone, and why.
func TestAdvABulkNotAppliedUnderAConfigWithoutTheProviderSaysCannotTell(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "refund-1", "cfo@acme.example")
	l.unknown(t, "acme", "refund-2", "cfo@acme.example")
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, l.svc.Tools, provider.Registry{})
	// Decided right after the calls: past the grace here (within it, the
	// write skips both and the review says there is nothing to write).
	cfg.Service.Grace = -1
	h := open(t, cfg, 120, 30)
	selectOp(t, h, "acme/refund-2")
	h.keys("space")
	selectOp(t, h, "acme/refund-1")
	h.keys("space", "n")
	h.typeText("customer says no mail came")
	h.keys("tab")
	h.typeText("ticket 4411")
	h.keys("enter")
	containsText(t, h, "The provider cannot tell about 2 of them", "its provider is not in this config (--config)")
}

// Two operators: a bulk "not applied" review shows refund-1 against its
// "has it" and refund-2 "cannot tell" (the provider down); while the
// operator types the override for refund-1, another operator's ops check
// finds refund-2's delivery. The override confirmed the findings on
// screen — not one recorded after: refund-2 is refused (stale: looked up
// again since), not written against a "has it" nobody here saw.
func TestAdvABulkOverrideDoesNotCoverAFindingRecordedAfterTheReview(t *testing.T) {
	l := newLedger(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	l.unknown(t, "acme", "refund-1", "cfo@acme.example")
	l.unknown(t, "acme", "refund-2", "cfo@acme.example")
	op1 := l.get(t, "acme", "refund-1").Operation
	testledger.Lookups{Worker: "triage by bob", Ref: "sbx_1"}.Record(t, l.st, &op1, model.FindingHasIt)
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, l.svc.Tools, provider.Registry{"sandbox": provider.Unreachable("sandbox", false, "the provider is down")})
	cfg.Service.Grace = l.svc.Grace
	h := open(t, cfg, 120, 30)
	selectOp(t, h, "acme/refund-2")
	h.keys("space")
	selectOp(t, h, "acme/refund-1")
	h.keys("space", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	containsText(t, h, "The provider cannot tell about 1 of them", "1 operation goes against the provider's finding")
	op2 := l.get(t, "acme", "refund-2").Operation
	testledger.Lookups{Worker: "ops check by carol", Ref: "sbx_2"}.Record(t, l.st, &op2, model.FindingHasIt)
	h.keys("o")
	h.typeText("override")
	h.keys("enter")
	if got := l.get(t, "acme", "refund-1").Operation.State; got != model.StateNotApplied {
		t.Errorf("refund-1, against the finding on screen, overridden: %s; want not_applied\n%s", got, h.view())
	}
	if got := l.get(t, "acme", "refund-2").Operation.State; got != model.StateUnknown {
		t.Fatalf("refund-2 written against a \"has it\" recorded after the review: %s\n%s", got, h.view())
	}
}
