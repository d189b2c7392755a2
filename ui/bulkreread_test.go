package ui

import (
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A bulk "not applied" on two never-checked rows, one of which another
// operator marks applied while the form is open: the review proposed the
// decision for it too and asked its provider again — recording a
// "has nothing" lookup on an operation already applied — and only the
// write refused it, as stale. The review reads the marked rows again (in
// one batched read) before asking anyone: the changed row is not asked
// about, the review says it changed and that the write refuses it, and y
// writes the other one.
func TestBulkReviewReadsTheMarkedRowsAgainAndSkipsThoseThatChanged(t *testing.T) {
	for _, size := range []struct{ w, h int }{{140, 40}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			l := newLedger(t)
			l.nothingThere(t, "acme", "r1", "a@acme.example")
			l.nothingThere(t, "acme", "r2", "b@acme.example")
			h := open(t, config(l), size.w, size.h)
			h.keys("*", "n")
			h.typeText("provider incident INC-7")
			h.keys("tab")
			h.typeText("INC-7")
			if _, err := l.second(t).MarkApplied(t.Context(), reconcile.Decision{Tenant: "acme", Key: "r2", Operator: "bob",
				Reason: "seen in the provider console", Evidence: "sbx_9", WithinGrace: true}); err != nil {
				t.Fatal(err)
			}
			before := len(l.get(t, "acme", "r2").Attempts)
			h.keys("enter")
			if h.m.action.stage != stageConfirm {
				t.Fatalf("not on the review (stage %d):\n%s", h.m.action.stage, h.view())
			}
			if d := l.get(t, "acme", "r2"); len(d.Attempts) != before {
				t.Errorf("r2, applied by bob, was looked up again: %d attempts, had %d (%+v)", len(d.Attempts), before, d.Operation.Finding)
			}
			if f := l.get(t, "acme", "r1").Operation.Finding; f == nil || f.Kind != model.FindingHasNothing || f.By != "alice" {
				t.Errorf("r1 was not asked first: %+v", f)
			}
			if size.w >= 140 {
				containsText(t, h, "Write 1 decision to the ledger?", "changed since you marked it: now applied (v3)",
					"1 of them changed since you marked it", "the write refuses it")
			} else {
				h.contains("1 to write", "1 changed: refused", "y write 1")
			}
			checkFrame(t, "bulk review", h, size.w, size.h)
			h.keys("y")
			for k, want := range map[string]model.State{"r1": model.StateNotApplied, "r2": model.StateApplied} {
				if d := l.get(t, "acme", k); d.Operation.State != want {
					t.Errorf("%s after y: %s, want %s", k, d.Operation.State, want)
				}
			}
			if size.w >= 140 {
				h.contains("1 written · 1 refused as stale")
			}
		})
	}
}
