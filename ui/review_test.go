package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Regressions found by using the console at 80×24 on the demo ledger.

// A check asked on one operation whose answer comes after the operator has
// opened another must not show up as the other's provider evidence.
func TestAProviderCheckStillInFlightNeverLandsOnAnotherOperation(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("enter")
	h.contains("acme / notify-1")
	next, inFlight := h.m.Update(keyMsg("c")) // asked, not answered yet
	h.m = next.(Model)
	h.keys("esc", "j", "enter")
	h.contains("acme / notify-2")
	h.do(inFlight) // notify-1's answer arrives now
	h.lacks("Provider check:", "sandbox delivered")
	if h.m.detail.check != nil {
		t.Fatalf("notify-2 holds notify-1's check: %+v", h.m.detail.check)
	}
	// Its own check still works.
	h.keys("c")
	h.contains("Provider check: sandbox delivered")
}

// With a banner on screen the detail's viewport is shorter; G must still
// reach the last line (the links), and the position must say 100%.
func TestDetailScrollsToTheEndWithABannerOnScreen(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.keys("6", "enter")
	h.contains("globex / notify-super", "SUPERSEDED")
	h.keys("a") // refused: a two-line banner takes room from the viewport
	h.contains("Cannot mark applied globex/notify-super")
	h.keys("G")
	h.contains("superseded by", "globex/notify-super-2", "100%")
	h.keys("esc") // the banner goes: the viewport grows and still ends at the end
	h.lacks("Cannot mark applied")
	h.contains("superseded by", "100%")
	if lines := strings.Split(h.view(), "\n"); len(lines) != 24 {
		t.Fatalf("%d lines at 80×24", len(lines))
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

// A decision's header line is wrapped in a narrow detail, not clipped at
// the edge.
func TestDecisionLinesWrapInANarrowDetail(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 40)
	h.keys("6", "enter")
	h.contains("authorize a new key  unknown → superseded", "(seen at v2)")
}

// Wrapping never breaks a hyphenated tenant or key across lines.
func TestBannersKeepHyphenatedNamesWhole(t *testing.T) {
	h := open(t, config(fixture(t)), 40, 20)
	h.send(bannerMsg{kind: bannerErr, text: "Cannot mark applied umbrella-logistics/op_1: it is applied."})
	h.contains("umbrella-logistics/op_1")
	if got := wrap("see rs-a93953a4e1348737c2e55cf03d064c5b now", 40, " "); !strings.Contains(got, "rs-a93953a4e1348737c2e55cf03d064c5b") {
		t.Fatalf("downstream key split: %q", got)
	}
}
