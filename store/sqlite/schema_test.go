package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func newOp(key string, st model.State) *model.Operation {
	op := &model.Operation{Tenant: "t", Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{"subject":"s"}`), Fingerprint: strings.Repeat("0", 64), State: st}
	switch st {
	case model.StateApplied, model.StateFailed:
		op.Receipt = []byte(`{}`)
	case model.StateInProgress:
		op.LeaseUntil = time.Now().Add(time.Hour)
	}
	return op
}

// Every state of the model is storable and nothing else is: the SQL CHECK
// and model.AllStates agree on a real ledger, not only on paper.
func TestEveryModelStateIsStorableAndNoOtherIs(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	for _, st := range model.AllStates {
		err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("k-"+string(st), st)) })
		if err != nil {
			t.Errorf("state %s refused by the ledger: %v", st, err)
		}
	}
	for _, bogus := range []model.State{"done", "APPLIED", ""} {
		err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("bogus-"+string(bogus), bogus)) })
		if !model.IsCode(err, model.CodeConflict) {
			t.Errorf("state %q: err = %v; want the CHECK constraint to refuse it", bogus, err)
		}
	}
	c, err := s.Counts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != len(model.AllStates) {
		t.Errorf("%d operations stored, want %d", c.Total, len(model.AllStates))
	}
	for _, st := range model.AllStates {
		if c.ByState[st] != 1 {
			t.Errorf("count of %s = %d, want 1", st, c.ByState[st])
		}
	}
	// Tombstones keep a final state under the same CHECK.
	for _, st := range model.AllStates {
		err := s.WithTx(ctx, func(tx store.Tx) error {
			_, err := tx.(*Tx).tx.Exec(`INSERT INTO tombstones VALUES ('t', ?, 'x', 'f', ?, 0, 1)`, "ts-"+string(st), string(st))
			return err
		})
		if err != nil {
			t.Errorf("tombstone state %s refused: %v", st, err)
		}
	}
	err = s.WithTx(ctx, func(tx store.Tx) error {
		_, err := tx.(*Tx).tx.Exec(`INSERT INTO tombstones VALUES ('t', 'ts-bogus', 'x', 'f', 'gone', 0, 1)`)
		return err
	})
	if !model.IsCode(err, model.CodeConflict) {
		t.Errorf("bogus tombstone state: %v", err)
	}
}

func TestEveryOutcomeAndActionIsStorableAndNoOtherIs(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	op := newOp("k", model.StateUnknown)
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(op) }); err != nil {
		t.Fatal(err)
	}
	for _, o := range model.AllOutcomes {
		err := s.WithTx(ctx, func(tx store.Tx) error {
			a := &model.Attempt{OperationID: op.ID, Outcome: o, Fingerprint: op.Fingerprint}
			if o == model.OutcomeLookup {
				a.Finding = model.FindingCannotTell
			}
			return tx.InsertAttempt(a)
		})
		if err != nil {
			t.Errorf("outcome %s refused: %v", o, err)
		}
	}
	// InsertAttempt refuses in Go first; the CHECK must refuse too for any
	// writer that bypasses it.
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: "exploded", Fingerprint: op.Fingerprint})
	}); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("InsertAttempt with a bogus outcome: %v", err)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		_, err := tx.(*Tx).tx.Exec(`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (?, 999, 'exploded', 'f', 0)`, op.ID)
		return err
	}); !model.IsCode(err, model.CodeConflict) {
		t.Errorf("SQL accepted a bogus outcome: %v", err)
	}
	for _, a := range model.AllActions {
		err := s.WithTx(ctx, func(tx store.Tx) error {
			return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "o", Action: a, Reason: "r",
				FromState: model.StateUnknown, ToState: model.StateApplied})
		})
		if err != nil {
			t.Errorf("action %s refused: %v", a, err)
		}
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "o", Action: "delete", Reason: "r"})
	}); !model.IsCode(err, model.CodeConflict) {
		t.Errorf("bogus action: %v", err)
	}
	d, err := s.Detail(ctx, "t", "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != len(model.AllOutcomes) || len(d.Decisions) != len(model.AllActions) {
		t.Errorf("stored %d attempts and %d decisions; want %d and %d", len(d.Attempts), len(d.Decisions), len(model.AllOutcomes), len(model.AllActions))
	}
	for i, a := range d.Attempts {
		if a.Seq != i+1 {
			t.Errorf("attempt %d has seq %d; attempts are numbered 1..n per operation", i, a.Seq)
		}
	}
}

func TestUpdateOperationIsCompareAndSet(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	op := newOp("k", model.StateUnknown)
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(op) }); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Snapshot(ctx)
	stale := []struct {
		state   model.State
		version int64
	}{{model.StateUnknown, 2}, {model.StateInProgress, 1}, {model.StateApplied, 1}}
	for _, c := range stale {
		next := *op
		next.State = model.StateNotApplied
		err := s.WithTx(ctx, func(tx store.Tx) error { return tx.UpdateOperation(&next, c.state, c.version) })
		if !model.IsCode(err, model.CodeStale) {
			t.Errorf("update from %s v%d: %v; want CodeStale", c.state, c.version, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "it is now unknown (version 1)") {
			t.Errorf("stale message %q does not say what the row is now", msg)
		}
	}
	if after, _ := s.Snapshot(ctx); after != before {
		t.Error("a refused compare-and-set changed the ledger")
	}
	next := *op
	next.State = model.StateNotApplied
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.UpdateOperation(&next, model.StateUnknown, 1) }); err != nil {
		t.Fatalf("matching compare-and-set refused: %v", err)
	}
	if next.Version != 2 {
		t.Errorf("version after update %d, want 2", next.Version)
	}
}

func TestInsertingAnExistingKeyIsAConflict(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("k", model.StateUnknown)) }); err != nil {
		t.Fatal(err)
	}
	err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("k", model.StateUnknown)) })
	if !model.IsCode(err, model.CodeConflict) || !strings.Contains(err.Error(), "constraint") {
		t.Errorf("duplicate (tenant, key): %v", err)
	}
	// The same key in another tenant is another operation.
	other := newOp("k", model.StateUnknown)
	other.Tenant = "u"
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(other) }); err != nil {
		t.Errorf("same key, other tenant: %v", err)
	}
}

func TestRolledBackTransactionLeavesNothing(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	before, _ := s.Snapshot(ctx)
	err := s.WithTx(ctx, func(tx store.Tx) error {
		op := newOp("k", model.StateApplied)
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		if _, err := tx.InsertLocalEffect(store.LocalEffect{Table: model.TableTasks, Tool: op.Tool, Tenant: op.Tenant, OperationID: op.ID, Text: "s"}); err != nil {
			return err
		}
		return model.Errorf(model.CodeInvalid, "changed my mind")
	})
	if !model.IsCode(err, model.CodeInvalid) {
		t.Fatalf("fn's error not returned: %v", err)
	}
	if after, _ := s.Snapshot(ctx); after != before {
		t.Error("a transaction whose fn failed left rows behind")
	}
	// A panic in fn rolls back too, and reaches the caller.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		s.WithTx(ctx, func(tx store.Tx) error {
			tx.InsertOperation(newOp("p", model.StateUnknown))
			panic("worker bug")
		})
	}()
	if after, _ := s.Snapshot(ctx); after != before {
		t.Error("a transaction whose fn panicked left rows behind")
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("after", model.StateUnknown)) }); err != nil {
		t.Errorf("the writer is unusable after a panic: %v", err)
	}
}

// Audit must find what it claims to check: an applied operation with two
// effects, an effect whose operation is not applied, counts out of step.
func TestAuditFindsBrokenInvariants(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	ctx := context.Background()
	op := newOp("k", model.StateApplied)
	err := s.WithTx(ctx, func(tx store.Tx) error {
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		res, err := tx.InsertLocalEffect(store.LocalEffect{Table: model.TableTasks, Tool: op.Tool, Tenant: op.Tenant, OperationID: op.ID, Text: "s"})
		if err != nil {
			return err
		}
		return tx.SetReceipt(op.ID, []byte(`{"result":`+string(res)+`}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := s.Audit(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("a sound ledger fails its audit: %v %v", problems, err)
	}
	breakages := []struct {
		name, sql, says string
	}{
		{"receipt names another task", `UPDATE operations SET receipt = '{"result":{"task_id":999}}' WHERE op_key = 'k'`, "applied task operations without exactly one task"},
		{"task of an unknown operation", `UPDATE operations SET state = 'unknown' WHERE op_key = 'k'`, "tasks whose operation is not applied"},
		{"counts out of step", `UPDATE state_counts SET n = n + 5`, "state counts out of step"},
	}
	for _, b := range breakages {
		t.Run(b.name, func(t *testing.T) {
			// Break a copy, not the shared ledger.
			copyPath := filepath.Join(t.TempDir(), "copy.db")
			plainExec(t, path, "VACUUM INTO '"+copyPath+"'")
			plainExec(t, copyPath, b.sql)
			c, err := Open(copyPath, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			problems, err := c.Audit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(problems, "; "), b.says) {
				t.Errorf("audit = %v; want it to report %q", problems, b.says)
			}
		})
	}
}

// A tombstone window of zero or less would forget the tombstones of a
// compaction in the transaction that made them; the driver refuses it
// whatever its caller validated.
func TestCompactExpiredRefusesANonPositiveTombstoneWindow(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	for _, ttl := range []time.Duration{0, -time.Hour} {
		err := s.WithTx(context.Background(), func(tx store.Tx) error {
			_, _, err := tx.CompactExpired(ttl, 10)
			return err
		})
		if !model.IsCode(err, model.CodeInvalid) {
			t.Errorf("CompactExpired(%v) = %v; want invalid", ttl, err)
		}
	}
}
