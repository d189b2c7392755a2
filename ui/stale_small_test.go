package ui

import (
	"strings"
	"testing"
)

// At 40×10 the single-decision form, against the last check, lost its
// bottom border and its fields once "Changed since you opened this"
// arrived: the tiny form kept the change's full sentence (five wrapped
// lines at 40 columns). It says it in a few words there, as the tiny
// review does, and the fields, the warning and the box's bottom stay.
func TestSmallFormKeepsItsFieldsWhenTheOperationChangesUnderIt(t *testing.T) {
	for _, size := range []struct{ w, h int }{{40, 10}, {50, 12}, {60, 15}} {
		l := overrideLedger(t, tinyKey)
		h := open(t, config(l), size.w, size.h)
		selectOp(t, h, tinyTenant+"/"+tinyKey)
		h.keys("enter", "n")
		h.tick()
		l.decide(t, "mark_applied", tinyTenant, tinyKey)
		h.tick()
		v := h.view()
		if !strings.Contains(v, "╰") {
			t.Fatalf("%dx%d: the box has no bottom border:\n%s", size.w, size.h, v)
		}
		flat := boxText(v)
		for _, want := range []string{"Evidence", "Reason", "applied", "esc"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%dx%d: box lacks %q:\n%s", size.w, size.h, want, v)
			}
		}
		saysHasIt(t, h)
	}
}
