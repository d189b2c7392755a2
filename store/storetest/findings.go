package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Findings are lookup attempts: the latest one is an operation's finding in
// lists, details, Get and Tx.LatestFinding, stale once an attempt that may
// have reached the provider follows it, and the list filters on it. None of it touches the
// operation's state or version.
func testFindings(t *testing.T, h *harness) {
	type attempt struct {
		outcome model.Outcome
		finding model.FindingKind
		ref     string
	}
	lookup := func(f model.FindingKind, ref string) attempt { return attempt{model.OutcomeLookup, f, ref} }
	other := func(o model.Outcome) attempt { return attempt{outcome: o} }
	cases := []struct {
		key      string
		attempts []attempt
		want     model.FindingFilter // the latest finding, FilterNotChecked if none
		stale    bool
		ref      string
		seq      int // the latest lookup's number
	}{
		{"never-checked", []attempt{other(model.OutcomeDispatched), other(model.OutcomeTimedOut)}, model.FilterNotChecked, false, "", 0},
		{"has-it", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasIt, "sbx_1")}, model.FilterHasIt, false, "sbx_1", 2},
		{"changed-between-runs", []attempt{other(model.OutcomeDispatched), lookup(model.FindingCannotTell, ""), lookup(model.FindingHasNothing, ""), lookup(model.FindingHasIt, "sbx_9")}, model.FilterHasIt, false, "sbx_9", 4},
		{"nothing", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasNothing, "")}, model.FilterHasNothing, false, "", 2},
		{"stale", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasNothing, ""), other(model.OutcomeTimedOut)}, model.FilterHasNothing, true, "", 2},
		// A refused call sent nothing: the provider knows no more.
		{"refused-after", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasNothing, ""), other(model.OutcomeRefused)}, model.FilterHasNothing, false, "", 2},
		{"down", []attempt{other(model.OutcomeDispatched), lookup(model.FindingCannotTell, "")}, model.FilterCannotTell, false, "", 2},
		// The provider holds another request under the key: kept with
		// what it holds, stale by the same rule.
		{"other-request", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasOther, "sbx_3")}, model.FilterHasOther, false, "sbx_3", 2},
		{"other-request-stale", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasOther, "sbx_4"), other(model.OutcomeTimedOut)}, model.FilterHasOther, true, "sbx_4", 2},
	}
	versions := map[string]int64{}
	for _, c := range cases {
		h.tx(t, func(tx store.Tx) error {
			op := newOp("acme", c.key, model.StateUnknown)
			op.Provider = "sandbox"
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			versions[c.key] = op.Version
			for i, a := range c.attempts {
				at := &model.Attempt{OperationID: op.ID, Outcome: a.outcome, Fingerprint: op.Fingerprint, Finding: a.finding,
					ProviderRef: a.ref, Detail: fmt.Sprintf("step %d", i+1), WorkerID: "triage by test",
					StartedAt: time.UnixMilli(int64(1000 * (i + 1))).UTC()}
				if err := tx.InsertAttempt(at); err != nil {
					return err
				}
			}
			return nil
		})
	}
	ops, err := h.L.List(ctxT(t), store.ListQuery{State: model.StateUnknown})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]model.Operation{}
	for _, op := range ops {
		byKey[op.Key] = op
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			op := byKey[c.key]
			d, err := h.L.Detail(ctxT(t), "acme", c.key)
			if err != nil {
				t.Fatal(err)
			}
			one, err := h.L.Get(ctxT(t), "acme", c.key)
			if err != nil {
				t.Fatal(err)
			}
			// Lookups are counted apart from the attempts to make the
			// effect: of AttemptCount, LookupCount are provider lookups.
			lookups := 0
			for _, a := range c.attempts {
				if a.outcome == model.OutcomeLookup {
					lookups++
				}
			}
			for where, o := range map[string]model.Operation{"list": op, "detail": d.Operation} {
				if o.AttemptCount != len(c.attempts) || o.LookupCount != lookups {
					t.Errorf("%s: %d attempts, %d of them lookups; want %d, %d", where, o.AttemptCount, o.LookupCount, len(c.attempts), lookups)
				}
			}
			var latest *model.Finding
			h.tx(t, func(tx store.Tx) error {
				var err error
				latest, err = tx.LatestFinding(op.ID)
				return err
			})
			for where, f := range map[string]*model.Finding{"list": op.Finding, "detail": d.Operation.Finding, "get": one.Finding, "Tx.LatestFinding": latest} {
				if c.want == model.FilterNotChecked {
					if f != nil {
						t.Errorf("%s: finding %+v; want none", where, f)
					}
					continue
				}
				if f == nil {
					t.Fatalf("%s: no finding; want %s", where, c.want)
				}
				want := model.Finding{Kind: model.FindingKind(c.want), Provider: "sandbox", Ref: c.ref,
					Detail: fmt.Sprintf("step %d", c.seq), At: time.UnixMilli(int64(1000 * c.seq)).UTC(),
					Seq: c.seq, By: "triage by test", Stale: c.stale}
				if *f != want {
					t.Errorf("%s: finding %+v\nwant %+v", where, *f, want)
				}
			}
			for _, a := range d.Attempts {
				if a.Outcome == model.OutcomeLookup && (!a.Finding.Valid() || a.Detail != fmt.Sprintf("step %d", a.Seq)) ||
					a.Outcome != model.OutcomeLookup && a.Finding != "" {
					t.Errorf("detail attempt %d: %s finding %q detail %q", a.Seq, a.Outcome, a.Finding, a.Detail)
				}
			}
			if op.Version != versions[c.key] || op.State != model.StateUnknown {
				t.Errorf("lookups moved the operation: %s v%d, want unknown v%d", op.State, op.Version, versions[c.key])
			}
			got, err := h.L.List(ctxT(t), store.ListQuery{Finding: c.want})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, o := range got {
				found = found || o.Key == c.key
				if c.want == model.FilterNotChecked && o.Finding != nil || c.want != model.FilterNotChecked && (o.Finding == nil || string(o.Finding.Kind) != string(c.want)) {
					t.Errorf("filter %s listed %s with finding %+v", c.want, o.Key, o.Finding)
				}
			}
			if !found {
				t.Errorf("filter %s does not list %s", c.want, c.key)
			}
		})
	}
	// The filter combines with the others and pages like any list.
	page, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "acme", Finding: model.FilterHasIt, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Key != "changed-between-runs" {
		t.Fatalf("first page of has it: %+v %v", page, err)
	}
	page, err = h.L.List(ctxT(t), store.ListQuery{Tenant: "acme", Finding: model.FilterHasIt, Limit: 1, BeforeID: page[0].ID})
	if err != nil || len(page) != 1 || page[0].Key != "has-it" {
		t.Fatalf("second page of has it: %+v %v", page, err)
	}
	if got, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "other", Finding: model.FilterHasIt}); err != nil || len(got) != 0 {
		t.Errorf("another tenant's has it: %+v %v", got, err)
	}
	_, err = h.L.List(ctxT(t), store.ListQuery{Finding: "bogus"})
	mustCode(t, "a bogus finding filter", err, model.CodeInvalid)

	// Only a lookup carries a finding, and a lookup always does.
	op := byKey["has-it"]
	for _, bad := range []model.Attempt{
		{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint},
		{OperationID: op.ID, Outcome: model.OutcomeRefused, Fingerprint: op.Fingerprint, Finding: model.FindingHasIt},
		{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint, Finding: "maybe"},
	} {
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertAttempt(&bad) })
		mustCode(t, fmt.Sprintf("InsertAttempt(%s, finding %q)", bad.Outcome, bad.Finding), err, model.CodeInvalid)
	}
	// The schema refuses the same when the Go checks are bypassed, and takes
	// the well-formed row of the same shape.
	for _, c := range []struct {
		values string
		ok     bool
	}{
		{"900, 'lookup', NULL", false},
		{"901, 'refused', 'has_it'", false},
		{"902, 'lookup', 'maybe'", false},
		{"903, 'lookup', 'has_it'", true},
		{"904, 'refused', NULL", true},
		{"905, 'lookup', 'has_other'", true},
		{"906, 'refused', 'has_other'", false},
	} {
		q := fmt.Sprintf(`INSERT INTO attempts (operation_id, seq, outcome, finding, fingerprint, started_at) VALUES (%d, %s, 'f', 0)`, op.ID, c.values)
		if err := h.d.Exec(t, h.loc, q); (err == nil) != c.ok {
			t.Errorf("%s: %v; want accepted %v", q, err, c.ok)
		}
	}
}

