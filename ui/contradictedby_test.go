package ui

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operation a lookup flagged contradicted (a check that found the
// delivery of a not_applied operation) names the lookup, not a
// late_result attempt it does not have.
func TestAContradictionALookupFlaggedNamesTheLookup(t *testing.T) {
	l := newLedger(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	l.unknown(t, "acme", "k-1", "cfo@acme.example")
	if _, err := l.svc.MarkNotApplied(context.Background(), reconcile.Decision{Tenant: "acme", Key: "k-1", Operator: "bob",
		Reason: "nothing in the inbox", Evidence: "ticket 7"}); err != nil {
		t.Fatal(err)
	}
	lookNow(t, l, "acme", "k-1")
	d := l.get(t, "acme", "k-1")
	if !d.Operation.Contradicted {
		t.Fatalf("the lookup did not flag it: %+v", d.Operation)
	}
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeLateResult {
			t.Fatalf("a late_result attempt exists: the test shows nothing")
		}
	}
	h := open(t, config(l), 120, 40)
	h.keys("3") // not_applied
	selectOp(t, h, "acme/k-1")
	h.keys("enter")
	containsText(t, h, "! Contradicted", "a provider lookup", "ops check by bob")
	h.lacks("late_result attempt")
}
