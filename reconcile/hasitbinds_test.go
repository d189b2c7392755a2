package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A provider never takes a delivery back, so a lookup that found the effect
// stays true: a later "has nothing" from the same provider (its file went
// back in time without the mark noticing, e.g. copied without its -wal)
// contradicts it and must not let "not applied" or a new key through on
// the typed evidence alone — either would send the effect a second time.
// Nor does a retry of the key after it (an attempt that makes the finding
// stale: a retry cannot take a delivery back either) — one retry by the
// agent, then "not applied" on typed evidence, and the next call sent the
// effect a second time. Each case records lookups (and attempts) after the
// delivery and then decides without the override.
func TestALaterHasNothingDoesNotTakeBackAnEarlierHasIt(t *testing.T) {
	cases := []struct {
		name     string
		findings []model.FindingKind
	}{
		{"it-nothing", []model.FindingKind{model.FindingHasIt, model.FindingHasNothing}},
		{"it-cannot-nothing-cannot", []model.FindingKind{model.FindingHasIt, model.FindingCannotTell, model.FindingHasNothing, model.FindingCannotTell}},
		{"nothing-it-nothing", []model.FindingKind{model.FindingHasNothing, model.FindingHasIt, model.FindingHasNothing}},
		// A retry of the key after the lookup ("" here: an attempt that
		// is not a lookup) makes the finding stale, not untrue.
		{"it-retry", []model.FindingKind{model.FindingHasIt, ""}},
		{"it-retry-nothing", []model.FindingKind{model.FindingHasIt, "", model.FindingHasNothing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t, fast())
			ctx := context.Background()
			unknownWithDelivery(t, l, "k")
			recordHistory(t, l, "k", "sbx_1", c.findings)
			d := reconcile.Decision{Tenant: "acme", Key: "k", Operator: "alice", Reason: "customer says no mail came", Evidence: "ticket 4411", WithinGrace: true}
			if _, err := l.svc.MarkNotApplied(ctx, d); model.CodeOf(err) != model.CodeIllegal {
				t.Fatalf("not applied against an earlier has-it: %v; want refused (illegal)", err)
			}
			if _, _, err := l.svc.AuthorizeNewKey(ctx, d); model.CodeOf(err) != model.CodeIllegal {
				t.Fatalf("a new key against an earlier has-it: %v; want refused (illegal)", err)
			}
			if got, err := l.st.Get(ctx, "acme", "k"); err != nil || got.State != model.StateUnknown {
				t.Fatalf("after the refusals: %+v %v; want unknown", got, err)
			}
			d.Override = true
			if got, err := l.svc.MarkNotApplied(ctx, d); err != nil || got.State != model.StateNotApplied {
				t.Fatalf("with the override: %+v %v", got, err)
			}
		})
	}
}

// The review by finding (the console's R, ops resolve by finding) proposes
// by the same binding finding: an operation whose lookups went has it →
// has nothing (or cannot tell, or a retry after) is proposed "mark
// applied" with the earlier reference, never "not applied" — even from a
// provider whose lookup is declared authoritative.
func TestAReviewByFindingProposesByTheEarlierHasIt(t *testing.T) {
	l := newLedger(t, fast())
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	ctx := context.Background()
	histories := map[string][]model.FindingKind{
		"it-nothing":    {model.FindingHasIt, model.FindingHasNothing},
		"it-cannot":     {model.FindingHasIt, model.FindingCannotTell},
		"it-retry":      {model.FindingHasIt, ""},
		"nothing-fresh": {model.FindingHasNothing},
	}
	for key, findings := range histories {
		unknownWithDelivery(t, l, key)
		recordHistory(t, l, key, "sbx_"+key, findings)
	}
	ops, err := l.st.List(ctx, store.ListQuery{State: model.StateUnknown})
	if err != nil {
		t.Fatal(err)
	}
	r := l.svc.ReviewByFinding(ops)
	apply := map[string]string{}
	for _, x := range r.Apply {
		apply[x.Key] = x.Evidence
	}
	for _, key := range []string{"it-nothing", "it-cannot", "it-retry"} {
		if apply[key] != "sbx_"+key {
			t.Errorf("%s: proposed apply with evidence %q; want apply on the earlier reference sbx_%s", key, apply[key], key)
		}
	}
	// nothing-fresh's "has nothing" was written into the ledger, not
	// asked for by this service: its provider is asked again before it
	// is proposed (Recheck).
	if len(r.NotApplied) != 0 || len(r.Recheck) != 1 || r.Recheck[0].Key != "nothing-fresh" {
		t.Errorf("not applied %d, recheck %+v; want only nothing-fresh, checked again first", len(r.NotApplied), r.Recheck)
	}
	// Written, the proposals go through: none needs an override.
	d := reconcile.Decision{Operator: "oncall", Reason: "triage findings reviewed"}
	out, err := l.svc.DecideMany(ctx, model.ActionMarkApplied, d, r.Apply)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Verdict != reconcile.VerdictWritten {
			t.Errorf("%s: %v; want written", o.Key, o.Verdict)
		}
	}
}

// recordHistory appends to acme/key's attempts, in order, a lookup per
// finding ("has it" with ref as its reference), "" standing for a retry of
// the key (an attempt that is not a lookup).
func recordHistory(t *testing.T, l *ledger, key, ref string, findings []model.FindingKind) {
	t.Helper()
	ctx := context.Background()
	op, err := l.st.Get(ctx, "acme", key)
	if err != nil {
		t.Fatal(err)
	}
	testledger.Lookups{Worker: "triage by test", Ref: ref, Detail: func(f model.FindingKind) string { return string(f) }}.
		Record(t, l.st, op, findings...)
}

// A review by finding proposes only what it will write: an authoritative
// "has nothing" followed by a lookup that could not tell was proposed
// "not applied", and every write of it was refused as stale ("the
// provider now says cannot tell — look again"), however often the
// operator looked again. Such a row is left to decide one by one; a
// proposal on an unchanged ledger is written.
func TestAReviewByFindingProposesNothingItThenRefusesAsStale(t *testing.T) {
	l := newLedger(t, fast())
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	ctx := context.Background()
	histories := map[string][]model.FindingKind{
		"nothing-cannot": {model.FindingHasNothing, model.FindingCannotTell},
		"nothing-fresh":  {model.FindingHasNothing},
	}
	for key, findings := range histories {
		unknownWithDelivery(t, l, key)
		recordHistory(t, l, key, "sbx_"+key, findings)
	}
	ops, err := l.st.List(ctx, store.ListQuery{State: model.StateUnknown})
	if err != nil {
		t.Fatal(err)
	}
	r := l.svc.ReviewByFinding(ops)
	// Decided right after the lost replies: within their grace.
	d := reconcile.Decision{Operator: "oncall", Reason: "triage findings reviewed", WithinGrace: true}
	if len(r.NotApplied) > 0 {
		out, err := l.svc.DecideMany(ctx, model.ActionMarkNotApplied, d, r.NotApplied)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Verdict != reconcile.VerdictWritten {
				t.Errorf("%s: proposed not applied, then %v (%v); a proposal on an unchanged ledger must be written", o.Key, o.Verdict, o.Err)
			}
		}
	}
	oneByOne := map[string]bool{}
	for _, op := range r.LaterUnsure {
		oneByOne[op.Key] = true
	}
	if !oneByOne["nothing-cannot"] {
		t.Errorf("nothing-cannot is not left to decide one by one as one whose latest lookup could not tell (%v)", oneByOne)
	}
}
