package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A decision against a recorded finding says so from the form's first
// step, not only on the review: an operator who opens "mark not applied"
// on an operation the provider has sees it before typing a reason. The
// review still takes the typed override, at every size the console runs
// at (at 60×20 the box gives up its blank lines rather than its prompt).
func TestMarkNotAppliedAgainstAHasItFindingWarnsOnTheForm(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 20}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			l := findingsLedger(t)
			if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
				t.Fatal(err)
			}
			ref := l.get(t, "acme", "found-1").Operation.Finding.Ref
			for _, from := range []string{"list", "detail"} {
				h := open(t, config(l), size.w, size.h)
				for h.selected() != "acme/found-1" {
					h.keys("down")
				}
				if from == "detail" {
					h.keys("enter")
				}
				h.keys("n")
				h.contains("Mark not applied", "! Against the last check", "▸ Reason", "Evidence")
				v := boxText(h.view())
				for _, want := range []string{"found the effect (" + ref + ")", "sends it a second time", "type override"} {
					if !strings.Contains(v, want) {
						t.Fatalf("%s: the form lacks %q:\n%s", from, want, h.view())
					}
				}
				h.typeText("it was never sent")
				h.keys("tab")
				h.typeText("a ticket")
				h.keys("enter")
				h.contains("Type override and press enter", "› ")
				h.keys("y")
				if d := l.get(t, "acme", "found-1"); d.Operation.State != model.StateUnknown {
					t.Fatalf("y wrote a decision against the finding: %s", d.Operation.State)
				}
			}
		})
	}
}

// The detail makes a fresh "has it" prominent: on an unknown operation
// (evidence to mark it applied, and what marking it not applied would
// do), and on one already marked not applied, where the next call sends
// it again.
func TestDetailMakesAHasItFindingProminent(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	ref := l.get(t, "acme", "found-1").Operation.Finding.Ref
	h := open(t, config(l), 100, 30)
	for h.selected() != "acme/found-1" {
		h.keys("down")
	}
	h.keys("enter")
	containsText(t, h, "! The provider has it: "+ref, "evidence to mark it applied (a)", "marking it not applied (n) goes against it")

	if _, err := l.svc.MarkNotApplied(t.Context(), reconcile.Decision{Tenant: "acme", Key: "found-1", Operator: "bob",
		Reason: "customer says so", Evidence: "ticket 9", Finding: reconcile.EvidenceOf(l.get(t, "acme", "found-1").Operation.Finding),
		Override: true}); err != nil {
		t.Fatal(err)
	}
	h.keys("esc", "3")
	for h.selected() != "acme/found-1" {
		h.keys("down")
	}
	h.keys("enter")
	containsText(t, h, "NOT_APPLIED", "! The provider has it: "+ref, "the next call with this key sends it again")
}

// boxText is a screen's words in one line, the box's borders taken out:
// what a sentence wrapped in a box says.
func boxText(view string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╮", " ", "╰", " ", "╯", " ", "─", " ").Replace(view)), " ")
}

// containsText is contains on boxText: a sentence wrapped across lines
// (or boxed) still matches.
func containsText(t *testing.T, h *harness, want ...string) {
	t.Helper()
	v := boxText(h.view())
	for _, w := range want {
		if !strings.Contains(v, w) {
			t.Fatalf("screen lacks %q:\n%s", w, h.view())
		}
	}
}

// pinFindingWords replaces the sandbox's wall-clock words in a recorded
// finding (when it delivered) so the goldens hold still.
func pinFindingWords(msg tea.Msg) tea.Msg {
	msg = pinAttempts(msg)
	d, ok := msg.(detailMsg)
	if !ok || d.Detail == nil {
		return msg
	}
	cp := *d.Detail
	if f := cp.Operation.Finding; f != nil {
		pinned := *f
		pinned.Detail = "sandbox delivered " + f.Ref + " (1 delivery under this key)"
		cp.Operation.Finding = &pinned
	}
	for i := range cp.Attempts {
		if cp.Attempts[i].Outcome == model.OutcomeLookup {
			cp.Attempts[i].Detail = "sandbox delivered " + cp.Attempts[i].ProviderRef
		}
	}
	d.Detail = &cp
	return d
}

// The form and review against a "has it" finding, and the detail that
// shows it, at 80×24 and 60×20.
func TestGoldenAgainstAHasItFinding(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 20}} {
		name := func(what string) string { return fmt.Sprintf("%s_%dx%d", what, size.w, size.h) }
		l := findingsLedger(t)
		if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
			t.Fatal(err)
		}
		h := open(t, config(l), size.w, size.h)
		h.pin = pinFindingWords
		for h.selected() != "acme/found-1" {
			h.keys("down")
		}
		h.keys("enter")
		golden(t, name("detail_has_it"), h.view())
		h.keys("n")
		golden(t, name("form_against_has_it"), h.view())
		h.typeText("it was never sent")
		h.keys("tab")
		h.typeText("a ticket")
		h.keys("enter")
		golden(t, name("review_against_has_it"), h.view())
	}
}

// A bulk "not applied" on marked rows some of which the provider has (a
// recorded finding) says so on its form, before a reason is typed.
func TestBulkFormNamesTheRowsAgainstTheirFinding(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 80, 24)
	h.keys("*", "n")
	containsText(t, h, "! 2 marked operations go against a recorded finding (the provider has it)", "type override", "▸ Reason")
	h.keys("esc", "esc", "esc") // the form, the banner, the marks
	for h.selected() != "acme/nothing-1" {
		h.keys("down")
	}
	h.keys("space", "n")
	h.contains("Mark not applied", "▸ Reason")
	h.lacks("against a recorded finding")
}
