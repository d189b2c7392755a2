package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// noGrace turns the grace after a request off for l's service: a test
// that decides right after its calls on purpose (what it tests is not
// the grace).
func noGrace(l *ledger) { l.svc.Grace = -1 }

// Within the grace after an operation's latest request the provider may
// still apply it: n (and s) on it shows in the review when the request
// was sent and when to decide, y writes nothing, and only the existing
// second confirmation — the typed override — writes it. At every size
// down to 40×10.
func TestNotAppliedWithinTheGraceShowsItAndNeedsTheOverride(t *testing.T) {
	for _, size := range []struct{ w, h int }{{40, 10}, {80, 24}} {
		for _, action := range []string{"n", "s"} {
			t.Run(fmt.Sprintf("%s/%dx%d", action, size.w, size.h), func(t *testing.T) {
				l := newLedger(t)
				l.svc.DispatchTimeout = 20 * time.Millisecond
				sent := l.clock.Now()
				if res := l.notify(t, "acme", "k", "oncall@acme.example", provider.Faults{Delay: 2 * time.Second}); res.Class != model.ClassUnknown {
					t.Fatalf("set-up: %s; want unknown", res.Class)
				}
				h := open(t, config(l), size.w, size.h)
				selectOp(t, h, "acme/k")
				h.keys(action)
				h.typeText("customer says nothing arrived")
				h.keys("tab")
				if action == "n" {
					h.typeText("ticket 42")
				}
				h.keys("enter")
				// Until the claim's recorded apply-by: its lease end plus the grace.
				until := sent.Add(l.svc.Lease + l.svc.DispatchGrace("sandbox")).In(time.UTC).Format("15:04:05")
				verb := map[string]string{"n": "Mark not applied", "s": "Authorize a new key"}[action]
				visible(t, h, verb, "acme", "ecide after", until, "override", "╰")
				visible(t, h, sent.In(time.UTC).Format("15:04:05"))
				if !strings.Contains(strings.ToLower(h.view()), "sent") {
					t.Fatalf("the review does not say when the request was sent:\n%s", h.view())
				}
				if action == "n" && size.w == 40 {
					golden(t, "grace_review_n_40x10", h.view())
				}
				h.keys("y")
				if d := l.get(t, "acme", "k"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
					t.Fatalf("y within the grace: %s, %d decisions; want nothing written", d.Operation.State, len(d.Decisions))
				}
				h.keys("backspace") // y went into the override's field
				h.typeText(overrideWord)
				h.keys("enter")
				want := map[string]model.State{"n": model.StateNotApplied, "s": model.StateSuperseded}[action]
				if d := l.get(t, "acme", "k"); d.Operation.State != want || len(d.Decisions) != 1 {
					t.Fatalf("the override: %s, %d decisions; want %s written\n%s", d.Operation.State, len(d.Decisions), want, h.view())
				}
			})
		}
	}
}

// A review opened before the attempts were read (or on a stale view):
// the write's own refusal within the grace keeps the review, says when to
// decide, and asks for the typed override; nothing is written.
func TestAWriteRefusedWithinTheGraceAsksForTheOverride(t *testing.T) {
	l := newLedger(t)
	l.svc.DispatchTimeout = 20 * time.Millisecond
	if res := l.notify(t, "acme", "k", "oncall@acme.example", provider.Faults{Delay: 2 * time.Second}); res.Class != model.ClassUnknown {
		t.Fatalf("set-up: %s; want unknown", res.Class)
	}
	h := open(t, config(l), 80, 24)
	selectOp(t, h, "acme/k")
	h.keys("n")
	h.typeText("customer says nothing arrived")
	h.keys("tab")
	h.typeText("ticket 42")
	// As if the attempts had not been read yet: the review asks for y.
	h.m.action.attemptsRead, h.m.action.attempts = false, nil
	h.keys("enter")
	h.m.action.grace = nil
	if h.m.action.needsOverride() {
		t.Fatal("set-up: the review asks for the override before the write refused it")
	}
	h.keys("y")
	visible(t, h, "Not written", "ecide after", "override", "╰")
	if d := l.get(t, "acme", "k"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatalf("refused within the grace: %s, %d decisions; want nothing written", d.Operation.State, len(d.Decisions))
	}
	h.typeText(overrideWord)
	h.keys("enter")
	if d := l.get(t, "acme", "k"); d.Operation.State != model.StateNotApplied {
		t.Fatalf("the override: %s; want not_applied", d.Operation.State)
	}
}
