package ui

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// lookNow is another operator's `ops check`: the provider is asked and
// its finding recorded, which changes neither the state nor the version.
func lookNow(t *testing.T, l *ledger, tenant, key string) {
	t.Helper()
	op, err := l.st.Get(context.Background(), tenant, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.second(t).Look(context.Background(), op, "ops check by bob"); err != nil {
		t.Fatal(err)
	}
}

// An open "not applied" form learns of a lookup recorded after it opened
// (another shell's ops check found the delivery): its review names the
// finding and asks for the override the write would need.
func TestAnOpenFormLearnsOfAFindingRecordedAfterItOpened(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "k-1", "cfo@acme.example")
	h := open(t, config(l), 120, 40)
	selectOp(t, h, "acme/k-1")
	h.keys("n")
	h.typeText("timed out, nothing in the inbox")
	h.keys("tab")
	h.typeText("ticket 42")
	containsText(t, h, "Mark not applied")
	lookNow(t, l, "acme", "k-1")
	h.tick()
	containsText(t, h, "! Against the last check", "found the effect")
	h.keys("enter")
	containsText(t, h, "! Against the last check", "Type override")
	h.keys("y")
	if op := l.get(t, "acme", "k-1").Operation; op.State != model.StateUnknown {
		t.Fatalf("y wrote against the finding: %s", op.State)
	}
}

// A review opened before the lookup was recorded is refused by the
// ledger; the next review says why and asks for the override. The
// console's own provider cannot be asked (its look before the review says
// "cannot tell"); another operator's can.
func TestAfterARefusalAgainstAFindingTheNextReviewAsksForTheOverride(t *testing.T) {
	l := newLedger(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	l.unknown(t, "acme", "k-1", "cfo@acme.example")
	cfg := config(l)
	cfg.Service = cannotAsk(t, l)
	h := open(t, cfg, 120, 40)
	selectOp(t, h, "acme/k-1")
	h.keys("n")
	h.typeText("timed out, nothing in the inbox")
	h.keys("tab")
	h.typeText("ticket 42")
	h.keys("enter")
	containsText(t, h, "Write this decision to the ledger?")
	lookNow(t, l, "acme", "k-1") // no tick: the screen has not seen it
	h.keys("y")
	containsText(t, h, "Not written", "! Against the last check", "found the effect")
	h.keys("enter")
	containsText(t, h, "! Against the last check", "Type override")
	h.typeText("override")
	h.keys("enter")
	if op := l.get(t, "acme", "k-1").Operation; op.State != model.StateNotApplied {
		t.Fatalf("the override was not written: %s\n%s", op.State, h.view())
	}
}

// An open review by finding learns of an attempt that made a "has nothing"
// stale (a late provider answer; a refused retry sent nothing and leaves
// it standing): it no longer proposes "not applied" for it, and its
// confirmation goes back to the form, saying why, before y could write it.
func TestAnOpenReviewByFindingLearnsOfARetryThatMadeAFindingStale(t *testing.T) {
	l := findingsLedger(t)
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	h := open(t, config(l), 140, 40)
	h.keys("T", "esc")
	h.keys("R")
	h.contains("Mark not applied — an authoritative provider has nothing (1)")
	h.keys("enter")
	h.contains("Write 3 decisions")
	// The caller retries: refused, it sends nothing, and the finding
	// stands — the review goes on.
	if res := l.notify(t, "acme", "nothing-1", "c@acme.example", provider.Faults{}); res.Outcome != model.OutcomeRefused {
		t.Fatalf("the retry: %+v; want refused", res)
	}
	if f := l.get(t, "acme", "nothing-1").Operation.Finding; f == nil || f.Stale {
		t.Fatalf("a refused retry made the finding stale: %+v", f)
	}
	h.tick()
	h.contains("Write 3 decisions")
	h.lacks("Changed since this review opened")
	// A late answer from the provider is news: the finding is stale.
	op := l.get(t, "acme", "nothing-1").Operation
	if err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLateResult, Fingerprint: op.Fingerprint,
			Error: "provider said no definite answer (reply lost)", WorkerID: "w", StartedAt: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	if f := l.get(t, "acme", "nothing-1").Operation.Finding; f == nil || !f.Stale {
		t.Fatalf("the late answer did not make the finding stale: %+v", f)
	}
	h.tick()
	h.contains("Changed since this review opened", "Mark applied — the provider has it (2)")
	h.lacks("Mark not applied —", "Write 3 decisions")
	h.keys("y")
	if d := l.get(t, "acme", "nothing-1"); d.Operation.State == model.StateNotApplied {
		t.Fatalf("y wrote the stale proposal")
	}
}

// A lookup recorded under an open "new key" form of an applied operation a
// late "rejected" contradicts: the lookup found nothing, but the receipt
// still stands against the new key, as the ledger holds it — the review
// still asks for the override.
func TestANewLookupDoesNotTakeTheReceiptFromANewKeysReview(t *testing.T) {
	l := fixture(t)
	l.contradictLate(t, "initech", "notify-settled", "", "provider said rejected after the operation had moved to applied")
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "initech/notify-settled")
	h.keys("enter", "s")
	h.typeText("the provider says it rejected it")
	op, err := l.st.Get(context.Background(), "initech", "notify-settled")
	if err != nil {
		t.Fatal(err)
	}
	testledger.Lookups{Worker: "triage by test", Detail: func(f model.FindingKind) string { return "no delivery" },
		At: func(int) time.Time { l.clock.Advance(time.Minute); return l.clock.Now().UTC() }}.
		Record(t, l.st, op, model.FindingHasNothing)
	h.tick()
	h.keys("enter", "enter")
	containsText(t, h, "Against the receipt", "override")
}
