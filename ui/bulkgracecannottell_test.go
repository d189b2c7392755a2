package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// cannotTellInGrace is unknown operations whose provider cannot be asked
// (a recorded "cannot tell"; the console's service cannot ask it either):
// old-1's request long past the grace (an hour), if old, the others'
// within it.
func cannotTellInGrace(t *testing.T, old bool, within ...string) (*ledger, Config) {
	t.Helper()
	l := newLedger(t)
	keys := within
	if old {
		l.nothingThere(t, "acme", "old-1", "a@acme.example")
		l.clock.Advance(2 * time.Hour)
		keys = append([]string{"old-1"}, within...)
	}
	for i, k := range within {
		l.nothingThere(t, "acme", k, fmt.Sprintf("%d@acme.example", i))
	}
	l.svc.Grace = time.Hour
	gone := cannotAsk(t, l)
	for _, k := range keys {
		if _, _, err := gone.CheckAndRecord(t.Context(), "acme", k, "bob"); err != nil {
			t.Fatal(err)
		}
		if f := l.get(t, "acme", k).Operation.Finding; f == nil || f.Kind != model.FindingCannotTell {
			t.Fatalf("%s's finding: %+v", k, f)
		}
	}
	cfg := config(l)
	cfg.Service = gone
	return l, cfg
}

// The bulk review counted rows within the grace among those y writes "on
// your evidence alone" (the provider cannot tell) and offered "y write
// them" with nothing to write: its rows said "skipped: within the grace",
// its warning "y writes them". The rows the grace skips are not counted
// as written, and with nothing to write y is not offered: the review says
// so, and y writes nothing.
func TestBulkReviewDoesNotOfferToWriteRowsTheGraceSkips(t *testing.T) {
	for _, size := range []struct{ w, h int }{{140, 40}, {40, 10}} {
		t.Run(fmt.Sprintf("all within %dx%d", size.w, size.h), func(t *testing.T) {
			l, cfg := cannotTellInGrace(t, false, "g1", "g2")
			h := open(t, cfg, size.w, size.h)
			h.keys("*", "n")
			h.typeText("provider incident INC-7")
			h.keys("tab")
			h.typeText("INC-7")
			h.keys("enter")
			if h.m.action.stage != stageConfirm {
				t.Fatalf("not on the review:\n%s", h.view())
			}
			if size.w >= 140 {
				containsText(t, h, "Nothing to write", "2 of them are within the grace", "skipped: within the grace")
			} else {
				h.contains("Nothing to write", "2 in the grace: skipped")
			}
			h.lacks("cannot tell about", "cannot tell: your", "write them", "write the others", "y write", "Write 0")
			checkFrame(t, "bulk review", h, size.w, size.h)
			h.keys("y")
			if h.m.action.stage != stageConfirm {
				t.Fatalf("y with nothing to write left the review (stage %d):\n%s", h.m.action.stage, h.view())
			}
			for _, k := range []string{"g1", "g2"} {
				if d := l.get(t, "acme", k); d.Operation.State != model.StateUnknown {
					t.Errorf("%s after y: %s", k, d.Operation.State)
				}
			}
		})
		t.Run(fmt.Sprintf("one outside %dx%d", size.w, size.h), func(t *testing.T) {
			l, cfg := cannotTellInGrace(t, true, "g1", "g2")
			h := open(t, cfg, size.w, size.h)
			h.keys("*", "n")
			h.typeText("provider incident INC-7")
			h.keys("tab")
			h.typeText("INC-7")
			h.keys("enter")
			if size.w >= 140 {
				containsText(t, h, "Write 1 decision to the ledger?", "The provider cannot tell about 1 of them", "y writes it on your evidence alone", "2 of them are within the grace")
				h.lacks("cannot tell about 3", "cannot tell about 2")
			} else {
				h.contains("1 to write", "! 1 cannot tell", "2 in the grace: skipped", "y write 1")
			}
			checkFrame(t, "bulk review", h, size.w, size.h)
			h.keys("y")
			for k, want := range map[string]model.State{"old-1": model.StateNotApplied, "g1": model.StateUnknown, "g2": model.StateUnknown} {
				if d := l.get(t, "acme", k); d.Operation.State != want {
					t.Errorf("%s after y: %s, want %s", k, d.Operation.State, want)
				}
			}
		})
	}
}
