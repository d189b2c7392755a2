package ui

import (
	"context"
	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The console must never suggest a wrong decision: these are the three
// ways it could (issue 11), each driven through the keys an operator
// presses, against a real ledger and a real sandbox provider.

// neverSent leaves tenant/key unknown with nothing at the provider: a
// worker claimed it and died before dispatching; the lease ended and a
// sweep made it unknown.
func (l *ledger) neverSent(t *testing.T, tenant, key string) {
	t.Helper()
	l.inFlight(t, tenant, key, "ops@"+tenant+".example")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A provider that cannot be asked is "cannot tell" — never "no delivery",
// never evidence for "not applied".
func TestAProviderThatCannotBeAskedIsCannotTellNotNoDelivery(t *testing.T) {
	l := fixture(t)
	gone, err := sandbox.Open(filepath.Join(t.TempDir(), "gone.provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	gone.Close() // every lookup now fails
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, toolconfig.Default().Tools, gone.Providers())
	h := open(t, cfg, 120, 50)
	h.keys("enter", "c")
	h.contains("acme / notify-1", "Cannot tell — no evidence either way")
	h.lacks("no delivery", "evidence to mark it not applied")
	// n: nothing is pre-filled, and the form still wants typed evidence.
	h.keys("n")
	if v := h.m.action.value("Evidence"); v != "" {
		t.Fatalf("evidence pre-filled from a check that could not tell: %q", v)
	}
	h.typeText("the provider timed out")
	h.keys("enter", "enter")
	h.contains("marking not applied needs evidence")
	h.lacks("Write this decision")
}

// After c found the delivery, n pre-fills nothing, and writing "not
// applied" takes a typed confirmation that names the finding; y alone
// (or enter) writes nothing.
func TestNotAppliedAgainstAFoundDeliveryNeedsTheTypedOverride(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 50)
	h.keys("enter", "c")
	h.contains("Provider check: sandbox delivered sbx_")
	h.keys("n")
	if v := h.m.action.value("Evidence"); v != "" {
		t.Fatalf("not applied pre-filled with the delivery that contradicts it: %q", v)
	}
	h.typeText("customer says nothing arrived")
	h.keys("tab")
	h.typeText("ticket 5521")
	h.keys("enter")
	h.contains("Write this decision", "Against the last check: the provider check found the effect (sbx_",
		"a second time", "Type override and press enter")
	h.keys("y", "enter", "enter")
	h.contains(`type "override" to write against the finding`)
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatal("a decision against the finding was written without the override")
	}
	h.keys("backspace") // the y went into the confirmation field
	h.typeText("override")
	h.keys("enter")
	d := l.get(t, "acme", "notify-1")
	if d.Operation.State != model.StateNotApplied || len(d.Decisions) != 1 || d.Decisions[0].Evidence != "ticket 5521" {
		t.Fatalf("after the override: %+v %+v", d.Operation, d.Decisions)
	}
}

// After c found nothing, "not applied" needs no typed evidence (the lookup
// is recorded), and "applied" is a decision against the finding.
func TestAnEmptyLookupIsEvidenceForNotAppliedAndAgainstApplied(t *testing.T) {
	l := newLedger(t)
	l.neverSent(t, "acme", "lost")
	h := open(t, config(l), 120, 50)
	h.keys("enter", "c")
	h.contains("acme / lost", "holds no delivery")
	h.keys("a")
	if v := h.m.action.value("Evidence"); v != "" {
		t.Fatalf("applied pre-filled after an empty lookup: %q", v)
	}
	h.typeText("saw it in the provider UI")
	h.keys("tab")
	h.typeText("operator saw it")
	h.keys("enter")
	h.contains("Against the last check: the provider check found nothing", "Type override")
	h.keys("esc", "esc")
	h.keys("n")
	h.typeText("the worker died before dispatch")
	h.keys("enter", "enter")
	h.contains("Write this decision", "unknown (version")
	h.lacks("Against the last check")
	h.keys("y")
	d := l.get(t, "acme", "lost")
	if d.Operation.State != model.StateNotApplied || len(d.Decisions) != 1 ||
		!strings.HasPrefix(d.Decisions[0].Evidence, "provider lookup: sandbox holds no delivery") {
		t.Fatalf("after not applied: %+v %+v", d.Operation, d.Decisions)
	}
}

// The review cannot be passed by a repeated key: a, a character, tab, a
// reason, enter, enter writes nothing; a paste on the review writes
// nothing; y does.
func TestTheReviewIsNotPassedByARepeatedKey(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	h.keys("a", "x", "tab")
	h.typeText("r")
	h.keys("enter", "enter", "enter")
	h.contains("Write this decision")
	paste := keyMsg("y")
	paste.Paste = true
	h.send(paste)
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateUnknown {
		t.Fatal("a repeated enter or a paste wrote the decision")
	}
	h.keys("y")
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateApplied {
		t.Fatalf("y did not write: %s", d.Operation.State)
	}
}

// q inside the help closes the help; it never quits the console.
func TestQInsideTheHelpClosesItAndDoesNotQuit(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("?")
	h.contains("Keys", "close help")
	h.keys("q")
	if h.quit {
		t.Fatal("q in the help quit the console")
	}
	h.lacks("close help")
	h.contains("acme")
}
