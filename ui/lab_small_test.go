package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/lab"
)

// On a small terminal (40×12) the Lab's step mode still shows the step
// about to run and its narration (what the audience is there for): the
// scenario list gives up rows, keeping the selected one. Before, the list
// of ten scenarios filled the screen and the narration was below its edge.
func TestLabStepModeOnASmallTerminalShowsTheNextStep(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 40, 12)
	sc := lab.Scenarios()
	lm := newLab(nil, sc, lab.LabTenant)
	lm.cursor = len(sc) - 1
	lm.scenario, lm.running, lm.waiting, lm.gate = sc[len(sc)-1], true, true, newLabGate()
	lm.steps = []lab.Step{{Text: "first call: the claim commits"}, {Text: "next attempt: same key", Why: "The ledger answers from the key alone."}}
	h.m.lab = lm
	h.m.goTo(screenLab)
	c, _ := h.m.lab.SetSize(h.m.env(), 40, h.m.bodyHeight())
	h.m.lab = c.(labModel)
	v := h.view()
	if n := strings.Count(v, "\n") + 1; n > 12 {
		t.Fatalf("%d lines on a 12-line terminal:\n%s", n, v)
	}
	for _, want := range []string{"▶ next: next attempt", "The ledger answers", "space runs this step", "› " + sc[len(sc)-1].Name[:10]} {
		if !strings.Contains(v, want) {
			t.Errorf("the screen lacks %q:\n%s", want, v)
		}
	}
}