// Tx.LatestConclusiveFinding is the latest lookup that said something (has
// it, has nothing), any "has it" first and never stale (a delivery is not
// taken back): a later "cannot tell" leaves it standing; a "has nothing"
// is stale by the same rule as the latest finding; none when no lookup
// said anything.
func testLatestConclusiveFinding(t *testing.T, h *harness) {
	cases := []struct {
		key      string
		attempts []model.FindingKind // "" = a dispatch attempt
		want     model.FindingKind   // "" = none
		seq      int
		stale    bool
	}{
		{"has-it-then-cannot-tell", []model.FindingKind{"", model.FindingHasIt, model.FindingCannotTell, model.FindingCannotTell}, model.FindingHasIt, 2, false},
		{"nothing-stale-then-cannot-tell", []model.FindingKind{"", model.FindingHasNothing, "", model.FindingCannotTell}, model.FindingHasNothing, 2, true},
		// A later "has nothing" does not take a fresh "has it" back.
		{"it-then-nothing", []model.FindingKind{"", model.FindingHasIt, model.FindingHasNothing, model.FindingCannotTell}, model.FindingHasIt, 2, false},
		{"nothing-it-nothing", []model.FindingKind{"", model.FindingHasNothing, model.FindingHasIt, model.FindingCannotTell, model.FindingHasNothing}, model.FindingHasIt, 3, false},
		// Nor does a later attempt (a retry): a delivery is not taken back.
		{"it-then-retry", []model.FindingKind{"", model.FindingHasIt, "", model.FindingCannotTell}, model.FindingHasIt, 2, false},
		{"it-then-retry-then-nothing", []model.FindingKind{"", model.FindingHasIt, "", model.FindingHasNothing}, model.FindingHasIt, 2, false},
		{"only-cannot-tell", []model.FindingKind{"", model.FindingCannotTell}, "", 0, false},
		{"never-checked", []model.FindingKind{""}, "", 0, false},
		// Another request under the key says nothing of this one's effect:
		// no evidence, leaving what came before standing (a decision
		// checks the latest lookup for it apart: reconcile.otherRequestTx).
		{"it-then-other", []model.FindingKind{"", model.FindingHasIt, model.FindingHasOther}, model.FindingHasIt, 2, false},
		{"only-other", []model.FindingKind{"", model.FindingHasOther}, "", 0, false},
	}
	for _, c := range cases {
		h.tx(t, func(tx store.Tx) error {
			op, err := insertHistory(tx, "acme", c.key, c.attempts, func(int) string { return "sbx_1" })
			if err != nil {
				return err
			}
			got, err := tx.LatestConclusiveFinding(op.ID)
			if err != nil {
				return err
			}
			switch {
			case c.want == "" && got != nil:
				t.Errorf("%s: %+v; want none", c.key, got)
			case c.want != "" && (got == nil || got.Kind != c.want || got.Seq != c.seq || got.Stale != c.stale || got.Provider != "sandbox" ||
				got.Detail != fmt.Sprintf("step %d", c.seq)):
				t.Errorf("%s: %+v; want %s at %d, stale %v", c.key, got, c.want, c.seq, c.stale)
			}
			return nil
		})
	}
}

