package reconcile_test

// The lab article's five scenarios ("Your agent's tool timed out. Did it
// create the job?"), each with a real worker process that exits before or
// after commit, then the next attempt in another process.

import (
	"bytes"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

func TestLabArticleFiveScenarios(t *testing.T) {
	const jobTool = "create_report_job"
	cases := []struct {
		name       string
		die        reconcile.Point // "" completes normally
		nextKey    string
		nextReport string
		before     int // jobs after the first call
		after      int // jobs after the next attempt
		rejected   bool
	}{
		{"stops before commit, same key, same report", reconcile.PointBeforeCommit, "op-a", "weekly", 0, 1, false},
		{"stops after commit before acknowledgment, same key, same report", reconcile.PointAfterCommit, "op-a", "weekly", 1, 1, false},
		{"stops after commit before acknowledgment, new key, same report", reconcile.PointAfterCommit, "op-b", "weekly", 1, 2, false},
		{"stops after commit before acknowledgment, same key, different report", reconcile.PointAfterCommit, "op-a", "daily", 1, 1, true},
		{"completes normally, deliberate second job under a new key", "", "op-b", "weekly", 1, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			l.close()
			first := l.spec(report("op-a", "weekly"))
			first.DieAt = c.die
			code, firstRep := runChildProcess(t, first)
			// Acknowledgment: a worker that died printed nothing; one that
			// completed printed the receipt.
			switch {
			case c.die != "" && (code != exitDied || firstRep != nil):
				t.Fatalf("first worker exit %d, report %+v; want it to die with no acknowledgment", code, firstRep)
			case c.die == "" && (code != 0 || len(firstRep.Errors) > 0 || firstRep.Results[0].Outcome != model.OutcomeCreated):
				t.Fatalf("first worker exit %d, report %+v; want an acknowledged creation", code, firstRep)
			}
			l.open()
			if n := l.effects(jobTool); n != c.before {
				t.Fatalf("jobs after the first call: %d, want %d", n, c.before)
			}
			var jobsBefore *model.Detail
			if c.before > 0 {
				jobsBefore = l.detail("lab", "op-a")
			}
			snapBefore := l.snapshot("attempts")
			l.close()

			code, next := runChildProcess(t, l.spec(report(c.nextKey, c.nextReport)))
			if code != 0 || len(next.Errors) > 0 {
				t.Fatalf("next attempt exit %d, errors %v", code, next.Errors)
			}
			res := next.Results[0]
			l.open()
			if n := l.effects(jobTool); n != c.after {
				t.Errorf("jobs before → after: %d → %d, want %d → %d", c.before, n, c.before, c.after)
			}
			if c.rejected {
				if res.Class != model.ClassConflict || res.Receipt != nil {
					t.Errorf("changed report under the same key = %+v; want it rejected as a conflict", res)
				}
				// Rejected means untouched: the job rows and operation are as
				// they were, only an attempt row was added.
				if l.snapshot("attempts") != snapBefore {
					t.Error("the rejected attempt changed the ledger beyond its attempt row")
				}
			} else if res.Class != model.ClassDone || res.Receipt == nil {
				t.Errorf("next attempt = %+v; want an acknowledged receipt", res)
			}
			// Receipt/job agreement: every applied operation's receipt names
			// exactly one job of its own, and the acknowledgment names it too.
			l.audit()
			if res.Receipt != nil {
				op := l.op("lab", c.nextKey)
				var stored model.Receipt
				mustUnmarshal(t, op.Receipt, &stored)
				if !bytes.Equal(stored.Result, res.Receipt.Result) {
					t.Errorf("acknowledged %s, the ledger's receipt says %s", res.Receipt.Result, stored.Result)
				}
				wantOutcome := model.OutcomeCreated
				if c.nextKey == "op-a" && c.before == 1 {
					wantOutcome = model.OutcomeReplayed
				}
				if res.Outcome != wantOutcome {
					t.Errorf("next attempt outcome %s, want %s", res.Outcome, wantOutcome)
				}
				if wantOutcome == model.OutcomeReplayed && jobsBefore != nil && !bytes.Equal(jobsBefore.Operation.Receipt, op.Receipt) {
					t.Error("the replay changed the stored receipt")
				}
			}
			ops, err := l.st.List(t.Context(), storeAll())
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != c.after {
				t.Errorf("%d operations (receipts) for %d jobs", len(ops), c.after)
			}
		})
	}
}
