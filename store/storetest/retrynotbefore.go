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
	touchEvery(t, h, want)
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
	waits := func(o *model.Operation) { o.RetryNotBefore = at }
	refusedWithoutProvider(t, h, "local-waits", "a provider's wait", waits, waits)
	h.audit(t)
}

// CheckRetryNotBeforeAfterMigration is what a driver's migration test
// checks once a ledger made at schema 13 — a released in_progress claim
// t/claimed (id 7, provider pay, lease ended) and a local operation
// t/local (id 8) — is opened and migrated to schema 14: neither has a
// provider's wait recorded (migration 14 reads nothing into it), and one
// written after the migration is kept. The driver's own test checks its
// CHECK.
func CheckRetryNotBeforeAfterMigration(t *testing.T, s store.Ledger) {
	t.Helper()
	ctx := ctxT(t)
	for _, key := range []string{"claimed", "local"} {
		op, err := s.Get(ctx, "t", key)
		if err != nil {
			t.Fatal(err)
		}
		if !op.RetryNotBefore.IsZero() {
			t.Errorf("%s after the migration: retry_not_before %v; want none", key, op.RetryNotBefore)
		}
	}
	at := time.UnixMilli(123456789).UTC()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op, err := tx.GetOperation("t", "claimed")
		if err != nil {
			return err
		}
		op.RetryNotBefore = at
		return tx.UpdateOperation(op, op.State, op.Version)
	}); err != nil {
		t.Fatal(err)
	}
	if op, err := s.Get(ctx, "t", "claimed"); err != nil || !op.RetryNotBefore.Equal(at) || op.State != model.StateInProgress {
		t.Errorf("a wait written after the migration: %+v %v", op, err)
	}
}
