package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// At 40 columns the FINDING column is too narrow for its words: it shows
// short forms that are never cut and never read as each other ("ha…" was
// both "has it" and "has nothing").
func TestTheFindingColumnAt40ColumnsIsNeverAmbiguous(t *testing.T) {
	l := newLedger(t)
	for _, k := range []string{"k-it", "k-nothing", "k-cannot", "k-unchecked"} {
		l.unknown(t, "acme", k, "cfo@acme.example")
	}
	recordLookups(t, l, "k-it", []model.FindingKind{model.FindingHasIt})
	recordLookups(t, l, "k-nothing", []model.FindingKind{model.FindingHasNothing})
	recordLookups(t, l, "k-cannot", []model.FindingKind{model.FindingCannotTell})
	h := open(t, config(l), 40, 10)
	// The keys are clipped in their middle: their starts name them.
	want := map[string]string{"k-it ": "has it", "k-no": "none", "k-cannot": "can't", "k-un": "—"}
	for _, line := range strings.Split(h.view(), "\n") {
		if strings.Contains(line, "…") && (strings.Contains(line, " ha…") || strings.Contains(line, " no…")) {
			t.Errorf("a cut finding: %q", line)
		}
		for k, w := range want {
			if strings.Contains(line, k) {
				if !strings.HasSuffix(strings.TrimRight(line, " "), w) {
					t.Errorf("%s: want the finding %q at the end of %q", k, w, line)
				}
				delete(want, k)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("rows not seen %v:\n%s", want, h.view())
	}
}

// A review against a finding shows its warning and the override prompt at
// every size the console runs at, down to 40×10: y never goes into a
// field nobody can see.
func TestTheReviewAgainstAFindingShowsItsWarningAndPromptAtEverySize(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "op_01JXZZM1QR3CVPC", "cfo@acme.example")
	lookNow(t, l, "acme", "op_01JXZZM1QR3CVPC")
	for _, size := range []struct{ w, h int }{{40, 10}, {60, 15}, {60, 20}, {80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			h := open(t, config(l), size.w, size.h)
			h.keys("n")
			visible(t, h, "Against")
			h.typeText("timed out")
			h.keys("tab")
			h.typeText("ticket 42")
			h.keys("enter")
			visible(t, h, "Against", "override", "›", "╰")
			h.keys("y")
			visible(t, h, "override", "› y")
			h.m.Close()
		})
	}
}

// visible checks the screen holds want and fits the terminal.
func visible(t *testing.T, h *harness, want ...string) {
	t.Helper()
	v := h.view()
	if n := strings.Count(v, "\n") + 1; n > h.m.height {
		t.Fatalf("%d lines on a %d-line screen:\n%s", n, h.m.height, v)
	}
	flat := strings.Join(strings.Fields(v), " ")
	for _, w := range want {
		if !strings.Contains(v, w) && !strings.Contains(flat, w) {
			t.Fatalf("screen lacks %q at %dx%d:\n%s", w, h.m.width, h.m.height, v)
		}
	}
}
