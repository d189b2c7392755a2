package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// Text pasted (or typed) into any field — a decision's reason, the
// search, the command line, the tenant picker, the audit log's filter —
// is shown as the field's value: bubbles drops C0 and C1 controls, but a
// bidirectional override or a zero-width character reached the terminal
// raw (a key pasted from a ticket that reads backwards on screen).
func TestAdvPastedBidiAndZeroWidthNeverReachTheTerminal(t *testing.T) {
	l := fixture(t)
	for _, keys := range [][]string{{"n"}, {"/"}, {":"}, {"t"}, {"D", "/"}} {
		for _, paste := range []bool{true, false} {
			h := open(t, config(l), 100, 30)
			h.keys(keys...)
			h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a\u202eb\u2066c\u200bd\ufeffe"), Paste: paste})
			for _, r := range h.m.View() {
				if r != '\n' && textsafe.Unsafe(r) {
					t.Errorf("%v (paste %v): raw %U in the view", keys, paste, r)
					break
				}
			}
			h.m.Close()
		}
	}
}
