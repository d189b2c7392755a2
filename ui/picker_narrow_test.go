package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A long filter that matches no tenant keeps the picker's box on the
// screen, its right border drawn, at every size: the "no tenant
// contains" line used to run past the edge and push the border off.
func TestTenantPickerKeepsItsBoxOnScreenWithALongFilter(t *testing.T) {
	for _, size := range [][2]int{{120, 35}, {80, 24}, {40, 10}} {
		h := open(t, config(fixture(t)), size[0], size[1])
		h.keys("t")
		h.contains("Tenant scope")
		for _, r := range strings.Repeat("nomatch-tenant-filter-", 4) {
			h.keys(string(r))
		}
		view := h.view()
		if !strings.Contains(view, "╮") || !strings.Contains(view, "╯") {
			t.Fatalf("%dx%d: the box lost its right border:\n%s", size[0], size[1], view)
		}
		for _, line := range strings.Split(view, "\n") {
			if w := ansi.StringWidth(line); w > size[0] {
				t.Fatalf("%dx%d: a line of %d cells: %q", size[0], size[1], w, line)
			}
			if strings.HasPrefix(strings.TrimLeft(line, " "), "│") && !strings.HasSuffix(strings.TrimRight(line, " "), "│") {
				t.Fatalf("%dx%d: a box line without its right border: %q", size[0], size[1], line)
			}
		}
	}
}
