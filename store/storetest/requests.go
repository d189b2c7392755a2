package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// requestOutcomes are the outcomes the cases ask RequestHistories for
// (reconcile's reading of a request asks for these).
var requestOutcomes = []model.Outcome{model.OutcomeDispatched, model.OutcomeRedispatched, model.OutcomeTimedOut, model.OutcomeLateResult}

// attemptWord is what a case compares of an attempt: what the grace is
// read from.
func attemptWord(a model.Attempt) string {
	return fmt.Sprintf("%d:%s@%d+%s ref=%q err=%q", a.Seq, a.Outcome, a.StartedAt.UnixMilli(), a.Duration, a.ProviderRef, a.Error)
}

// RequestHistories reads many operations' requests at once: each key's
// operation as stored (its claim, its lease, its claim's apply-by — a
// released claim's later than its last request), and only its attempts of
// the outcomes asked for, in order; an unknown key, another tenant's, has
// no entry; no keys read nothing; more keys than one statement names
// (SQLite's chunks) are all read.
func testRequestHistories(t *testing.T, h *harness) {
	ctx := ctxT(t)
	at := func(s int) time.Time { return h.now.Add(time.Duration(s) * time.Second) }
	type att struct {
		outcome  model.Outcome
		start    int // seconds after h.now
		dur      time.Duration
		ref, err string
	}
	insert := func(tx store.Tx, op *model.Operation, atts []att) error {
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		for _, a := range atts {
			x := &model.Attempt{OperationID: op.ID, Outcome: a.outcome, Fingerprint: op.Fingerprint, StartedAt: at(a.start),
				Duration: a.dur, ProviderRef: a.ref, Error: a.err}
			if a.outcome == model.OutcomeLookup {
				x.Finding, x.Detail = model.FindingHasNothing, "nothing under the key"
			}
			if err := tx.InsertAttempt(x); err != nil {
				return err
			}
		}
		return nil
	}
	sent := func(tenant, key string) *model.Operation {
		op := newOp(tenant, key, model.StateUnknown)
		op.Provider, op.DownstreamKey, op.ClaimNo = "pay", "dk-"+tenant+"-"+key, 1
		return op
	}
	bare := sent("acme", "bare") // claimed, no attempt recorded
	mixed := sent("acme", "mixed")
	mixedAtts := []att{
		{model.OutcomeDispatched, 1, 0, "", ""},
		{model.OutcomeReplayed, 2, 0, "", ""},
		{model.OutcomeTimedOut, 3, 5 * time.Second, "", "no answer within the timeout"},
		{model.OutcomeLookup, 9, 0, "", ""},
		{model.OutcomeLateResult, 10, 0, "", "no definite answer"},
		{model.OutcomeLeaseExpired, 11, 0, "", ""},
	}
	// A released claim: its lease ended and a sweep made it unknown; the
	// provider may apply its request until its recorded apply-by, later
	// than the request and than this ledger's own lease.
	released := sent("acme", "released")
	released.ClaimNo, released.ClaimApplyBy, released.ClaimDispatchID = 2, at(600), "kind=aaaa"
	running := sent("acme", "running")
	running.State, running.LeaseUntil, running.ClaimNo = model.StateInProgress, at(45), 3
	other := sent("globex", "mixed") // another tenant's, same key
	local := newOp("acme", "local", model.StateApplied)
	h.tx(t, func(tx store.Tx) error {
		for _, c := range []struct {
			op   *model.Operation
			atts []att
		}{
			{bare, nil},
			{mixed, mixedAtts},
			{released, []att{{model.OutcomeDispatched, 20, 0, "", ""}, {model.OutcomeLeaseExpired, 80, 0, "", ""}}},
			{running, []att{{model.OutcomeRedispatched, 30, 0, "", ""}}},
			{other, []att{{model.OutcomeApplied, 40, 0, "ref-1", ""}}},
			{local, []att{{model.OutcomeCreated, 0, 0, "", ""}}},
		} {
			if err := insert(tx, c.op, c.atts); err != nil {
				return err
			}
		}
		return nil
	})
	k := func(tenant, key string) store.OpKey { return store.OpKey{Tenant: tenant, Key: key} }
	op := func(o *model.Operation) string {
		return fmt.Sprintf("#%d %s/%s %s v%d claim %d provider %q lease %d %s", o.ID, o.Tenant, o.Key, o.State, o.Version, o.ClaimNo,
			o.Provider, o.LeaseUntil.UnixMilli(), claimRecord(o))
	}
	words := func(atts []att) []string {
		var out []string
		for i, a := range atts {
			for _, o := range requestOutcomes {
				if a.outcome == o {
					out = append(out, attemptWord(model.Attempt{Seq: i + 1, Outcome: a.outcome, StartedAt: at(a.start), Duration: a.dur, ProviderRef: a.ref, Error: a.err}))
				}
			}
		}
		return out
	}
	type entry struct {
		op   *model.Operation
		atts []string
	}
	for _, c := range []struct {
		name     string
		keys     []store.OpKey
		outcomes []model.Outcome
		want     map[store.OpKey]entry
	}{
		{"no keys", nil, requestOutcomes, map[store.OpKey]entry{}},
		{"an empty list", []store.OpKey{}, requestOutcomes, map[store.OpKey]entry{}},
		{"unknown keys, another tenant's key", []store.OpKey{k("acme", "nope"), k("globex", "bare"), k("nobody", "mixed")}, requestOutcomes, map[store.OpKey]entry{}},
		{"with and without attempts, twice named, beside unknown", []store.OpKey{k("acme", "mixed"), k("acme", "nope"), k("acme", "bare"), k("acme", "mixed")}, requestOutcomes,
			map[store.OpKey]entry{k("acme", "mixed"): {mixed, words(mixedAtts)}, k("acme", "bare"): {bare, nil}}},
		{"a released claim applies later than its last request", []store.OpKey{k("acme", "released")}, requestOutcomes,
			map[store.OpKey]entry{k("acme", "released"): {released, []string{attemptWord(model.Attempt{Seq: 1, Outcome: model.OutcomeDispatched, StartedAt: at(20)})}}}},
		{"a running claim, another tenant's same key, a local operation", []store.OpKey{k("acme", "running"), k("globex", "mixed"), k("acme", "local")}, requestOutcomes,
			map[store.OpKey]entry{k("acme", "running"): {running, []string{attemptWord(model.Attempt{Seq: 1, Outcome: model.OutcomeRedispatched, StartedAt: at(30)})}},
				k("globex", "mixed"): {other, nil}, k("acme", "local"): {local, nil}}},
		{"only the outcomes asked for", []store.OpKey{k("acme", "mixed"), k("globex", "mixed")}, []model.Outcome{model.OutcomeApplied, model.OutcomeLookup},
			map[store.OpKey]entry{k("acme", "mixed"): {mixed, []string{attemptWord(model.Attempt{Seq: 4, Outcome: model.OutcomeLookup, StartedAt: at(9)})}},
				k("globex", "mixed"): {other, []string{attemptWord(model.Attempt{Seq: 1, Outcome: model.OutcomeApplied, StartedAt: at(40), ProviderRef: "ref-1"})}}}},
		{"no outcomes: the operations alone", []store.OpKey{k("acme", "mixed")}, nil, map[store.OpKey]entry{k("acme", "mixed"): {mixed, nil}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := h.L.RequestHistories(ctx, c.keys, c.outcomes)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != len(c.want) {
				t.Errorf("%d entries (%v); want %d", len(got), got, len(c.want))
			}
			for key, w := range c.want {
				g, ok := got[key]
				if !ok {
					t.Errorf("%v: no entry", key)
					continue
				}
				if a, b := op(&g.Operation), op(w.op); a != b {
					t.Errorf("%v: read %s; want %s", key, a, b)
				}
				var atts []string
				for _, a := range g.Attempts {
					if a.OperationID != w.op.ID || a.ID == 0 {
						t.Errorf("%v: attempt %+v is not one of its own", key, a)
					}
					atts = append(atts, attemptWord(a))
				}
				if fmt.Sprint(atts) != fmt.Sprint(w.atts) {
					t.Errorf("%v: attempts %q; want %q", key, atts, w.atts)
				}
			}
		})
	}
	if !released.ClaimApplyBy.After(at(20).Add(time.Minute)) {
		t.Fatal("the case's claim does not apply later than its request")
	}

	// More keys than one statement names: every one is read, once (a key
	// named twice, its attempts once).
	const n = 1234
	// b0005 named first and again near the end: apart, in two statements.
	many := append(make([]store.OpKey, 0, n+3), k("bulk", "b0005"))
	h.tx(t, func(tx store.Tx) error {
		for i := 0; i < n; i++ {
			o := sent("bulk", fmt.Sprintf("b%04d", i))
			var atts []att
			if i%3 != 0 {
				atts = []att{{model.OutcomeDispatched, i, 0, "", ""}}
			}
			if err := insert(tx, o, atts); err != nil {
				return err
			}
		}
		return nil
	})
	for i := n - 1; i >= 0; i-- {
		many = append(many, k("bulk", fmt.Sprintf("b%04d", i)))
		if i == n/2 {
			many = append(many, k("bulk", "nope"), k("acme", "released"))
		}
	}
	got, err := h.L.RequestHistories(ctx, many, requestOutcomes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n+1 {
		t.Errorf("%d of %d keys read", len(got), n+1)
	}
	for i := 0; i < n; i++ {
		key := k("bulk", fmt.Sprintf("b%04d", i))
		g, ok := got[key]
		switch {
		case !ok:
			t.Errorf("%v: no entry", key)
		case g.Operation.Key != key.Key || g.Operation.Tenant != "bulk" || g.Operation.ClaimNo != 1:
			t.Errorf("%v: read %s", key, op(&g.Operation))
		case i%3 == 0 && len(g.Attempts) != 0, i%3 != 0 && (len(g.Attempts) != 1 || !g.Attempts[0].StartedAt.Equal(at(i)) || g.Attempts[0].OperationID != g.Operation.ID):
			t.Errorf("%v: %d attempts", key, len(g.Attempts))
		}
	}
	if g := got[k("acme", "released")]; !g.Operation.ClaimApplyBy.Equal(at(600)) || len(g.Attempts) != 1 {
		t.Errorf("released among many: %s, %d attempts", op(&g.Operation), len(g.Attempts))
	}
}
