package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// notBeforeWord is an operation's retry_not_before (migration 14) as one
// comparable word.
func notBeforeWord(o *model.Operation) string {
	if o.RetryNotBefore.IsZero() {
		return "not_before=-"
	}
	return fmt.Sprint("not_before=", o.RetryNotBefore.UnixMilli())
}

// When a busy provider asked to be sent an operation again at the soonest
// (migration 14) is kept as written, to the millisecond, by every read of
// the operation, through an update that changes something else; an update
// writes it or clears it (the zero time: none asked); only an operation
// with a provider records it.
func testRetryNotBefore(t *testing.T, h *harness) {
	ctx := ctxT(t)
	at := h.now.Add(7 * time.Second).Truncate(time.Millisecond)
	ids := map[string]int64{}
	want := map[string]string{}
	for key, nb := range map[string]time.Time{"k-wait": at, "k-none": {}} {
		op := newOp("acme", key, model.StateInProgress)
		op.Provider, op.DownstreamKey, op.ClaimNo = "pay", "dk-"+key, 1
		op.LeaseOwner, op.LeaseUntil = "released", h.now.Add(-1) // ended: ExpiredLeases lists it
		op.RetryNotBefore = nb
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
		ids[key] = op.ID
		want[key] = notBeforeWord(op)
	}
	h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "local"); return err })
	check := func(when string) {
		t.Helper()
		checkEveryRead(t, h, when, ids, want, "not_before=-", notBeforeWord)
	}
	check("inserted")
	for key := range want {
		h.tx(t, func(tx store.Tx) error {
			cur, err := tx.GetOperation("acme", key)
			if err != nil {
				return err
			}
			cur.LeaseOwner = "someone"
			return tx.UpdateOperation(cur, cur.State, cur.Version)
		})
	}
	check("updated")
	// An update writes it, or clears it.
	later := at.Add(time.Minute)
	h.tx(t, func(tx store.Tx) error {
		for key, nb := range map[string]time.Time{"k-wait": {}, "k-none": later} {
			cur, err := tx.GetOperation("acme", key)
			if err != nil {
				return err
			}
			cur.RetryNotBefore = nb
			if err := tx.UpdateOperation(cur, cur.State, cur.Version); err != nil {
				return err
			}
		}
		return nil
	})
	want = map[string]string{"k-wait": "not_before=-", "k-none": fmt.Sprint("not_before=", later.UnixMilli())}
	check("rewritten")
	// Without a provider nothing was sent: the row is refused.
	before := h.snapshot(t)
	local := newOp("acme", "local-waits", model.StateApplied)
	local.RetryNotBefore = at
	if err := h.L.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(local) }); err == nil {
		t.Error("an operation without a provider recorded a provider's wait")
	}
	err := h.L.WithTx(ctx, func(tx store.Tx) error {
		cur, err := tx.GetOperation("acme", "local")
		if err != nil {
			return err
		}
		cur.RetryNotBefore = at
		return tx.UpdateOperation(cur, cur.State, cur.Version)
	})
	if err == nil {
		t.Error("an update gave an operation without a provider a provider's wait")
	}
	if h.snapshot(t) != before {
		t.Error("a refused write changed the ledger")
	}
	h.audit(t)
}
