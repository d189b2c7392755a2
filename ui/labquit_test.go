package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/lab"
)

// q during a lab run (step mode, held at a step) used to quit at once:
// the run's context was cancelled mid-scenario and its claim stayed in the
// ledger — in_progress, then unknown, in the UNKNOWN alarm, with R
// proposing "mark not applied" for a lab key. Leaving the screen lets a
// run finish (the README); quitting does too now: q lets the held steps
// run, says so, and quits when the run is done. ctrl+c still quits at once.
func TestQuitDuringALabRunLetsItFinishFirst(t *testing.T) {
	for _, quit := range [][]string{{"q"}, {":", "q", "enter"}} {
		l := fixture(t)
		h := open(t, config(l), 120, 35)
		sc := lab.Scenarios()
		h.m.goTo(screenLab)
		h.m.lab.seq++
		h.m.lab.scenario, h.m.lab.running, h.m.lab.waiting, h.m.lab.gate = sc[0], true, true, newLabGate()
		gate := h.m.lab.gate
		for _, k := range quit {
			h.keys(k)
		}
		if h.quit {
			t.Fatalf("%v during a lab run quit at once", quit)
		}
		select {
		case <-gate.rest:
		default:
			t.Fatalf("%v left the run held at its step", quit)
		}
		h.contains("Quitting when the lab run ends", "ctrl+c")
		h.send(labDoneMsg{Seq: h.m.lab.seq, Row: lab.Row{Scenario: sc[0].ID, OK: true}})
		if !h.quit {
			t.Fatalf("%v: the run ended and the console did not quit", quit)
		}
	}
	l := fixture(t)
	h := open(t, config(l), 120, 35)
	h.m.goTo(screenLab)
	h.m.lab.running = true
	h.keys("ctrl+c")
	if !h.quit {
		t.Fatal("ctrl+c during a lab run did not quit")
	}
}
