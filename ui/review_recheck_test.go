package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// R on a ledger whose "has nothing" another process recorded (a restored
// backup, a copy whose other history then made the effect under the same
// downstream key) asks the provider again before proposing "not applied":
// it has the effect now, so the row is proposed "mark applied", never
// "not applied". Before, the recorded finding was proposed as it was, and
// y sent the effect a second time on the next call.
func TestReviewByFindingAsksAgainAboutAHasNothingAnotherProcessRecorded(t *testing.T) {
	l := findingsLedger(t)
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	other := reconcile.New(l.st, l.svc.Tools, l.svc.Providers)
	other.Grace = l.svc.Grace
	if _, _, err := other.CheckAndRecord(t.Context(), "acme", "nothing-1", "triage by bob"); err != nil {
		t.Fatal(err)
	}
	d := l.get(t, "acme", "nothing-1")
	if f := d.Operation.Finding; f == nil || f.Kind != model.FindingHasNothing {
		t.Fatalf("recorded finding %+v; want has nothing", f)
	}
	op := d.Operation
	if _, err := l.sb.Provider("sandbox", true).Dispatch(t.Context(), provider.Request{DownstreamKey: op.DownstreamKey, Tool: op.Tool, Args: op.Args}); err != nil {
		t.Fatal(err)
	}

	h := open(t, config(l), 140, 40)
	h.keys("R")
	h.lacks("Mark not applied —")
	h.contains("Review by finding")
	after := l.get(t, "acme", "nothing-1")
	if f := after.Operation.Finding; f == nil || f.Kind != model.FindingHasIt || f.By != "alice" {
		t.Fatalf("nothing-1 after R: finding %+v; want has it, asked by alice", f)
	}
	h.keys("enter", "y")
	if got := l.get(t, "acme", "nothing-1").Operation.State; got == model.StateNotApplied {
		t.Fatal("nothing-1 was marked not applied on a finding the provider no longer agrees with")
	}
}
