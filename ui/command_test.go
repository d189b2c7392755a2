package ui

import (
	"testing"

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
