package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Every order of the list pages by keyset: forward from the first page to
// the last, and back from the last to the first, each row comes exactly
// once, in the order the columns say (bytewise, ties by id), with and
// without filters, in both directions.
func testListSortPaging(t *testing.T, h *harness) {
	ctx := ctxT(t)
	states := []model.State{model.StateUnknown, model.StateApplied, model.StateNotApplied, model.StateInProgress}
	tools := []string{"create_support_task", "create_report_job", "send_email"}
	base := h.now
	for i := 0; i < 37; i++ {
		tenant := []string{"acme", "globex", "Zeta"}[i%3]
		// Keys out of id order, some sharing a prefix; changes at a few
		// distinct times so that ties are broken by the id.
		key := fmt.Sprintf("k-%02d", (i*17)%37)
		if i%7 == 0 {
			key = "K_" + key
		}
		h.now = base.Add(time.Duration((i*5)%6) * time.Minute)
		op := newOp(tenant, key, states[i%len(states)])
		op.Tool = tools[(i/2)%len(tools)]
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	}
	h.now = base.Add(time.Hour)

	less := func(c model.SortColumn) func(a, b model.Operation) int {
		return func(a, b model.Operation) int {
			var r int
			switch c {
			case model.SortKey:
				r = cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.Key, b.Key))
			case model.SortState:
				r = strings.Compare(string(a.State), string(b.State))
			case model.SortTenant:
				r = strings.Compare(a.Tenant, b.Tenant)
			case model.SortTool:
				r = strings.Compare(a.Tool, b.Tool)
			case model.SortChanged:
				r = a.UpdatedAt.Compare(b.UpdatedAt)
			case model.SortAge:
				return -cmp.Compare(a.ID, b.ID)
			}
			return cmp.Or(r, cmp.Compare(a.ID, b.ID))
		}
	}
	filters := []store.ListQuery{{}, {Tenant: "globex"}, {State: model.StateUnknown}, {Tool: "send_email"}}
	for _, f := range filters {
		all, err := h.L.List(ctx, store.ListQuery{Tenant: f.Tenant, State: f.State, Tool: f.Tool, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range model.AllSortColumns {
			for _, rev := range []bool{false, true} {
				name := fmt.Sprintf("%s reverse=%v tenant=%q state=%q tool=%q", col, rev, f.Tenant, f.State, f.Tool)
				want := slices.Clone(all)
				slices.SortFunc(want, less(col))
				if rev {
					slices.Reverse(want)
				}
				q := f
				q.Sort, q.Reverse, q.Limit = col, rev, 4
				// Forward, page after page.
				var fwd []model.Operation
				for pages := 0; pages < 100; pages++ {
					page, err := h.L.List(ctx, q)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					fwd = append(fwd, page...)
					if len(page) < q.Limit {
						break
					}
					q.BeforeID = page[len(page)-1].ID
				}
				if rowNames(fwd) != rowNames(want) {
					t.Errorf("%s: paging forward read\n %s\nwant\n %s", name, rowNames(fwd), rowNames(want))
					continue
				}
				// Back, from the last row, page before page.
				if len(want) == 0 {
					continue
				}
				back := []model.Operation{want[len(want)-1]}
				q.BeforeID, q.AfterID = 0, want[len(want)-1].ID
				for pages := 0; pages < 100; pages++ {
					page, err := h.L.List(ctx, q)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					back = append(slices.Clone(page), back...)
					if len(page) < q.Limit {
						break
					}
					q.AfterID = page[0].ID
				}
				if rowNames(back) != rowNames(want) {
					t.Errorf("%s: paging back read\n %s\nwant\n %s", name, rowNames(back), rowNames(want))
				}
			}
		}
	}
	if _, err := h.L.List(ctx, store.ListQuery{Sort: "bogus"}); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("an unknown sort column: %v; want CodeInvalid", err)
	}
}

