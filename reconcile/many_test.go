package reconcile_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// unknowns makes n unknown operations in one transaction, the way a sweep
// leaves claims whose workers died: claimed, lease ended, expired.
func (l *ledger) unknowns(tenant string, n int) []model.Operation {
	l.t.Helper()
	var ops []model.Operation
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		ops = ops[:0]
		for i := 0; i < n; i++ {
			p, err := config.Default().Tools.Prepare(notify(tenant, fmt.Sprintf("bulk-%05d", i), "ops@example.com"))
			if err != nil {
				return err
			}
			op, err := l.svc.ClaimTx(tx, p, "", 0, l.st.Now())
			if err != nil {
				return err
			}
			if err := l.svc.ExpireLeaseTx(tx, op); err != nil {
				return err
			}
			ops = append(ops, *op)
		}
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
	for i := range ops {
		ops[i] = *l.op(tenant, ops[i].Key)
	}
	return ops
}

// Each target is its own compare-and-set: one that moved on is refused as
// stale, one whose state does not allow the action as illegal, and the
// rest are written with a decision row each.
func TestDecideManyWritesEachAsItsOwnCompareAndSet(t *testing.T) {
	l := newLedger(t, fast())
	ops := l.unknowns("acme", 4)
	applied := l.makeState(model.StateApplied, "acme", "done")
	// Someone else settles bulk-00001 after it was seen.
	other := decision(&ops[1])
	if _, err := l.svc.MarkApplied(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	targets := []reconcile.Target{reconcile.TargetOf(ops[0]), reconcile.TargetOf(ops[1]), reconcile.TargetOf(*applied),
		reconcile.TargetOf(ops[2]), {Tenant: "acme", Key: "nope", ExpectVersion: 1}, reconcile.TargetOf(ops[3])}
	d := reconcile.Decision{Operator: "oncall", Reason: "provider incident INC-7: nothing left their queue", Evidence: "INC-7", WithinGrace: true}
	out, err := l.svc.DecideMany(context.Background(), model.ActionMarkNotApplied, d, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := []reconcile.Verdict{reconcile.VerdictWritten, reconcile.VerdictStale, reconcile.VerdictIllegal,
		reconcile.VerdictWritten, reconcile.VerdictFailed, reconcile.VerdictWritten}
	for i, o := range out {
		if o.Verdict != want[i] {
			t.Errorf("%s: %s (%v), want %s", o.Key, o.Verdict, o.Err, want[i])
		}
	}
	for _, i := range []int{0, 2, 3} {
		det, err := l.st.Detail(context.Background(), "acme", ops[i].Key)
		if err != nil {
			t.Fatal(err)
		}
		if det.Operation.State != model.StateNotApplied || len(det.Decisions) != 1 || det.Decisions[0].FromVersion != ops[i].Version {
			t.Errorf("%s: %s with %d decisions", ops[i].Key, det.Operation.State, len(det.Decisions))
		}
	}
	if got := l.op("acme", ops[1].Key); got.State != model.StateApplied {
		t.Errorf("the stale target was overwritten: %s", got.State)
	}
	if got := l.op("acme", "done"); got.State != model.StateApplied || got.Version != applied.Version {
		t.Errorf("the illegal target changed: %+v", got)
	}
}

// An invalid bulk decision writes nothing at all.
func TestDecideManyRefusesAnInvalidDecisionBeforeWriting(t *testing.T) {
	l := newLedger(t, fast())
	ops := l.unknowns("acme", 3)
	before := l.snapshot()
	var targets []reconcile.Target
	for _, op := range ops {
		targets = append(targets, reconcile.TargetOf(op))
	}
	for name, c := range map[string]struct {
		action model.Action
		d      reconcile.Decision
	}{
		"applied without evidence": {model.ActionMarkApplied, reconcile.Decision{Operator: "o", Reason: "r"}},
		"no reason":                {model.ActionMarkNotApplied, reconcile.Decision{Operator: "o", Evidence: "e"}},
		"a named new key":          {model.ActionAuthorizeKey, reconcile.Decision{Operator: "o", Reason: "r", NewKey: "x"}},
	} {
		if _, err := l.svc.DecideMany(context.Background(), c.action, c.d, targets); model.CodeOf(err) != model.CodeInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if l.snapshot() != before {
		t.Fatal("a refused bulk decision wrote")
	}
}

// Writing 1,000 decisions (the console's "mark all, decide") — the target
// is under 2 s; see the README for the measured number.
func BenchmarkDecideMany1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := newLedger(b)
		// Outside the grace (off), but the rows' graces are still read
		// before each chunk's transaction (one batched read a chunk):
		// that read is measured.
		l.svc.Grace = -1
		ops := l.unknowns("acme", 1000)
		targets := make([]reconcile.Target, len(ops))
		for j, op := range ops {
			targets[j] = reconcile.TargetOf(op)
		}
		d := reconcile.Decision{Operator: "oncall", Reason: "provider incident", Evidence: "INC-7"}
		b.StartTimer()
		out, err := l.svc.DecideMany(context.Background(), model.ActionMarkNotApplied, d, targets)
		if err != nil || len(out) != 1000 || out[999].Verdict != reconcile.VerdictWritten {
			b.Fatalf("%v %d", err, len(out))
		}
	}
}
