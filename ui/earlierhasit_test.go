package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// A lookup that found the effect binds for good: a later lookup (or the
// check on the screen) that finds nothing must not make the detail call
// it evidence to mark the operation not applied — the ledger refuses that
// without the override, and the next call would send it a second time.
// never-1 was never delivered (a provider whose lookup forgot it answers
// "has nothing" now); an earlier lookup recorded "has it · sbx_earlier".
func TestTheDetailNeverCallsHasNothingEvidenceAfterAnEarlierHasIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history []model.FindingKind // recorded after the earlier "has it"
		check   bool                // press c on the detail (the sandbox has nothing)
	}{
		{"a later recorded has nothing", []model.FindingKind{model.FindingHasNothing}, false},
		{"the check on the screen finds nothing", nil, true},
		{"a retry, then the check finds nothing", []model.FindingKind{""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t)
			l.inFlight(t, "acme", "never-1", "cfo@acme.example")
			l.clock.Advance(2 * time.Hour)
			if _, err := l.svc.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			recordLookups(t, l, "never-1", append([]model.FindingKind{model.FindingHasIt}, tc.history...))
			l.svc.Grace = -1 // the check is after the grace of the retry's request
			h := open(t, config(l), 120, 40)
			selectOp(t, h, "acme/never-1")
			h.keys("enter")
			if tc.check {
				h.keys("c")
				containsText(t, h, "Provider check")
			}
			v := boxText(h.view())
			if strings.Contains(v, "evidence to mark it not applied") {
				t.Fatalf("the detail calls it evidence for not applied after an earlier has it:\n%s", h.view())
			}
			containsText(t, h, "An earlier lookup found it: sbx_earlier", "marking it not applied (n) goes against it")
			h.keys("n")
			containsText(t, h, "! Against an earlier check", "found the effect (sbx_earlier)")
		})
	}
}

// recordLookups records lookup attempts on acme/key in order ("" is a
// retry: a dispatched attempt).
func recordLookups(t *testing.T, l *ledger, key string, findings []model.FindingKind) {
	t.Helper()
	ctx := context.Background()
	op, err := l.st.Get(ctx, "acme", key)
	if err != nil {
		t.Fatal(err)
	}
	testledger.Lookups{Worker: "triage by test", Ref: "sbx_earlier",
		Detail: func(f model.FindingKind) string { return string(f) },
		At:     func(int) time.Time { l.clock.Advance(time.Minute); return l.clock.Now().UTC() }}.
		Record(t, l.st, op, findings...)
}
