package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// nothingThere makes an unknown operation the provider never applied: the
// caller gave up before the slow provider took it.
func (l *ledger) nothingThere(t testing.TB, tenant, key, to string) {
	t.Helper()
	was := l.svc.DispatchTimeout
	l.svc.DispatchTimeout = 20 * time.Millisecond
	defer func() { l.svc.DispatchTimeout = was }()
	if res := l.notify(t, tenant, key, to, provider.Faults{Delay: time.Second}); res.Class != model.ClassUnknown {
		t.Fatalf("%s/%s: want unknown, got %s", tenant, key, res.Class)
	}
	// These tests look it up after the grace in which the provider may
	// still apply the request (reconcile's grace_test covers within it).
	l.svc.Grace = -1
}

func findingsLedger(t *testing.T) *ledger {
	l := newLedger(t)
	l.unknown(t, "acme", "found-1", "a@acme.example")
	l.unknown(t, "acme", "found-2", "b@acme.example")
	l.nothingThere(t, "acme", "nothing-1", "c@acme.example")
	l.task(t, "acme", "local-1", "a local task")
	return l
}

// T runs a triage in the background; rows show each finding; f filters by
// finding; R reviews: "has it" rows are marked applied with the provider's
// reference as evidence, and a "has nothing" from a provider that is not
// authoritative is left for a person, one by one.
func TestConsoleTriageThenReviewByFinding(t *testing.T) {
	l := findingsLedger(t)
	h := open(t, config(l), 140, 40)
	h.contains("FINDING", "not checked")
	h.keys("T")
	h.contains("Triage asked about 3 of 3 operations", "has it 2", "has nothing 1", "Nothing was decided")
	h.contains("has it · sbx_", "has nothing 0s")
	for _, k := range []string{"found-1", "found-2", "nothing-1"} {
		if d := l.get(t, "acme", k); d.Operation.State != model.StateUnknown || d.Operation.Finding == nil || !strings.HasPrefix(d.Operation.Finding.By, "console triage by alice") {
			t.Fatalf("%s after triage: %s, finding %+v", k, d.Operation.State, d.Operation.Finding)
		}
	}
	h.keys("f")
	h.contains("finding: has it", "found-1", "found-2")
	h.lacks("nothing-1")
	h.keys("f")
	h.contains("finding: has nothing", "nothing-1")
	h.lacks("found-1")
	h.keys("esc", "esc") // the banner, then the filter
	h.contains("found-1", "nothing-1")

	h.keys("R")
	h.contains("Review by finding", "Mark applied — the provider has it (2)",
		"Decide one by one — has nothing, but the provider's lookup is not declared authoritative (1)")
	h.lacks("Mark not applied —")
	h.keys("enter")
	h.contains("Write 2 decisions, each its own compare-and-set")
	h.keys("y")
	h.contains("2 written")
	for _, k := range []string{"found-1", "found-2"} {
		d := l.get(t, "acme", k)
		if d.Operation.State != model.StateApplied || len(d.Decisions) != 1 || d.Decisions[0].Evidence != d.Operation.Finding.Ref ||
			!strings.HasPrefix(d.Decisions[0].Evidence, "sbx_") || d.Decisions[0].Operator != "alice" {
			t.Errorf("%s: %s, decisions %+v; want applied with the finding's reference as evidence", k, d.Operation.State, d.Decisions)
		}
	}
	if d := l.get(t, "acme", "nothing-1"); d.Operation.State != model.StateUnknown {
		t.Errorf("nothing-1 was decided in bulk without an authoritative provider: %s", d.Operation.State)
	}
	h.keys("esc")
	h.contains("Review by finding: 2 of 2 decisions written")
}

// With the provider's lookup declared authoritative, "has nothing" is
// proposed as "mark not applied"; a finding that moved since the review
// was opened is refused for its row.
func TestConsoleReviewMarksNotAppliedOnlyForAnAuthoritativeProvider(t *testing.T) {
	l := findingsLedger(t)
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	h := open(t, config(l), 140, 40)
	h.keys("T")
	h.keys("R")
	h.contains("Mark applied — the provider has it (2)", "Mark not applied — an authoritative provider has nothing (1)")
	h.lacks("Decide one by one")
	// Someone checks found-1 again while the review is open.
	if _, _, err := l.svc.CheckAndRecord(t.Context(), "acme", "found-1", "bob"); err != nil {
		t.Fatal(err)
	}
	h.keys("enter", "y")
	h.contains("2 written · 1 refused as stale", "looked up again since you saw")
	if d := l.get(t, "acme", "nothing-1"); d.Operation.State != model.StateNotApplied || !strings.HasPrefix(d.Decisions[0].Evidence, "provider lookup: ") {
		t.Errorf("nothing-1: %s %+v; want not applied on the lookup's evidence", d.Operation.State, d.Decisions)
	}
	if d := l.get(t, "acme", "found-1"); d.Operation.State != model.StateUnknown {
		t.Errorf("found-1 was decided on a finding that had moved: %s", d.Operation.State)
	}
}

