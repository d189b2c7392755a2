package storetest

import (
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func keysWord(b *bool) string {
	if b == nil {
		return "unrecorded"
	}
	return fmt.Sprint(*b)
}

// Whether a claim's provider honoured downstream keys (migration 12) is
// kept as written — true, false or not recorded — by every read of the
// operation, through every update, and only an operation with a provider
// records it.
func testClaimHonoursKeys(t *testing.T, h *harness) {
	yes, no := true, false
	ids := map[string]int64{}
	// want: what each claimed operation (by key) holds now.
	want := map[string]string{"k-true": "true", "k-false": "false", "k-nil": "unrecorded"}
	for key, honours := range map[string]*bool{"k-true": &yes, "k-false": &no, "k-nil": nil} {
		op := newOp("acme", key, model.StateInProgress)
		op.Provider, op.DownstreamKey, op.ClaimNo = "pay", "dk-"+key, 1
		op.LeaseUntil = h.now.Add(-1) // ended: ExpiredLeases lists it
		op.ClaimHonoursKeys = honours
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
		ids[key] = op.ID
	}
	h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "local"); return err })
	check := func(when string) {
		t.Helper()
		checkEveryRead(t, h, when, ids, want, "unrecorded", func(o *model.Operation) string { return keysWord(o.ClaimHonoursKeys) })
	}
	check("inserted")
	// An update that changes something else keeps it.
	touchEvery(t, h, want)
	check("updated")
	// An update writes it: each claim records its own process's word.
	h.tx(t, func(tx store.Tx) error {
		for key, v := range map[string]*bool{"k-true": &no, "k-false": nil, "k-nil": &yes} {
			cur, err := tx.GetOperation("acme", key)
			if err != nil {
				return err
			}
			cur.ClaimHonoursKeys = v
			if err := tx.UpdateOperation(cur, cur.State, cur.Version); err != nil {
				return err
			}
		}
		return nil
	})
	want = map[string]string{"k-true": "false", "k-false": "unrecorded", "k-nil": "true"}
	check("rewritten")
	// Without a provider nothing was claimed: the row is refused.
	refusedWithoutProvider(t, h, "local-claimed", "a claim's keys",
		func(o *model.Operation) { o.ClaimHonoursKeys = &yes }, func(o *model.Operation) { o.ClaimHonoursKeys = &no })
	h.audit(t)
}