// A list's and Get's operations carry, beside their latest finding, the
// earlier one that binds a decision when it is not the latest
// (BindingFinding: LatestConclusiveFinding's rule), so the console's
// FINDING column and bulk review show "has it (earlier)" after a later
// "cannot tell"; the finding filter selects by that shown finding. Detail
// says the same from its attempts.
func testBindingFindingInLists(t *testing.T, h *harness) {
	const none = model.FindingKind("none")
	cases := []struct {
		key      string
		attempts []model.FindingKind // "" = a dispatch attempt
		binding  model.FindingKind   // BindingFinding's kind, none if nil
		seq      int                 // its lookup's number
		earlier  bool
		shown    model.FindingFilter // what the filter selects it by
	}{
		{"it-then-cannot-tell", []model.FindingKind{"", model.FindingHasIt, model.FindingCannotTell}, model.FindingHasIt, 2, true, model.FilterHasIt},
		{"it-then-nothing", []model.FindingKind{"", model.FindingHasIt, model.FindingHasNothing}, model.FindingHasIt, 2, true, model.FilterHasIt},
		{"it-nothing-cannot-tell", []model.FindingKind{"", model.FindingHasIt, model.FindingHasNothing, model.FindingCannotTell}, model.FindingHasIt, 2, true, model.FilterHasIt},
		// The latest "has it" is stale after a retry, but binds: the same lookup, not earlier.
		{"it-then-retry", []model.FindingKind{"", model.FindingHasIt, ""}, model.FindingHasIt, 2, false, model.FilterHasIt},
		{"nothing-then-cannot-tell", []model.FindingKind{"", model.FindingHasNothing, model.FindingCannotTell}, model.FindingHasNothing, 2, true, model.FilterHasNothing},
		{"nothing-stale-then-cannot-tell", []model.FindingKind{"", model.FindingHasNothing, "", model.FindingCannotTell}, none, 0, false, model.FilterCannotTell},
		{"cannot-tell-then-it", []model.FindingKind{"", model.FindingCannotTell, model.FindingHasIt}, none, 0, false, model.FilterHasIt},
		{"nothing-latest", []model.FindingKind{"", model.FindingCannotTell, model.FindingHasNothing}, none, 0, false, model.FilterHasNothing},
		{"only-cannot-tell", []model.FindingKind{"", model.FindingCannotTell}, none, 0, false, model.FilterCannotTell},
		{"never-checked", []model.FindingKind{""}, none, 0, false, model.FilterNotChecked},
		// The latest lookup found another request under the key: shown,
		// whatever came before (an earlier "has it", asked by key alone,
		// may have been about that request).
		{"it-then-other", []model.FindingKind{"", model.FindingHasIt, model.FindingHasOther}, model.FindingHasIt, 2, true, model.FilterHasOther},
		{"other-then-cannot-tell", []model.FindingKind{"", model.FindingHasOther, model.FindingCannotTell}, none, 0, false, model.FilterCannotTell},
		{"only-other", []model.FindingKind{"", model.FindingHasOther}, none, 0, false, model.FilterHasOther},
	}
	for _, c := range cases {
		h.tx(t, func(tx store.Tx) error {
			_, err := insertHistory(tx, "acme", c.key, c.attempts, func(int) string { return "sbx_1" })
			if err != nil {
				return err
			}
			return nil
		})
	}
	check := func(how, key string, op model.Operation) {
		t.Helper()
		for _, c := range cases {
			if c.key != key {
				continue
			}
			b := op.BindingFinding
			switch {
			case c.binding == none && b != nil:
				t.Errorf("%s %s: binding %+v; want none (latest %+v)", how, key, b, op.Finding)
			case c.binding != none && (b == nil || b.Kind != c.binding || b.Seq != c.seq || b.Stale || b.Earlier != c.earlier ||
				b.Provider != "sandbox" || b.Detail != fmt.Sprintf("step %d", c.seq) || (b.Kind == model.FindingHasIt && b.Ref != "sbx_1")):
				t.Errorf("%s %s: binding %+v; want %s at %d, earlier %v, not stale", how, key, b, c.binding, c.seq, c.earlier)
			}
			if c.earlier != op.Earlier() {
				t.Errorf("%s %s: Earlier() %v; want %v", how, key, op.Earlier(), c.earlier)
			}
			// The column shows what the filter selects by.
			shown := model.FilterNotChecked
			if f := op.Shown(); f != nil {
				shown = model.FindingFilter(f.Kind)
			}
			if shown != c.shown {
				t.Errorf("%s %s: shows %s; want %s", how, key, shown, c.shown)
			}
			return
		}
		t.Errorf("%s: unexpected %s", how, key)
	}
	// A page smaller than the cases, so the second page's findings are read too.
	var all []model.Operation
	q := store.ListQuery{Tenant: "acme", Limit: 4}
	for {
		page, err := h.L.List(ctxT(t), q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < q.Limit {
			break
		}
		q.BeforeID = page[len(page)-1].ID
	}
	if len(all) != len(cases) {
		t.Fatalf("listed %d operations; want %d", len(all), len(cases))
	}
	for _, op := range all {
		check("list", op.Key, op)
	}
	for _, c := range cases {
		op, err := h.L.Get(ctxT(t), "acme", c.key)
		if err != nil {
			t.Fatal(err)
		}
		check("get", c.key, *op)
		d, err := h.L.Detail(ctxT(t), "acme", c.key)
		if err != nil {
			t.Fatal(err)
		}
		check("detail", c.key, d.Operation)
	}
	for _, filter := range model.AllFindingFilters {
		ops, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "acme", Finding: filter})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, op := range ops {
			got = append(got, op.Key)
		}
		for i := len(cases) - 1; i >= 0; i-- { // newest first
			if cases[i].shown == filter {
				want = append(want, cases[i].key)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("filter %s: %v; want %v", filter, got, want)
		}
	}
}

