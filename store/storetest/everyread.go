package storetest

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// checkEveryRead checks that every read of an operation — in a
// transaction by key and by id, Get, Detail, DetailByID, ExpiredLeases
// and List — gives read(op) == want[key] for the claimed operations (ids:
// their ids by key, all with ended leases), and local for the tenant's one
// local operation. when names the step in errors.
func checkEveryRead(t *testing.T, h *harness, when string, ids map[string]int64, want map[string]string, local string, read func(*model.Operation) string) {
	t.Helper()
	ctx := ctxT(t)
	for key, w := range want {
		var byKey, byID *model.Operation
		h.tx(t, func(tx store.Tx) error {
			var err error
			if byKey, err = tx.GetOperation("acme", key); err != nil {
				return err
			}
			byID, err = tx.GetOperationByID(ids[key])
			return err
		})
		got, err := h.L.Get(ctx, "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		d, err := h.L.Detail(ctx, "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		byDetailID, err := h.L.DetailByID(ctx, ids[key])
		if err != nil {
			t.Fatal(err)
		}
		for what, o := range map[string]*model.Operation{"GetOperation": byKey, "GetOperationByID": byID, "Get": got,
			"Detail": &d.Operation, "DetailByID": &byDetailID.Operation} {
			if g := read(o); g != w {
				t.Errorf("%s: %s of %s reads %s; want %s", when, what, key, g, w)
			}
		}
	}
	var expired []*model.Operation
	h.tx(t, func(tx store.Tx) error {
		var err error
		expired, err = tx.ExpiredLeases(10)
		return err
	})
	listed, err := h.L.List(ctx, store.ListQuery{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range expired {
		if g := read(o); g != want[o.Key] {
			t.Errorf("%s: ExpiredLeases reads %s for %s; want %s", when, g, o.Key, want[o.Key])
		}
	}
	for _, o := range listed {
		w, ok := want[o.Key]
		if !ok {
			w = local
		}
		if g := read(&o); g != w {
			t.Errorf("%s: List reads %s for %s; want %s", when, g, o.Key, w)
		}
	}
	if len(expired) != len(want) || len(listed) != len(want)+1 {
		t.Errorf("%s: %d expired leases, %d listed; want %d and %d", when, len(expired), len(listed), len(want), len(want)+1)
	}
}

// touchEvery updates each of want's operations (tenant acme) with a change
// to something else, its lease owner: a write that must keep what the
// check reads.
func touchEvery(t *testing.T, h *harness, want map[string]string) {
	t.Helper()
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
}

// refusedWithoutProvider checks that an operation without a provider takes
// none of what only a claim records (what, in the errors): a new one,
// key, with insert applied, and acme/local with update applied, are both
// refused, and the ledger is as it was.
func refusedWithoutProvider(t *testing.T, h *harness, key, what string, insert, update func(*model.Operation)) {
	t.Helper()
	ctx := ctxT(t)
	before := h.snapshot(t)
	local := newOp("acme", key, model.StateApplied)
	insert(local)
	if err := h.L.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(local) }); err == nil {
		t.Error("an operation without a provider recorded " + what)
	}
	err := h.L.WithTx(ctx, func(tx store.Tx) error {
		cur, err := tx.GetOperation("acme", "local")
		if err != nil {
			return err
		}
		update(cur)
		return tx.UpdateOperation(cur, cur.State, cur.Version)
	})
	if err == nil {
		t.Error("an update gave an operation without a provider " + what)
	}
	if h.snapshot(t) != before {
		t.Error("a refused write changed the ledger")
	}
}
