package ui

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// shownCount is the number in the view that re matches (0 if none).
func shownCount(t *testing.T, view string, re string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(view)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A bulk "applied" on a mixed selection — two rows it writes, one whose
// provider has nothing (against its finding), one decided "not applied"
// whose finding is "has nothing" too (its state refuses it), one applied
// (its state refuses it): the form's and the review's counts are what the
// write then does, with y and with the override typed.
func TestBulkCountsShownAreWhatTheWriteDoes(t *testing.T) {
	for _, override := range []bool{false, true} {
		t.Run(fmt.Sprintf("override=%v", override), func(t *testing.T) {
			l := newLedger(t)
			ctx := context.Background()
			l.unknown(t, "acme", "found-1", "a@acme.example")
			l.unknown(t, "acme", "found-2", "b@acme.example")
			l.nothingThere(t, "acme", "nothing-1", "c@acme.example")
			l.nothingThere(t, "acme", "nothing-2", "d@acme.example")
			l.task(t, "acme", "local-1", "a local task")
			for _, k := range []string{"found-1", "nothing-1", "nothing-2"} {
				if _, _, err := l.svc.CheckAndRecord(ctx, "acme", k, "ops check by bob"); err != nil {
					t.Fatal(err)
				}
				l.clock.Advance(time.Second)
			}
			l.decide(t, model.ActionMarkNotApplied, "acme", "nothing-2")
			h := open(t, config(l), 140, 40)
			h.keys("8", "*", "a")
			h.contains("Mark applied — 5 marked operations")
			formAgainst := shownCount(t, h.view(), `(\d+) marked operations? go(?:es)? against a recorded finding`)
			h.typeText("INC-7")
			h.keys("tab")
			h.typeText("provider incident, checked by hand")
			h.keys("enter")
			v := h.view()
			reviewWrite := shownCount(t, v, `Write (\d+) decisions? to the ledger\?`)
			reviewAgainst := shownCount(t, v, `(\d+) operations? go(?:es)? against the provider's finding`)
			refusedByState := len(regexp.MustCompile(`refused: \w+ allows no`).FindAllString(v, -1))
			refusedByFinding := len(regexp.MustCompile(`refused: the provider`).FindAllString(v, -1))
			if override {
				h.keys("o")
				h.typeText("override")
				// The override screen says what override writes.
				reviewWrite = shownCount(t, h.view(), `Override: write (\d+) decisions? to the ledger`)
				h.keys("enter")
			} else {
				h.keys("y")
			}
			n := map[reconcile.Verdict]int{}
			for _, o := range h.m.action.outcomes {
				n[o.Verdict]++
			}
			if len(h.m.action.outcomes) != 5 {
				t.Fatalf("%d outcomes, want 5: %s", len(h.m.action.outcomes), h.view())
			}
			wantAgainst := 1 // nothing-1; nothing-2's state refuses it first
			if formAgainst != wantAgainst || reviewAgainst != wantAgainst {
				t.Errorf("the form says %d go against their finding, the review %d; want %d", formAgainst, reviewAgainst, wantAgainst)
			}
			if reviewWrite != n[reconcile.VerdictWritten] {
				t.Errorf("the review said it writes %d; the write wrote %d (%v)", reviewWrite, n[reconcile.VerdictWritten], n)
			}
			wantIllegal := refusedByState + refusedByFinding
			if override {
				wantIllegal = refusedByState
			}
			if refusedByFinding != reviewAgainst || wantIllegal != n[reconcile.VerdictIllegal] || reviewWrite+wantIllegal != 5 {
				t.Errorf("the review marked %d rows refused by their state, %d by their finding; the ledger refused %d (%v)",
					refusedByState, refusedByFinding, n[reconcile.VerdictIllegal], n)
			}
			h.contains(fmt.Sprintf("%d written", reviewWrite))
		})
	}
}

// A frame of the bulk form and review reads only the rows it draws: it
// allocates as much with 5,000 marked rows as with 1,000 (the per-row rule
// and the widths are worked out once, by setBulk).
func TestBulkViewWorkDoesNotGrowWithMarkedRows(t *testing.T) {
	h := open(t, config(newLedger(t)), 120, 40)
	e := h.m.env()
	allocs := func(n int, stage actionStage) float64 {
		ops := syntheticMarked(n)
		a := openBulk(model.ActionMarkApplied, ops, e.styles, 1, e.now)
		a.stage = stage
		return testing.AllocsPerRun(20, func() { _ = a.view(e, 120, 40) })
	}
	for _, stage := range []actionStage{stageForm, stageConfirm} {
		small, large := allocs(1000, stage), allocs(5000, stage)
		if large > small {
			t.Errorf("stage %d: a frame allocates %.0f times with 5,000 marked rows, %.0f with 1,000", stage, large, small)
		}
	}
}

// syntheticMarked is n unknown operations as a list shows them, each with
// a fresh "has nothing" finding (against "applied"), every third with a
// "cannot tell", every fifth in a state that refuses it.
func syntheticMarked(n int) []model.Operation {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	ops := make([]model.Operation, n)
	for i := range ops {
		op := model.Operation{ID: int64(i + 1), Tenant: "acme", Key: fmt.Sprintf("k-%05d", i), Tool: "send_notification",
			State: model.StateUnknown, Version: 2, Provider: "sandbox", DownstreamKey: fmt.Sprintf("d-%d", i), UpdatedAt: at}
		f := &model.Finding{Kind: model.FindingHasNothing, Provider: "sandbox", Detail: "no delivery", At: at, Seq: 2, By: "triage"}
		if i%3 == 0 {
			f = &model.Finding{Kind: model.FindingCannotTell, Provider: "sandbox", Detail: "cannot tell: no provider file", At: at, Seq: 2}
		}
		if i%5 == 0 {
			op.State = model.StateApplied
		}
		op.Finding = f
		ops[i] = op
	}
	return ops
}

// One frame of a bulk review with 50 and with 5,000 marked rows: the time
// is the same (run both in one go, A/B).
func BenchmarkBulkViewFrame(b *testing.B) {
	h := open(b, config(newLedger(b)), 120, 40)
	e := h.m.env()
	for _, n := range []int{50, 5000} {
		for _, stage := range []actionStage{stageForm, stageConfirm} {
			a := openBulk(model.ActionMarkApplied, syntheticMarked(n), e.styles, 1, e.now)
			a.stage = stage
			b.Run(fmt.Sprintf("rows=%d/stage=%d", n, stage), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					_ = a.view(e, 120, 40)
				}
			})
		}
	}
}
