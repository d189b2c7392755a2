package ui

import (
	"context"
	"fmt"
	toolconfig "github.com/retrysafe/retrysafe/config"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Space marks rows; a bulk decision lists each from → to, writes each as
// its own compare-and-set with the version on screen, and shows every
// row's result: one settled elsewhere meanwhile is refused as stale.
func TestBulkDecisionOnMarkedRowsShowsEachResult(t *testing.T) {
	l := fixture(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	h := open(t, unreachableConfig(l), 120, 40)
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
	// The rows are read again first: notify-1, settled by bob, is said
	// to have changed (the write refuses it) and is not asked about.
	// notify-2's provider is asked, and cannot tell: it stays the
	// operator's decision, on the evidence typed.
	containsText(t, h, "Write 1 decision to the ledger?", "acme/notify-1", "acme/notify-2", "unknown (v2) → not_applied", "cannot tell",
		"changed since you marked it: now not_applied (v3)")
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

// unreachableConfig is config(l) with a sandbox provider that cannot be
// asked (its file is gone): every lookup says "cannot tell".
func unreachableConfig(l *ledger) Config {
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, toolconfig.Default().Tools, provider.Registry{"sandbox": provider.Unreachable("sandbox", true, "no provider file")})
	cfg.Service.Grace = l.svc.Grace
	return cfg
}

// A bulk "not applied" asks each row's provider first (none was checked):
// the rows whose provider has the effect are refused one by one, each
// naming its finding; the row it has nothing of is written; the findings
// are recorded. Then o, override, enter writes against them — explicitly.
func TestBulkNotAppliedAsksEachRowsProviderFirst(t *testing.T) {
	l := findingsLedger(t)
	h := open(t, config(l), 140, 40)
	h.contains("[unknown 3]", "not checked")
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.contains("Write 1 decision to the ledger?", "refused: the provider has it (sbx_", "has nothing",
		"2 operations go against the provider's finding", "y write the others", "o override")
	for _, k := range []string{"found-1", "found-2", "nothing-1"} {
		if f := l.get(t, "acme", k).Operation.Finding; f == nil || f.By != "alice" {
			t.Fatalf("%s: the lookup before the review was not recorded: %+v", k, f)
		}
	}
	h.keys("y")
	h.contains("1 written · 2 refused as illegal", "illegal", "refused: the provider has it (sbx_")
	for k, want := range map[string]model.State{"found-1": model.StateUnknown, "found-2": model.StateUnknown, "nothing-1": model.StateNotApplied} {
		if d := l.get(t, "acme", k); d.Operation.State != want {
			t.Errorf("%s is %s after the bulk not applied; want %s", k, d.Operation.State, want)
		}
	}
	// Again, overriding: the recorded findings are used (no new lookup),
	// and only the typed word writes against them.
	h.keys("esc", "*", "n")
	h.typeText("the provider's lookup is wrong: INC-7")
	h.keys("tab")
	h.typeText("INC-7 postmortem")
	h.keys("enter")
	h.contains("Nothing to write: 2 against the provider's finding.", "o override · esc back")
	h.lacks("y write", "write the others")
	h.keys("o")
	h.contains("Type override and press enter to write them all")
	h.keys("enter")
	h.contains(`type "override" to write against the findings`)
	h.typeText("override")
	h.contains("Override: write 2 decisions to the ledger, 2 against the provider's finding?")
	h.keys("enter")
	h.contains("2 written")
	for _, k := range []string{"found-1", "found-2"} {
		d := l.get(t, "acme", k)
		if d.Operation.State != model.StateNotApplied || len(d.Attempts) != 2 {
			t.Errorf("%s after the override: %s with %d attempts (want not_applied, the call and one lookup)", k, d.Operation.State, len(d.Attempts))
		}
	}
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
// "triaged": every row has a fresh recorded finding (has nothing), which
// the decision uses; "unchecked": the console asks each row's provider
// first, at the triage rate (100 lookups a second per provider), so the
// asking, not the writing, takes the time.
// expiredNotifications makes n notifications (acme/k-0000 …) claimed and
// their leases ended in one transaction: n candidates for a triage and a
// bulk decision, made fast.
func expiredNotifications(b *testing.B, l *ledger, n int) {
	b.Helper()
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		for j := 0; j < n; j++ {
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
}

func BenchmarkMarkAllAndDecide1000(b *testing.B) {
	b.Run("triaged", func(b *testing.B) { benchMarkAllAndDecide(b, true) })
	b.Run("unchecked", func(b *testing.B) { benchMarkAllAndDecide(b, false) })
}

func benchMarkAllAndDecide(b *testing.B, triaged bool) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := newLedger(b)
		expiredNotifications(b, l, 1000)
		noGrace(l) // what it measures is the write, not the grace's refusals
		if triaged {
			if _, err := l.svc.Triage(context.Background(), reconcile.TriageOptions{Rate: 1e6, By: "bench"}); err != nil {
				b.Fatal(err)
			}
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

// A keystroke on the review of 5,000 marked rows (the most one bulk
// decision takes), each with a recorded finding: < 10 ms.
func BenchmarkBulkReviewKeystroke5000(b *testing.B) {
	l := newLedger(b)
	expiredNotifications(b, l, 5000)
	if _, err := l.svc.Triage(context.Background(), reconcile.TriageOptions{Rate: 1e6, By: "bench"}); err != nil {
		b.Fatal(err)
	}
	h := open(b, config(l), 120, 40)
	h.keys("*", "n")
	h.typeText("provider incident")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.contains("Write 5,000 decisions")
	m := h.m
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, _ := m.Update(keyMsg("x"))
		_ = next.View()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/key")
}
