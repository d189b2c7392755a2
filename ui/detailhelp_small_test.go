package ui

import (
	"strings"
	"testing"
)

// At 40 columns the detail's help line kept only "c check" of its action
// keys: a, n and s worked but the line never named them. Too narrow for
// their words, it names the keys that act together, then esc.
func TestNarrowDetailHelpNamesItsActionKeys(t *testing.T) {
	l := pastGrace(t) // within the grace, n says it needs the override (TestTheKeysSayTheOverrideWithinTheGrace)
	for _, w := range []int{40, 50} {
		h := open(t, config(l), w, 10)
		selectOp(t, h, "acme/notify-1")
		h.keys("enter")
		line := lastLine(h)
		for _, want := range []string{"c/a/n/s", "esc", "? help", "q quit"} {
			if !strings.Contains(line, want) {
				t.Errorf("%d columns: help line %q lacks %q", w, line, want)
			}
		}
	}
	h := open(t, config(l), 120, 30)
	selectOp(t, h, "acme/notify-1")
	h.keys("enter")
	h.contains("c check • a applied • n not applied • s new key • esc back")
}
