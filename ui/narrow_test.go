package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// At 60 columns the list gives up whole columns (summary, tool, provider
// reference, attempts) rather than cutting the state and the finding off
// at the right edge: a "has it" stays in sight of the operator about to
// press n.
func TestANarrowListKeepsTheStateAndTheFinding(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{60, 64, 72} {
		h := open(t, config(l), w, 20)
		h.contains("STATE", "FINDING", "unknown", "has it · s", "has nothin")
		for _, line := range strings.Split(h.view(), "\n") {
			if ansi.StringWidth(line) > w {
				t.Fatalf("%d columns: a line of %d cells: %q", w, ansi.StringWidth(line), line)
			}
		}
		h.m.Close()
	}
	h := open(t, config(l), 60, 20)
	h.contains("has it · sbx_1", "has nothing")
	golden(t, "list_findings_60x20", h.view())
}
