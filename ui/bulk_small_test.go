package ui

import (
	"fmt"
	"strings"
	"testing"
)

// A bulk decision's form and review show their fields, errors, counts,
// warning and the keys that act at every size down to 40x10 (as one
// operation's tiny box does); the override screen says what override
// writes, not the count y would write.
func TestBulkFormAndReviewAtSmallSizes(t *testing.T) {
	for _, size := range [][2]int{{40, 10}, {60, 15}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			l := findingsLedger(t)
			h := open(t, config(l), size[0], size[1])
			h.keys("*", "n")
			h.contains("Reason", "Evidence", "3 marked")
			h.typeText("provider incident INC-7")
			h.keys("enter", "enter") // no evidence: refused, said
			h.contains("Reason", "Evidence", "✗")
			h.typeText("INC-7")
			h.keys("enter")
			v := h.view()
			wants := []string{"1 to write", "2 refused", "y write", "o override", "esc"}
			if size[1] >= 24 {
				wants = []string{"Write 1 decision", "2 operations go against", "y write the others", "o override", "esc"}
			}
			for _, want := range wants {
				if !strings.Contains(v, want) {
					t.Fatalf("the review lacks %q:\n%s", want, v)
				}
			}
			h.keys("o")
			v = h.view()
			for _, want := range []string{"Type override", "3", "2 against"} {
				if !strings.Contains(v, want) {
					t.Fatalf("the override screen lacks %q:\n%s", want, v)
				}
			}
			if strings.Contains(v, "Write 1 decision") {
				t.Fatalf("the override screen says what y writes, not what override writes:\n%s", v)
			}
			h.typeText("overr")
			if v := h.view(); !strings.Contains(v, "› overr") {
				t.Fatalf("the typed override is not visible:\n%s", v)
			}
			h.typeText("ide")
			h.keys("enter")
			h.contains("3 written")
		})
	}
}
