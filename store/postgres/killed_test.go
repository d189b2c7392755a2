package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A transaction whose server process another session terminates between
// its round trips (its new operation's insert still queued) fails as
// unavailable, writes nothing, and the handle's next calls commit on a
// fresh connection.
func TestKilledMidTransactionIsUnavailableAndWritesNothing(t *testing.T) {
	u, l, ctx := freshLedger(t)
	var err error
	err = l.WithTx(ctx, func(tx store.Tx) error {
		if _, err := tx.GetOperation("acme", "killed"); !model.IsCode(err, model.CodeNotFound) {
			return err
		}
		o := newOp("killed")
		if err := tx.InsertOperation(o); err != nil {
			return err
		}
		if err := pgtest.Exec(t, u, fmt.Sprintf("SELECT pg_terminate_backend(%d)", postgres.BackendPID(tx))); err != nil {
			t.Fatal(err)
		}
		return tx.InsertAttempt(&model.Attempt{OperationID: o.ID, Outcome: model.OutcomeCreated, Fingerprint: o.Fingerprint})
	})
	if !model.IsCode(err, model.CodeBusy) {
		t.Fatalf("killed transaction: %v (code %q); want busy (retry later)", err, model.CodeOf(err))
	}
	for i := 0; i < 8; i++ {
		k := fmt.Sprintf("after%d", i)
		if err := l.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp(k)) }); err != nil {
			t.Fatalf("call %d after the kill: %v", i, err)
		}
	}
	if c, err := l.Counts(ctx, ""); err != nil || c.Total != 8 {
		t.Errorf("counts %+v, %v; want the 8 later operations and not the killed one", c, err)
	}
}

// A statement timeout in the middle of a transaction (a new operation's
// insert queued ahead of the slow statement) is busy, writes nothing, and
// leaves no connection inside a transaction: the next calls, more than the
// pool holds, commit.
func TestStatementTimeoutMidTransactionIsBusyAndWritesNothing(t *testing.T) {
	_, l, ctx := freshLedger(t)
	var err error
	for i := 0; i < 8; i++ {
		err = l.WithTx(ctx, func(tx store.Tx) error {
			k := fmt.Sprintf("slow%d", i)
			if _, err := tx.GetOperation("acme", k); !model.IsCode(err, model.CodeNotFound) {
				return err
			}
			if err := tx.InsertOperation(newOp(k)); err != nil {
				return err
			}
			if _, err := tx.Exec("SET LOCAL statement_timeout = '20ms'"); err != nil {
				return err
			}
			_, err := tx.Exec("SELECT pg_sleep(2)")
			return err
		})
		if !model.IsCode(err, model.CodeBusy) {
			t.Fatalf("timed-out transaction: %v (code %q); want busy", err, model.CodeOf(err))
		}
	}
	for i := 0; i < 8; i++ {
		k := fmt.Sprintf("after%d", i)
		if err := l.WithTx(ctx, func(tx store.Tx) error {
			if _, err := tx.Exec("SELECT pg_sleep(0.05)"); err != nil { // no timeout left over
				return err
			}
			return tx.InsertOperation(newOp(k))
		}); err != nil {
			t.Fatalf("call %d after the timeouts: %v", i, err)
		}
	}
	if c, err := l.Counts(ctx, ""); err != nil || c.Total != 8 {
		t.Errorf("counts %+v, %v; want the 8 later operations and none of the timed-out ones", c, err)
	}
}

// freshLedger is a new PostgreSQL ledger (its URL, the handle, closed at
// the test's end) and a context that bounds the test.
func freshLedger(t *testing.T) (string, store.Ledger, context.Context) {
	t.Helper()
	u := pgtest.URL(t)
	l, err := postgres.OpenLedger(u, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return u, l, ctx
}

// newOp is a new unknown operation acme/key, as the tests insert it.
func newOp(key string) *model.Operation {
	return &model.Operation{Tenant: "acme", Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{}`), Summary: key, Fingerprint: fmt.Sprintf("%064d", 0), State: model.StateUnknown}
}
