package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
)

// ":" commands as in k9s: scope, state, audit log, sweep, quit; a typo
// says which commands exist.
func TestColonCommands(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys(":")
	h.contains(":tenant [NAME|all], state")
	h.typeText("tenant acme")
	h.keys("enter")
	h.contains("tenant acme")
	if h.m.scope != "acme" {
		t.Fatalf("scope %q", h.m.scope)
	}
	h.keys(":")
	h.typeText("state applied")
	h.keys("enter")
	if h.m.list.state() != model.StateApplied {
		t.Fatalf("tab %q", h.m.list.state())
	}
	h.keys(":")
	h.typeText("tenant all")
	h.keys("enter")
	if h.m.scope != "" {
		t.Fatalf("scope %q", h.m.scope)
	}
	h.keys(":")
	h.typeText("tool create_report_job")
	h.keys("enter", "8")
	h.contains("report-7", "tool create_report_job (:tool clears)")
	h.lacks("notify-1", "task-1")
	h.keys(":")
	h.typeText("tool nope")
	h.keys("enter")
	h.contains("nope")
	h.keys(":")
	h.typeText("tool")
	h.keys("enter")
	h.contains("notify-1", "task-1")
	h.keys(":")
	h.typeText("audit")
	h.keys("enter")
	h.contains("Audit log")
	h.keys(":")
	h.typeText("frobnicate")
	h.keys("enter")
	h.contains(`unknown command "frobnicate": try tenant`)
	h.keys(":")
	h.typeText("state nonsense")
	h.keys("enter")
	h.contains(`unknown state "nonsense"`)
	h.keys(":", "esc")
	if h.m.overlay != overlayNone || h.quit {
		t.Fatal("esc did not leave the command line")
	}
	h.keys(":")
	h.typeText("q")
	h.keys("enter")
	if !h.quit {
		t.Fatal(":q did not quit")
	}
}

// The tenant picker shows each tenant's counts and narrows as you type.
func TestTenantPickerCountsAndTypeAhead(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("t")
	h.contains("all tenants", "acme", "5 total  2 unknown", "globex", "initech")
	h.typeText("ini")
	h.contains("▸ ini", "initech")
	h.lacks("acme", "globex")
	h.keys("backspace", "backspace", "backspace")
	h.typeText("zzz")
	h.contains(`no tenant contains "zzz"`)
	h.keys("esc") // clears the typing; a second esc would close
	h.typeText("glob")
	h.keys("enter")
	if h.m.scope != "globex" {
		t.Fatalf("scope %q", h.m.scope)
	}
}

// Mouse: a click on a tab picks it; a click on a row moves the cursor
// there, a second click opens it.
func TestMouseClicksOnTabsAndRows(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	click := func(x, y int) {
		h.send(tea.MouseMsg{X: x, Y: y, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	}
	_, at := h.m.tabsLayout(h.m.list.tab)
	click(at[4]+2, 1) // applied
	if h.m.list.state() != model.StateApplied {
		t.Fatalf("tab %q after a click on applied", h.m.list.state())
	}
	_, at = h.m.tabsLayout(h.m.list.tab)
	click(at[0]+1, 1) // unknown
	if h.m.list.state() != model.StateUnknown {
		t.Fatalf("tab %q after a click on unknown", h.m.list.state())
	}
	click(10, 4) // header, tabs, table heading, then the second row
	if got := h.selected(); got != "acme/notify-2" {
		t.Fatalf("cursor on %s after a click on the second row", got)
	}
	click(10, 4)
	h.contains("acme / notify-2", "UNKNOWN")
}
