package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// graceLedger is two unknown operations the provider has nothing of:
// old-1's request long past the grace, new-1's within it (the service's
// grace is an hour); both already looked up, so the review asks nobody.
func graceLedger(t *testing.T) *ledger {
	t.Helper()
	l := newLedger(t)
	l.nothingThere(t, "acme", "old-1", "a@acme.example")
	l.clock.Advance(2 * time.Hour)
	l.nothingThere(t, "acme", "new-1", "b@acme.example")
	for _, k := range []string{"old-1", "new-1"} {
		if _, _, err := l.svc.CheckAndRecord(t.Context(), "acme", k, "bob"); err != nil {
			t.Fatal(err)
		}
	}
	l.svc.Grace = time.Hour
	return l
}

// The bulk review says, before y, how many marked rows are within the
// grace after their latest request and are skipped, and when to decide;
// y writes the others and skips them, as it said. At 140×40 and 40×10.
func TestBulkReviewSaysWhichRowsTheGraceSkipsBeforeTheWrite(t *testing.T) {
	for _, size := range []struct{ w, h int }{{140, 40}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			l := graceLedger(t)
			h := open(t, config(l), size.w, size.h)
			h.keys("*", "n")
			h.typeText("provider incident INC-7")
			h.keys("tab")
			h.typeText("INC-7")
			h.keys("enter")
			if size.w >= 140 {
				containsText(t, h, "Write 1 decision to the ledger?", "1 of them is within the grace: the provider may still apply its latest request", "the write skips it (nothing written for it)", "skipped: within the grace")
			} else {
				h.contains("1 in the grace: skipped", "1 to write")
			}
			golden(t, fmt.Sprintf("bulk_grace_review_%dx%d", size.w, size.h), h.view())
			checkFrame(t, "bulk review", h, size.w, size.h)
			for k, want := range map[string]model.State{"old-1": model.StateUnknown, "new-1": model.StateUnknown} {
				if d := l.get(t, "acme", k); d.Operation.State != want {
					t.Fatalf("%s before y: %s", k, d.Operation.State)
				}
			}
			h.keys("y")
			if size.w >= 140 {
				h.contains("1 written · 1 skipped: within the grace")
			}
			for k, want := range map[string]model.State{"old-1": model.StateNotApplied, "new-1": model.StateUnknown} {
				if d := l.get(t, "acme", k); d.Operation.State != want {
					t.Errorf("%s after y: %s, want %s", k, d.Operation.State, want)
				}
			}
		})
	}
}

// The review by finding (R) counts the rows its write skipped within the
// grace in its summary, and says when to decide for each.
func TestReviewByFindingCountsRowsSkippedWithinTheGrace(t *testing.T) {
	for _, size := range []struct{ w, h int }{{140, 40}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			l := graceLedger(t)
			l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
			h := open(t, config(l), size.w, size.h)
			h.keys("R", "enter", "y")
			if size.w >= 140 {
				h.contains("1 written · 1 skipped: within the grace", "within the grace: sent")
			} else {
				h.contains("1 written, 1 skipped")
			}
			checkFrame(t, "review by finding results", h, size.w, size.h)
			for k, want := range map[string]model.State{"old-1": model.StateNotApplied, "new-1": model.StateUnknown} {
				if d := l.get(t, "acme", k); d.Operation.State != want {
					t.Errorf("%s after the review: %s, want %s", k, d.Operation.State, want)
				}
			}
		})
	}
}
