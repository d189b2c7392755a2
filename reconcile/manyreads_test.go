package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A bulk decision the grace holds reads its rows' graces in one batched
// read a chunk (of 500), not one operation's detail per row: 1,001 rows,
// 3 reads.
func TestDecideManyReadsTheGracesOnceAChunk(t *testing.T) {
	for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionAuthorizeKey} {
		t.Run(string(action), func(t *testing.T) {
			l := newLedger(t, fast())
			l.svc.Grace = -1 // written, not skipped: the graces are read all the same
			ops := l.unknowns("acme", 1001)
			rc := &storetest.ReadCounter{Ledger: l.svc.Store}
			l.svc.Store = rc
			targets := make([]reconcile.Target, len(ops))
			for i, op := range ops {
				targets[i] = reconcile.TargetOf(op)
			}
			d := reconcile.Decision{Operator: "oncall", Reason: "provider incident", Evidence: "INC-7"}
			out, err := l.svc.DecideMany(context.Background(), action, d, targets)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range out {
				if o.Verdict != reconcile.VerdictWritten {
					t.Fatalf("%s: %s %v", o.Key, o.Verdict, o.Err)
				}
			}
			if d, b := rc.Details.Load(), rc.Batches.Load(); d != 0 || b != 3 {
				t.Errorf("%d details and %d batched reads for 1,001 rows; want 0 and 3", d, b)
			}
		})
	}
}