// Every lookup history of up to four steps (has it, has nothing, cannot
// tell, a retry): what a list page (forwards and backwards, and sorted by
// another column) and Get say binds a decision (Operation.Binding) is
// what the ledger's write rule reads (Tx.LatestConclusiveFinding, through
// the same conclusiveness), the binding and latest findings are Detail's,
// and each finding filter selects exactly the rows whose column shows it.
func testBindingFindingEveryHistory(t *testing.T, h *harness) {
	steps := []model.FindingKind{model.FindingHasIt, model.FindingHasNothing, model.FindingCannotTell, ""}
	var histories [][]model.FindingKind
	var grow func(prefix []model.FindingKind)
	grow = func(prefix []model.FindingKind) {
		if len(prefix) > 0 {
			histories = append(histories, append([]model.FindingKind(nil), prefix...))
		}
		if len(prefix) == 4 {
			return
		}
		for _, s := range steps {
			grow(append(prefix, s))
		}
	}
	grow(nil)
	keyOf := func(hist []model.FindingKind) string {
		k := "h"
		for _, f := range hist {
			k += "-" + string(f)
			if f == "" {
				k += "retry"
			}
		}
		return k
	}
	h.tx(t, func(tx store.Tx) error {
		for _, hist := range histories {
			if _, err := insertHistory(tx, "every", keyOf(hist), hist, func(i int) string { return fmt.Sprintf("sbx_%d", i+1) }); err != nil {
				return err
			}
		}
		return nil
	})
	same := func(a, b *model.Finding) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.Kind == b.Kind && a.Seq == b.Seq && a.Stale == b.Stale && a.Earlier == b.Earlier && a.Ref == b.Ref && a.Detail == b.Detail
	}
	evidence := func(f *model.Finding) string {
		if !f.Conclusive() {
			return "none"
		}
		return fmt.Sprintf("%s@%d", f.Kind, f.Seq)
	}
	check := func(how string, op model.Operation) {
		t.Helper()
		d, err := h.L.Detail(ctxT(t), op.Tenant, op.Key)
		if err != nil {
			t.Fatal(err)
		}
		if !same(op.Finding, d.Operation.Finding) || !same(op.BindingFinding, d.Operation.BindingFinding) {
			t.Errorf("%s %s: finding %+v binding %+v; detail says %+v and %+v", how, op.Key, op.Finding, op.BindingFinding, d.Operation.Finding, d.Operation.BindingFinding)
		}
		var rule *model.Finding
		h.tx(t, func(tx store.Tx) error {
			rule, err = tx.LatestConclusiveFinding(op.ID)
			return err
		})
		if got, want := evidence(op.Binding()), evidence(rule); got != want {
			t.Errorf("%s %s: the screen's binding finding is %s; the write rule's is %s", how, op.Key, got, want)
		}
	}
	var listed int
	pages := map[string]store.ListQuery{
		"forwards":       {Tenant: "every", Limit: 7},
		"by state, back": {Tenant: "every", Limit: 7, Sort: model.SortState, Reverse: true},
	}
	for how, q := range pages {
		listed = 0
		for {
			page, err := h.L.List(ctxT(t), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range page {
				check(how, op)
			}
			listed += len(page)
			if len(page) < q.Limit {
				break
			}
			q.BeforeID = page[len(page)-1].ID
		}
		if listed != len(histories) {
			t.Errorf("%s: listed %d; want %d", how, listed, len(histories))
		}
	}
	// Backwards from the end: AfterID pages.
	q := store.ListQuery{Tenant: "every", Limit: 7, AfterID: 1}
	if first, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "every", Reverse: true, Limit: 1}); err == nil && len(first) == 1 {
		q.AfterID = first[0].ID
		page, err := h.L.List(ctxT(t), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range page {
			check("backwards", op)
		}
	}
	for _, hist := range histories[:20] {
		op, err := h.L.Get(ctxT(t), "every", keyOf(hist))
		if err != nil {
			t.Fatal(err)
		}
		check("get", *op)
	}
	all, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "every", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, filter := range model.AllFindingFilters {
		ops, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "every", Finding: filter, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, op := range ops {
			got[op.Key] = true
		}
		for _, op := range all {
			shown := model.FilterNotChecked
			if f := op.Shown(); f != nil {
				shown = model.FindingFilter(f.Kind)
			}
			if (shown == filter) != got[op.Key] {
				t.Errorf("filter %s: %s selected %v, its column shows %s", filter, op.Key, got[op.Key], shown)
			}
		}
	}
}

// insertHistory inserts an unknown operation of tenant/key sent to the
// sandbox and its attempts, one per step: "" a dispatch, else a lookup with
// that finding and detail "step N" (N its number; a "has it"'s reference
// ref(N-1)), each a second after the one before.
func insertHistory(tx store.Tx, tenant, key string, steps []model.FindingKind, ref func(i int) string) (*model.Operation, error) {
	op := newOp(tenant, key, model.StateUnknown)
	op.Provider = "sandbox"
	if err := tx.InsertOperation(op); err != nil {
		return nil, err
	}
	for i, f := range steps {
		a := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeDispatched, Fingerprint: op.Fingerprint,
			WorkerID: "test", StartedAt: time.UnixMilli(int64(1000 * (i + 1))).UTC()}
		if f != "" {
			a.Outcome, a.Finding, a.Detail = model.OutcomeLookup, f, fmt.Sprintf("step %d", i+1)
			if f == model.FindingHasIt {
				a.ProviderRef = ref(i)
			}
		}
		if err := tx.InsertAttempt(a); err != nil {
			return nil, err
		}
	}
	return op, nil
}
