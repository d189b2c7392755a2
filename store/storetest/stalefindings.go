package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// staledBy is, for every outcome but a lookup, whether an attempt with it
// after a lookup makes the finding stale (model.Outcome.StalesFinding):
// only one that may have reached the provider, or told us something of
// it, does. A call refused ("unknown: stop"), a replay, a conflict or an
// expiry sends nothing. in_progress stales: it is also how a dispatched
// attempt the provider answered "busy" ends.
var staledBy = map[model.Outcome]bool{
	model.OutcomeRefused: false, model.OutcomeReplayed: false, model.OutcomeConflict: false, model.OutcomeExpired: false,
	model.OutcomeInProgress: true, model.OutcomeDispatched: true, model.OutcomeTimedOut: true, model.OutcomeRedispatched: true,
	model.OutcomeApplied: true, model.OutcomeFailed: true, model.OutcomeNotApplied: true, model.OutcomeLateResult: true,
	model.OutcomeLeaseExpired: true, model.OutcomeCreated: true,
}

// A finding is stale only after an attempt that may have reached the
// provider, by the same rule everywhere: Get, List (its finding, its
// binding finding and the finding filter), Detail, Tx.LatestFinding and
// Tx.LatestConclusiveFinding, and the model's rule over Detail's attempts.
// Refused, replayed, conflict and expired attempts after a "has nothing"
// leave it standing; a dispatch or a timeout after it does not.
func testFindingStaleOnlyAfterAnAttemptThatMayHaveReachedTheProvider(t *testing.T, h *harness) {
	for _, o := range model.AllOutcomes {
		if _, ok := staledBy[o]; !ok && o != model.OutcomeLookup {
			t.Fatalf("outcome %s: say whether it stales a finding in staledBy", o)
		}
	}
	type step struct {
		outcome model.Outcome
		finding model.FindingKind
	}
	look := func(f model.FindingKind) step { return step{model.OutcomeLookup, f} }
	type want struct {
		latest     model.FindingKind
		latestSeq  int
		stale      bool
		binding    model.FindingKind // the list's BindingFinding; "" none
		bindingSeq int
		earlier    bool
		conclusive model.FindingKind // Tx.LatestConclusiveFinding
		concSeq    int
		concStale  bool
		shown      model.FindingFilter
	}
	type tcase struct {
		key   string
		steps []step
		want  want
	}
	var cases []tcase
	for o, st := range staledBy {
		// Twice: two refused calls are no more news than one.
		after := []step{{outcome: o}, {outcome: o}}
		nothing := tcase{"nothing-then-" + string(o), append([]step{{outcome: model.OutcomeDispatched}, look(model.FindingHasNothing)}, after...),
			want{latest: model.FindingHasNothing, latestSeq: 2, stale: st, conclusive: model.FindingHasNothing, concSeq: 2, concStale: st, shown: model.FilterHasNothing}}
		// A later "cannot tell": the "has nothing" still binds, and
		// shows, unless an attempt staled it.
		cannot := tcase{"nothing-" + string(o) + "-cannot-tell", append(append([]step{{outcome: model.OutcomeDispatched}, look(model.FindingHasNothing)}, after...), look(model.FindingCannotTell)),
			want{latest: model.FindingCannotTell, latestSeq: 5, conclusive: model.FindingHasNothing, concSeq: 2, concStale: st, shown: model.FilterCannotTell}}
		if !st {
			cannot.want.binding, cannot.want.bindingSeq, cannot.want.earlier, cannot.want.shown = model.FindingHasNothing, 2, true, model.FilterHasNothing
		}
		// A "has it" binds whatever came after it; it reads stale only
		// after an attempt that may have reached the provider.
		it := tcase{"it-then-" + string(o), append([]step{{outcome: model.OutcomeDispatched}, look(model.FindingHasIt)}, after...),
			want{latest: model.FindingHasIt, latestSeq: 2, stale: st, conclusive: model.FindingHasIt, concSeq: 2, shown: model.FilterHasIt}}
		if st {
			it.want.binding, it.want.bindingSeq = model.FindingHasIt, 2
		}
		cases = append(cases, nothing, cannot, it)
	}
	h.tx(t, func(tx store.Tx) error {
		for _, c := range cases {
			op := newOp("stale", c.key, model.StateUnknown)
			op.Provider = "sandbox"
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			for i, s := range c.steps {
				a := &model.Attempt{OperationID: op.ID, Outcome: s.outcome, Fingerprint: op.Fingerprint, Finding: s.finding,
					WorkerID: "test", StartedAt: time.UnixMilli(int64(1000 * (i + 1))).UTC()}
				if s.finding != "" {
					a.Detail = fmt.Sprintf("step %d", i+1)
				}
				if s.finding == model.FindingHasIt {
					a.ProviderRef = "sbx_1"
				}
				if err := tx.InsertAttempt(a); err != nil {
					return fmt.Errorf("%s step %d: %w", c.key, i+1, err)
				}
			}
		}
		return nil
	})
	listed := map[string]model.Operation{}
	q := store.ListQuery{Tenant: "stale", Limit: 10}
	for {
		page, err := h.L.List(ctxT(t), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range page {
			listed[op.Key] = op
		}
		if len(page) < q.Limit {
			break
		}
		q.BeforeID = page[len(page)-1].ID
	}
	byFilter := map[string]model.FindingFilter{}
	for _, f := range model.AllFindingFilters {
		ops, err := h.L.List(ctxT(t), store.ListQuery{Tenant: "stale", Finding: f, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			byFilter[op.Key] = f
		}
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			w := c.want
			one, err := h.L.Get(ctxT(t), "stale", c.key)
			if err != nil {
				t.Fatal(err)
			}
			d, err := h.L.Detail(ctxT(t), "stale", c.key)
			if err != nil {
				t.Fatal(err)
			}
			var latest, conclusive *model.Finding
			h.tx(t, func(tx store.Tx) error {
				if latest, err = tx.LatestFinding(one.ID); err != nil {
					return err
				}
				conclusive, err = tx.LatestConclusiveFinding(one.ID)
				return err
			})
			op, ok := listed[c.key]
			if !ok {
				t.Fatalf("not listed")
			}
			views := map[string]model.Operation{"list": op, "get": *one, "detail": d.Operation}
			for how, v := range views {
				f := v.Finding
				if f == nil || f.Kind != w.latest || f.Seq != w.latestSeq || f.Stale != w.stale {
					t.Errorf("%s: finding %+v; want %s #%d, stale %v", how, f, w.latest, w.latestSeq, w.stale)
				}
				b := v.BindingFinding
				switch {
				case w.binding == "" && b != nil:
					t.Errorf("%s: binding %+v; want none", how, b)
				case w.binding != "" && (b == nil || b.Kind != w.binding || b.Seq != w.bindingSeq || b.Stale || b.Earlier != w.earlier):
					t.Errorf("%s: binding %+v; want %s #%d, earlier %v, not stale", how, b, w.binding, w.bindingSeq, w.earlier)
				}
			}
			if latest == nil || latest.Kind != w.latest || latest.Seq != w.latestSeq || latest.Stale != w.stale {
				t.Errorf("Tx.LatestFinding: %+v; want %s #%d, stale %v", latest, w.latest, w.latestSeq, w.stale)
			}
			if conclusive == nil || conclusive.Kind != w.conclusive || conclusive.Seq != w.concSeq || conclusive.Stale != w.concStale {
				t.Errorf("Tx.LatestConclusiveFinding: %+v; want %s #%d, stale %v", conclusive, w.conclusive, w.concSeq, w.concStale)
			}
			if m := model.LatestFinding("sandbox", d.Attempts); m == nil || m.Stale != w.stale {
				t.Errorf("model.LatestFinding over Detail's attempts: %+v; want stale %v", m, w.stale)
			}
			if m := model.BindingFinding("sandbox", d.Attempts); m == nil || m.Kind != w.conclusive || m.Stale != w.concStale {
				t.Errorf("model.BindingFinding over Detail's attempts: %+v; want %s, stale %v", m, w.conclusive, w.concStale)
			}
			shown := model.FilterNotChecked
			if f := op.Shown(); f != nil {
				shown = model.FindingFilter(f.Kind)
			}
			if shown != w.shown || byFilter[c.key] != w.shown {
				t.Errorf("the column shows %s and the filter selects it by %s; want %s", shown, byFilter[c.key], w.shown)
			}
		})
	}
}