// A read-only console starts no triage and offers no review; the detail
// shows the finding recorded by others, and c records a new one.
func TestConsoleFindingInDetailAndReadOnly(t *testing.T) {
	l := findingsLedger(t)
	if _, _, err := l.svc.CheckAndRecord(t.Context(), "acme", "nothing-1", "ops check by bob"); err != nil {
		t.Fatal(err)
	}
	cfg := config(l)
	cfg.ReadOnly = true
	ro := open(t, cfg, 140, 40)
	ro.keys("T")
	ro.contains("Triage is off in a read-only console")
	ro.keys("R")
	ro.contains("Read-only console: no decisions")
	h := open(t, config(l), 140, 40)
	for h.selected() != "acme/nothing-1" {
		h.keys("down")
	}
	h.keys("enter")
	h.contains("Last finding: has nothing", "ops check by bob", "finding         has nothing")
	h.keys("c")
	h.contains("console by alice")
	d := l.get(t, "acme", "nothing-1")
	if n := len(d.Attempts); d.Attempts[n-1].Outcome != model.OutcomeLookup || d.Attempts[n-1].WorkerID != "console by alice" {
		t.Errorf("c did not record its finding: %+v", d.Attempts[n-1])
	}
}

// A recorded finding is the decision's finding too: "has it" fills in the
// reference for "mark applied", and "mark not applied" against it needs
// the typed override, as after a check on screen.
func TestRecordedFindingIsTheDecisionsFinding(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 140, 40)
	for h.selected() != "acme/found-1" {
		h.keys("down")
	}
	h.keys("enter", "a")
	ref := l.get(t, "acme", "found-1").Operation.Finding.Ref
	h.contains("Mark applied", "› "+ref)
	h.keys("esc", "n")
	h.typeText("it was never sent")
	h.keys("tab")
	h.typeText("a ticket")
	h.keys("enter")
	h.contains("found the effect (" + ref + ")")
}

func reconcileTriageFast() reconcile.TriageOptions {
	return reconcile.TriageOptions{Rate: 10000, By: "triage by bob"}
}

// Marked rows decided in bulk obey the recorded findings too: "not
// applied" on rows whose provider has the effect is refused for those rows,
// and each says why (against its finding), not that its state forbids it.
func TestBulkNotAppliedOnMarkedRowsIsRefusedWhereTheProviderHasIt(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 140, 40)
	h.keys("*")
	h.keys("n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.keys("y")
	h.contains("1 written · 2 refused as illegal", "illegal", "refused: the provider has it (sbx_")
	h.lacks("no mark not applied from there")
	for _, k := range []string{"found-1", "found-2"} {
		if d := l.get(t, "acme", k); d.Operation.State != model.StateUnknown {
			t.Errorf("%s, which the provider has, is %s after a bulk not applied; want unknown", k, d.Operation.State)
		}
	}
}

// A provider's reference is its own: one with escapes and thousands of
// characters (an HTTP provider's ref_pointer picks any string) fills the
// "mark applied" form inert and bounded, so the form still fits and its
// reason field is still there to type in.
func TestAHostileProviderReferenceFillsTheFormInertAndBounded(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "hostile", "a@acme.example")
	op := l.get(t, "acme", "hostile").Operation
	err := l.st.WithAttemptTx(t.Context(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
			WorkerID: "triage by bob", ProviderRef: "ref\x1b[31m" + strings.Repeat("Q", 3000), Finding: model.FindingHasIt,
			Detail: "found", StartedAt: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 80, 24)
	h.keys("a")
	h.contains(`ref\x1b[31mQQQ`, "Reason")
}

// The FINDING cell never cuts the finding's words: the reference narrows
// and goes first, then the age.
func TestFindingCellKeepsItsWordsWhole(t *testing.T) {
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	at := now.Add(-3 * time.Minute)
	for _, tc := range []struct {
		f    model.Finding
		w    int
		want string
	}{
		{model.Finding{Kind: model.FindingHasIt, Ref: "sbx_123456", At: at}, 30, "has it · sbx_123456 3m"},
		{model.Finding{Kind: model.FindingHasIt, Ref: "sbx_123456", At: at}, 18, "has it · sbx…56 3m"},
		{model.Finding{Kind: model.FindingHasIt, Ref: "sbx_123456", At: at}, 11, "has it 3m"},
		{model.Finding{Kind: model.FindingHasIt, Ref: "sbx_123456", At: at}, 7, "has it"},
		{model.Finding{Kind: model.FindingHasNothing, At: at}, 11, "has nothing"},
		{model.Finding{Kind: model.FindingCannotTell, At: at}, 12, "cannot tell"},
		{model.Finding{Kind: model.FindingHasNothing, At: at, Stale: true}, 18, "stale: has nothing"},
	} {
		got := strings.TrimRight(findingCellIn(&tc.f, now, tc.w), " ")
		if got != tc.want {
			t.Errorf("%s in %d cells: %q, want %q", tc.f.Kind, tc.w, got, tc.want)
		}
	}
}

// A check asked on one operation whose answer comes after the operator has
// opened another must not show up as the other's provider evidence.
func TestAProviderCheckStillInFlightNeverLandsOnAnotherOperation(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("enter")
	h.contains("acme / notify-1")
	next, inFlight := h.m.Update(keyMsg("c")) // asked, not answered yet
	h.m = next.(Model)
	h.keys("esc", "j", "enter")
	h.contains("acme / notify-2")
	h.do(inFlight) // notify-1's answer arrives now
	h.lacks("Provider check:", "sandbox delivered")
	if h.m.detail.check != nil {
		t.Fatalf("notify-2 holds notify-1's check: %+v", h.m.detail.check)
	}
	// Its own check still works.
	h.keys("c")
	h.contains("Provider check: sandbox delivered")
}
