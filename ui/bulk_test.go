package ui

import (
	"context"
	"fmt"
	toolconfig "github.com/retrysafe/retrysafe/config"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Space marks rows; a bulk decision lists each from → to, writes each as
// its own compare-and-set with the version on screen, and shows every
// row's result: one settled elsewhere meanwhile is refused as stale.
func TestBulkDecisionOnMarkedRowsShowsEachResult(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	h.keys("space")
	if got := h.selected(); got != "acme/notify-2" {
		t.Fatalf("space did not move down: on %s", got)
	}
	h.keys("space")
	h.contains("✓", "2 marked")
	settleElsewhere(t, l) // bob settles notify-1 after it was marked
	h.keys("n")
	h.contains("Mark not applied — 2 marked operations")
	h.typeText("provider incident INC-7 dropped the batch")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.contains("Write 2 decisions to the ledger?", "acme/notify-1", "acme/notify-2", "unknown (v2) → not_applied")
	h.keys("enter", "enter") // a repeated enter writes nothing
	if d := l.get(t, "acme", "notify-2"); d.Operation.State != model.StateUnknown {
		t.Fatal("enter wrote the bulk decision")
	}
	h.keys("y")
	h.contains("1 written · 1 refused as stale", "stale", "changed since you looked")
	if d := l.get(t, "acme", "notify-2"); d.Operation.State != model.StateNotApplied || len(d.Decisions) != 1 ||
		d.Decisions[0].Operator != "alice" || d.Decisions[0].Evidence != "INC-7" {
		t.Fatalf("notify-2: %+v %+v", d.Operation, d.Decisions)
	}
	if d := l.get(t, "acme", "notify-1"); len(d.Decisions) != 1 || d.Decisions[0].Operator != "bob" {
		t.Fatalf("notify-1 was overwritten: %+v", d.Decisions)
	}
	h.keys("esc")
	h.lacks("marked")
	h.contains("mark not applied: 1 of 2 operations written")
}

// v marks a range from the last marked row; * marks every operation in
// the view; esc clears the marks; a read-only console refuses.
func TestMarkRangeAllAndClear(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	h.keys("8") // all operations
	h.keys("space", "down", "down", "v")
	if n := h.m.list.marked.len(); n != 4 {
		t.Fatalf("space then v two rows below: %d marked, want 4", n)
	}
	h.keys("esc")
	if n := h.m.list.marked.len(); n != 0 {
		t.Fatalf("esc left %d marked", n)
	}
	h.keys("*")
	if n := h.m.list.marked.len(); n != 12 {
		t.Fatalf("* marked %d, want all 12", n)
	}
	h.contains("12 marked", "Marked 12 operations in this view")
	cfg := config(l)
	cfg.ReadOnly = true
	ro := open(t, cfg, 120, 40)
	ro.keys("space", "a")
	ro.contains("Read-only console: cannot mark applied 1 marked operation")
}

// Marking 1,000 rows and writing them: the target is under 2 s.
func BenchmarkMarkAllAndDecide1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := newLedger(b)
		err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
			for j := 0; j < 1000; j++ {
				p, err := toolconfig.Default().Tools.Prepare(model.Request{Tenant: "acme", Key: fmt.Sprintf("k-%04d", j), Tool: "send_notification",
					PayloadVersion: 1, Args: []byte(`{"to":"a@b.example","body":"x"}`)})
				if err != nil {
					return err
				}
				op, err := l.svc.ClaimTx(tx, p, "", 0, l.clock.Now())
				if err != nil {
					return err
				}
				if err := l.svc.ExpireLeaseTx(tx, op); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		h := open(b, config(l), 120, 40)
		b.StartTimer()
		h.keys("*", "n")
		h.typeText("provider incident")
		h.keys("tab")
		h.typeText("INC-7")
		h.keys("enter", "y")
		b.StopTimer()
		if len(h.m.action.outcomes) != 1000 || h.m.action.outcomes[999].Verdict != reconcile.VerdictWritten {
			b.Fatalf("%d outcomes", len(h.m.action.outcomes))
		}
	}
}
