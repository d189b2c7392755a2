package storetest

import (
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A page's limit: none (0) is the default page; up to the largest page
// and one row more (which tells a caller whether another page follows,
// as ops list asks) is read as asked; more is refused, saying so — never
// silently read as the default page, which `ops list --limit 10000` did
// (100 rows, "truncated": false, no next page). List and Decisions alike.
func testPageLimits(t *testing.T, h *harness) {
	const n = store.DefaultPage + 50
	h.tx(t, func(tx store.Tx) error {
		for i := 0; i < n; i++ {
			op := newOp("acme", fmt.Sprintf("pl-%03d", i), model.StateUnknown)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			if err := tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "o", Action: model.ActionMarkNotApplied,
				Reason: "r", Evidence: "e", FromState: model.StateUnknown, ToState: model.StateNotApplied, FromVersion: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range []struct {
		name  string
		limit int
		rows  int // -1: refused
	}{
		{"none: the default page", 0, store.DefaultPage},
		{"negative: the default page", -1, store.DefaultPage},
		{"one", 1, 1},
		{"more than there are", n + 10, n},
		{"the largest page", store.MaxPage, n},
		{"the largest page and one more row", store.MaxPage + 1, n},
		{"beyond", store.MaxPage + 2, -1},
		{"far beyond", 1 << 40, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "acme", Limit: c.limit})
			ds, derr := h.L.Decisions(ctxT(t), store.DecisionQuery{Tenant: "acme", Limit: c.limit})
			if c.rows < 0 {
				for what, err := range map[string]error{"List": err, "Decisions": derr} {
					if !model.IsCode(err, model.CodeInvalid) {
						t.Errorf("%s with limit %d: %v; want refused (invalid)", what, c.limit, err)
					}
				}
				return
			}
			if err != nil || derr != nil {
				t.Fatalf("limit %d: %v %v", c.limit, err, derr)
			}
			if len(ops) != c.rows || len(ds) != c.rows {
				t.Errorf("limit %d: %d operations, %d decisions; want %d", c.limit, len(ops), len(ds), c.rows)
			}
		})
	}
}