// The list filters by provider and by age (created before / at or after a
// time), with the other filters and in a sorted order.
func testListProviderAndAge(t *testing.T, h *harness) {
	ctx := ctxT(t)
	base := h.now
	for i := 0; i < 12; i++ {
		h.now = base.Add(time.Duration(i) * time.Minute)
		op := newOp([]string{"acme", "globex"}[i%2], fmt.Sprintf("p-%02d", i), model.StateUnknown)
		switch i % 3 {
		case 0:
			op.Provider, op.DownstreamKey = "sandbox", fmt.Sprintf("ds-%d", i)
		case 1:
			op.Provider, op.DownstreamKey = "mailer", fmt.Sprintf("ds-%d", i)
		}
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	}
	h.now = base.Add(time.Hour)
	keys := func(q store.ListQuery) string {
		t.Helper()
		ops, err := h.L.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		var s []string
		for _, o := range ops {
			s = append(s, o.Key)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		q    store.ListQuery
		want string
	}{
		{store.ListQuery{Provider: "sandbox"}, "p-09,p-06,p-03,p-00"},
		{store.ListQuery{Provider: "mailer", Tenant: "globex"}, "p-07,p-01"},
		{store.ListQuery{Provider: "nobody"}, ""},
		// Created before 3 minutes past: older than that.
		{store.ListQuery{CreatedBefore: base.Add(3 * time.Minute)}, "p-02,p-01,p-00"},
		{store.ListQuery{CreatedAfter: base.Add(9 * time.Minute)}, "p-11,p-10,p-09"},
		{store.ListQuery{CreatedAfter: base.Add(2 * time.Minute), CreatedBefore: base.Add(5 * time.Minute)}, "p-04,p-03,p-02"},
		{store.ListQuery{Provider: "sandbox", CreatedBefore: base.Add(7 * time.Minute), Sort: model.SortKey, Reverse: true}, "p-03,p-06,p-00"}, // tenant, then key,
		{store.ListQuery{Provider: "sandbox", Limit: 2, Sort: model.SortKey}, "p-00,p-06"},
	} {
		if got := keys(c.q); got != c.want {
			t.Errorf("List(%+v) = %s; want %s", c.q, got, c.want)
		}
	}
}

// A page's cursor is the last row as the caller read it: the next page
// starts where that row was, even if the row has moved since (its state or
// its updated_at changed: a decision, a sweep) or is gone (compacted). A
// cursor re-read by id at the next page would start at the row's new place
// and skip — or repeat — every row in between; a compacted one would end
// the list there (an export would stop early and say nothing).
func testListCursorRowMovedOrGone(t *testing.T, h *harness) {
	ctx := ctxT(t)
	base := h.now
	type change int
	const (
		moved change = iota
		gone
	)
	n := 0
	for _, col := range model.AllSortColumns {
		for _, rev := range []bool{false, true} {
			for _, ch := range []change{moved, gone} {
				n++
				tenant := fmt.Sprintf("t%02d", n)
				name := fmt.Sprintf("%s reverse=%v change=%d", col, rev, ch)
				for i := 0; i < 12; i++ {
					h.now = base.Add(time.Duration(i) * time.Minute)
					op := newOp(tenant, fmt.Sprintf("k-%02d", (i*5)%12), []model.State{model.StateApplied, model.StateFailed}[i%2])
					op.ExpiresAt = base.Add(1000 * time.Hour)
					h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
				}
				h.now = base.Add(time.Hour)
				q := store.ListQuery{Tenant: tenant, Sort: col, Reverse: rev, Limit: 4}
				all, err := h.L.List(ctx, store.ListQuery{Tenant: tenant, Sort: col, Reverse: rev, Limit: 100})
				if err != nil || len(all) != 12 {
					t.Fatalf("%s: %d rows, %v", name, len(all), err)
				}
				first, err := h.L.List(ctx, q)
				if err != nil || len(first) != 4 {
					t.Fatalf("%s: first page %d rows, %v", name, len(first), err)
				}
				cur := first[3]
				switch ch {
				case moved:
					// A decision on the cursor row: a new state, changed now.
					h.now = base.Add(2 * time.Hour)
					h.tx(t, func(tx store.Tx) error {
						op, err := tx.GetOperation(tenant, cur.Key)
						if err != nil {
							return err
						}
						from, ver := op.State, op.Version
						op.State, op.Receipt = model.StateUnknown, nil
						return tx.UpdateOperation(op, from, ver)
					})
				case gone:
					// Its replay window ends and the sweep compacts it into
					// a tombstone.
					h.tx(t, func(tx store.Tx) error {
						op, err := tx.GetOperation(tenant, cur.Key)
						if err != nil {
							return err
						}
						from, ver := op.State, op.Version
						op.ExpiresAt = h.now.Add(-time.Minute)
						if err := tx.UpdateOperation(op, from, ver); err != nil {
							return err
						}
						_, _, err = tx.CompactExpired(30*24*time.Hour, 100)
						return err
					})
					if _, err := h.L.Get(ctx, tenant, cur.Key); !model.IsCode(err, model.CodeNotFound) {
						t.Fatalf("%s: the cursor row was not compacted: %v", name, err)
					}
				}
				q.BeforeRow = &cur
				next, err := h.L.List(ctx, q)
				if err != nil {
					t.Fatalf("%s: next page: %v", name, err)
				}
				// What the list holds now, split at where the cursor row
				// was: the moved row itself is listed where it is now.
				now, err := h.L.List(ctx, store.ListQuery{Tenant: tenant, Sort: col, Reverse: rev, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				desc := col.Descending() != rev
				var before, after []model.Operation
				for _, op := range now {
					c := compareValues(store.SortValues(col, &op), store.SortValues(col, &cur))
					if desc {
						c = -c
					}
					if c < 0 {
						before = append(before, op)
					} else if c > 0 {
						after = append(after, op)
					}
				}
				want := after[:min(4, len(after))]
				if len(want) < 4 {
					t.Fatalf("%s: only %d rows after the cursor", name, len(want))
				}
				if rowNames(next) != rowNames(want) {
					t.Errorf("%s: the page after a cursor row that moved or went read\n %s\nwant\n %s", name, rowNames(next), rowNames(want))
				}
				// And back: the page before the cursor row (now elsewhere).
				q.BeforeRow, q.AfterRow = nil, &cur
				prev, err := h.L.List(ctx, q)
				if err != nil {
					t.Fatalf("%s: previous page: %v", name, err)
				}
				want = before[max(0, len(before)-4):]
				if rowNames(prev) != rowNames(want) {
					t.Errorf("%s: the page before a cursor row that moved or went read\n %s\nwant\n %s", name, rowNames(prev), rowNames(want))
				}
			}
		}
	}
}

// rowNames names rows for a test's message, in order.
func rowNames(ops []model.Operation) string {
	var s []string
	for _, o := range ops {
		s = append(s, fmt.Sprintf("%s/%s#%d", o.Tenant, o.Key, o.ID))
	}
	return strings.Join(s, " ")
}

// compareValues orders two cursors' SortValues as the drivers do
// (bytewise strings, integers).
func compareValues(a, b []any) int {
	for i := range a {
		var c int
		switch x := a[i].(type) {
		case string:
			c = strings.Compare(x, b[i].(string))
		case int64:
			c = cmp.Compare(x, b[i].(int64))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}
