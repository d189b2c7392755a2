package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The override word is typed, not pasted: a paste of "override\n" without
// bracketed paste arrives as one burst of runes and an enter, and it wrote
// the decision against the provider's "has it". Like y, the prompt takes
// neither a paste nor a burst; typed one key at a time it still writes.
func TestTheOverridePromptIgnoresPastesAndBursts(t *testing.T) {
	for _, paste := range []bool{false, true} {
		l := fixture(t)
		h := open(t, config(l), 100, 30)
		selectOp(t, h, "acme/notify-1")
		h.keys("enter", "c", "n")
		h.typeText("never")
		h.keys("tab")
		h.typeText("INC-1")
		h.keys("enter")
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(overrideWord), Paste: paste})
		h.keys("enter")
		if got := l.get(t, "acme", "notify-1").Operation.State; got != "unknown" {
			t.Fatalf("paste %v: a pasted override wrote it: %s", paste, got)
		}
		h.typeText(overrideWord)
		h.keys("enter")
		if got := l.get(t, "acme", "notify-1").Operation.State; got != "not_applied" {
			t.Fatalf("paste %v: typed override: %s\n%s", paste, got, h.view())
		}
	}
}
