package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// claimRecord is what a claim recorded of its request (migration 13), as
// one comparable word.
func claimRecord(o *model.Operation) string {
	by := "-"
	if !o.ClaimApplyBy.IsZero() {
		by = fmt.Sprint(o.ClaimApplyBy.UnixMilli())
	}
	return fmt.Sprintf("apply_by=%s dispatch=%q lookup=%q", by, o.ClaimDispatchID, o.ClaimLookupID)
}

// What a claim recorded of its request — until when the provider may
// still apply it, and where its request and its lookup went (migration
// 13) — is kept as written, to the millisecond, by every read of the
// operation, through every update; "" and the zero time are "not
// recorded"; only an operation with a provider records it.
func testClaimRecord(t *testing.T, h *harness) {
	at := h.now.Add(90 * time.Second).Truncate(time.Millisecond)
	type rec struct {
		applyBy          time.Time
		dispatch, lookup string
	}
	set := func(o *model.Operation, r rec) {
		o.ClaimApplyBy, o.ClaimDispatchID, o.ClaimLookupID = r.applyBy, r.dispatch, r.lookup
	}
	word := func(r rec) string {
		o := &model.Operation{}
		set(o, r)
		return claimRecord(o)
	}
	all := rec{at, "kind=aaaa host=bbbb", "kind=cccc url=dddd"}
	noLookup := rec{at.Add(time.Minute), "kind=eeee", ""}
	ids := map[string]int64{}
	want := map[string]string{"k-all": word(all), "k-nolookup": word(noLookup), "k-none": word(rec{})}
	for key, r := range map[string]rec{"k-all": all, "k-nolookup": noLookup, "k-none": {}} {
		op := newOp("acme", key, model.StateInProgress)
		op.Provider, op.DownstreamKey, op.ClaimNo = "pay", "dk-"+key, 1
		op.LeaseUntil = h.now.Add(-1) // ended: ExpiredLeases lists it
		set(op, r)
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
		ids[key] = op.ID
	}
	h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "local"); return err })
	check := func(when string) {
		t.Helper()
		checkEveryRead(t, h, when, ids, want, word(rec{}), claimRecord)
	}
	check("inserted")
	// An update that changes something else keeps it.
	touchEvery(t, h, want)
	check("updated")
	// An update writes it: each claim records its own.
	later := rec{at.Add(time.Hour), "kind=ffff method=0000", "kind=1111"}
	h.tx(t, func(tx store.Tx) error {
		for key, r := range map[string]rec{"k-all": {}, "k-nolookup": later, "k-none": all} {
			cur, err := tx.GetOperation("acme", key)
			if err != nil {
				return err
			}
			set(cur, r)
			if err := tx.UpdateOperation(cur, cur.State, cur.Version); err != nil {
				return err
			}
		}
		return nil
	})
	want = map[string]string{"k-all": word(rec{}), "k-nolookup": word(later), "k-none": word(all)}
	check("rewritten")
	// Without a provider nothing was claimed: the row is refused, each
	// field alone.
	for i, r := range []rec{{applyBy: at}, {dispatch: "kind=aaaa"}, {lookup: "kind=aaaa"}} {
		field := func(o *model.Operation) { set(o, r) }
		refusedWithoutProvider(t, h, fmt.Sprintf("local-claimed-%d", i), fmt.Sprintf("a claim's %+v", r), field, field)
	}
	h.audit(t)
}

// CheckClaimRecordAfterMigration is what a driver's migration test checks
// once a ledger made at schema 12 — an in_progress claim t/claimed (id 7,
// provider pay, one dispatched attempt by w1) and a local operation
// t/local (id 8) — is opened and migrated to schema 13: neither recorded
// where its request went nor until when (migration 13 reads nothing into
// them), the claim is as it was, and a claim written after the migration
// keeps what it records. The driver's own test checks its CHECKs.
func CheckClaimRecordAfterMigration(t *testing.T, s store.Ledger) {
	t.Helper()
	ctx := ctxT(t)
	for _, key := range []string{"claimed", "local"} {
		d, err := s.Detail(ctx, "t", key)
		if err != nil {
			t.Fatal(err)
		}
		if o := d.Operation; !o.ClaimApplyBy.IsZero() || o.ClaimDispatchID != "" || o.ClaimLookupID != "" {
			t.Errorf("%s after the migration: %v %q %q; want not recorded", key, o.ClaimApplyBy, o.ClaimDispatchID, o.ClaimLookupID)
		}
		if key == "claimed" && (d.Operation.State != model.StateInProgress || d.Operation.ClaimHonoursKeys == nil ||
			len(d.Attempts) != 1 || d.Attempts[0].WorkerID != "w1") {
			t.Errorf("the claimed row after the migration: %+v %+v", d.Operation, d.Attempts)
		}
	}
	applyBy := time.UnixMilli(123456789).UTC()
	var expired []*model.Operation
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		var err error
		expired, err = tx.ExpiredLeases(10)
		if err != nil || len(expired) != 1 {
			return err
		}
		op := expired[0]
		op.ClaimApplyBy, op.ClaimDispatchID, op.ClaimLookupID = applyBy, "kind=aaaa", "kind=bbbb"
		return tx.UpdateOperation(op, op.State, op.Version)
	}); err != nil || len(expired) != 1 {
		t.Fatalf("the old claim's lease: %v %v", expired, err)
	}
	if op, err := s.Get(ctx, "t", "claimed"); err != nil || !op.ClaimApplyBy.Equal(applyBy) || op.ClaimDispatchID != "kind=aaaa" || op.ClaimLookupID != "kind=bbbb" {
		t.Errorf("a claim written after the migration: %+v %v", op, err)
	}
}
