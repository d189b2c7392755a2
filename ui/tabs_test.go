package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// At 60 columns the tabs line cannot hold every state: the empty tabs go
// before the active one would be cut off, and a click still lands on the
// tab under it.
func TestNarrowTabsKeepTheActiveTabAndItsClicks(t *testing.T) {
	l := findingsLedger(t) // unknown 3, applied 1, the rest empty
	h := open(t, config(l), 60, 20)
	h.keys("8")
	line := strings.Split(h.view(), "\n")[1]
	if !strings.Contains(line, "[all 4]") || strings.Contains(line, "…") {
		t.Fatalf("the all tab is not shown whole at 60 columns: %q", line)
	}
	x := strings.Index(line, "appl 1")
	h.send(tea.MouseMsg{X: len([]rune(line[:x])) + 1, Y: 1, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	if got := strings.Split(h.view(), "\n")[1]; !strings.Contains(got, "[appl 1]") {
		t.Fatalf("a click on the applied tab: %q", got)
	}
}

// At 60 columns every screen's help line keeps the way back and the help
// key: lower-priority bindings give way first.
func TestNarrowHelpLinesKeepEscAndHelp(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"detail", []string{"enter"}},
		{"detail of an applied op", []string{"5", "enter"}},
		{"audit log", []string{"D"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t, config(fixture(t)), 60, 20)
			h.keys(tc.keys...)
			lines := strings.Split(h.view(), "\n")
			help := lines[len(lines)-1]
			if !strings.Contains(help, "esc back") || !strings.Contains(help, "? help") {
				t.Fatalf("help line at 60 columns: %q", help)
			}
		})
	}
}

// The contradicted count is in the tabs at 80 columns too (shortened), not
// only on wide screens.
func TestTabsShowTheContradictedCountAt80Columns(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.contains("!1")
	h.send(tea.WindowSizeMsg{Width: 140, Height: 30})
	h.contains("! 1 contradicted")
}

// Marks outlive a tab change; the bulk form says which marked operations
// are not on the tab shown, so it never reads as the rows on screen.
func TestTheBulkFormSaysMarkedOperationsNotOnThisTab(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 30)
	h.keys("space") // an unknown operation
	h.keys("3")     // the not_applied tab
	h.keys("n")
	containsText(t, h, "1 marked operation, not on this tab")
}
