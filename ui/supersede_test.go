package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// After c found the delivery, authorizing a new key would make the effect
// a second time: the review names the finding and takes the typed
// override; y alone writes nothing.
func TestNewKeyAgainstAFoundDeliveryNeedsTheTypedOverride(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 50)
	h.keys("enter", "c")
	h.contains("Provider check: sandbox delivered sbx_")
	h.keys("s")
	h.typeText("customer asked for a resend")
	h.keys("enter", "enter")
	h.contains("Write this decision", "Against the last check: the provider check found the effect (sbx_",
		"makes it a second time", "Type override and press enter")
	h.keys("y", "enter")
	h.contains(`type "override" to write against the finding`)
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatal("a new key against the finding was authorized without the override")
	}
	h.keys("backspace") // the y went into the confirmation field
	h.typeText("override")
	h.keys("enter")
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateSuperseded || len(d.Decisions) != 1 {
		t.Fatalf("after the override: %+v %+v", d.Operation, d.Decisions)
	}
}
