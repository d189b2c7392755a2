package storetest

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// testTombstoneRead: Reader.Tombstone reads a compacted key's tombstone on
// the read side — on a read-only ledger too (ops show, the gateway) —
// scoped to its tenant, and not once it is forgotten.
func testTombstoneRead(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error {
		if _, err := createApplied(tx, "acme", "gone"); err != nil {
			return err
		}
		op, err := tx.GetOperation("acme", "gone")
		if err != nil {
			return err
		}
		o := *op
		o.ExpiresAt = h.now.Add(-time.Minute)
		return tx.UpdateOperation(&o, op.State, op.Version)
	})
	h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "kept"); return err })
	h.tx(t, func(tx store.Tx) error { _, _, err := tx.CompactExpired(time.Hour, 100); return err })
	ro := h.open(t, store.Options{ReadOnly: true})
	for _, l := range []store.Ledger{h.L, ro} {
		ts, err := l.Tombstone(ctxT(t), "acme", "gone")
		if err != nil {
			t.Fatalf("read-only %v: tombstone of a compacted key: %v", l.ReadOnly(), err)
		}
		if ts.Tenant != "acme" || ts.Key != "gone" || ts.FinalState != model.StateApplied || ts.Fingerprint != fingerprint ||
			ts.Tool != "create_support_task" || !ts.ExpiredAt.Equal(h.now) || !ts.ForgetAt.Equal(h.now.Add(time.Hour)) {
			t.Errorf("read-only %v: tombstone %+v", l.ReadOnly(), ts)
		}
		for _, k := range [][2]string{{"globex", "gone"}, {"acme", "kept"}, {"acme", "never"}} {
			if _, err := l.Tombstone(ctxT(t), k[0], k[1]); !model.IsCode(err, model.CodeNotFound) {
				t.Errorf("read-only %v: tombstone of %s/%s: %v; want not found", l.ReadOnly(), k[0], k[1], err)
			}
		}
	}
	// Past its window the tombstone is forgotten, even before a sweep
	// deletes it.
	late := h.open(t, store.Options{ReadOnly: true, Now: func() time.Time { return h.now.Add(2 * time.Hour) }})
	if _, err := late.Tombstone(ctxT(t), "acme", "gone"); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("a forgotten tombstone: %v; want not found", err)
	}
}
