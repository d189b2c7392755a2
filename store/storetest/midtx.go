package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A write that breaks a CHECK in the middle of a transaction — wherever
// the driver sends it (PostgreSQL queues a new operation's insert and
// sends it with a later statement or the COMMIT) — fails the transaction
// as a conflict, writes nothing of it, and leaves every connection of the
// handle clean: the next callers, more than any pool holds, all commit.
func testMidTransactionFailureWritesNothing(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "a", model.StateUnknown)) })
	before := h.snapshot(t)
	long := strings.Repeat("x", 1100) // past op_key's CHECK (1..1024)
	cases := map[string]func(tx store.Tx, bad *model.Operation) error{
		"surfacing at the commit": func(tx store.Tx, bad *model.Operation) error {
			return tx.InsertAttempt(&model.Attempt{OperationID: bad.ID, Outcome: model.OutcomeCreated, Fingerprint: bad.Fingerprint})
		},
		"surfacing at the next statement, after a good write": func(tx store.Tx, bad *model.Operation) error {
			cur, err := tx.GetOperation("acme", "a")
			if err != nil {
				return err
			}
			next := *cur
			next.ClaimNo++
			return tx.UpdateOperation(&next, cur.State, cur.Version)
		},
	}
	for name, then := range cases {
		for i := 0; i < 12; i++ {
			err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
				if _, err := tx.GetOperation("acme", long); !model.IsCode(err, model.CodeNotFound) {
					return fmt.Errorf("read of the missing key: %v", err)
				}
				bad := newOp("acme", long, model.StateUnknown)
				if err := tx.InsertOperation(bad); err != nil {
					return err
				}
				return then(tx, bad)
			})
			mustCode(t, name, err, model.CodeConflict)
		}
	}
	if after := h.snapshot(t); after != before {
		t.Errorf("failed transactions wrote something:\nbefore %s\nafter  %s", before, after)
	}
	for _, k := range keys(12) {
		var created bool
		if err := h.L.WithTx(ctxT(t), func(tx store.Tx) (err error) { created, err = createApplied(tx, "acme", k); return err }); err != nil || !created {
			t.Fatalf("call after the failures: created %v, %v", created, err)
		}
	}
	if c, err := h.L.Counts(ctxT(t), ""); err != nil || c.Total != 13 {
		t.Errorf("counts %+v, %v; want 13 operations", c, err)
	}
	h.audit(t)
}
