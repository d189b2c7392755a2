package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// Before a bulk "not applied" each row's provider is asked (LookFirst), and
// DecideMany then refuses, per row, the ones whose provider has the effect
// — illegal, naming the finding — while writing the one it has nothing of;
// a row whose provider cannot tell stays the operator's decision on the
// typed evidence. The same rule (decideTx's Against over the recorded
// finding) with Override writes against the finding.
func TestLookFirstThenDecideManyRefusesPerRowWhereTheProviderHasIt(t *testing.T) {
	l := newLedger(t, fast())
	ctx := context.Background()
	unknownWithDelivery(t, l, "has-it")
	unknownWithoutDelivery(t, l, "has-nothing")
	var ops []model.Operation
	for _, k := range []string{"has-it", "has-nothing"} {
		op, err := l.st.Get(ctx, "acme", k)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, *op)
	}
	for _, op := range ops {
		if !l.svc.NeedsLook(model.ActionMarkNotApplied, op) || l.svc.NeedsLook(model.ActionMarkApplied, op) {
			t.Fatalf("%s: NeedsLook not applied %v, applied %v", op.Key, l.svc.NeedsLook(model.ActionMarkNotApplied, op), l.svc.NeedsLook(model.ActionMarkApplied, op))
		}
	}
	looked, err := l.svc.LookFirst(ctx, model.ActionMarkNotApplied, ops, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if f := looked[0].Finding; f == nil || f.Kind != model.FindingHasIt || f.By != "alice" {
		t.Fatalf("has-it: %+v", f)
	}
	if f := looked[1].Finding; f == nil || f.Kind != model.FindingHasNothing {
		t.Fatalf("has-nothing: %+v", f)
	}
	if against, text := reconcile.AgainstFinding(model.ActionMarkNotApplied, looked[0]); !against || text == "" {
		t.Fatalf("AgainstFinding(has-it) = %v %q", against, text)
	}
	if against, _ := reconcile.AgainstFinding(model.ActionMarkNotApplied, looked[1]); against {
		t.Fatal("AgainstFinding(has-nothing) for not applied")
	}
	// Fresh and conclusive: not asked again.
	for _, op := range looked {
		if l.svc.NeedsLook(model.ActionMarkNotApplied, op) {
			t.Fatalf("%s is asked again after a fresh finding", op.Key)
		}
	}
	targets := []reconcile.Target{reconcile.TargetOf(looked[0]), reconcile.TargetOf(looked[1])}
	d := reconcile.Decision{Operator: "alice", Reason: "incident INC-7", Evidence: "INC-7", WithinGrace: true} // right after the lost replies
	out, err := l.svc.DecideMany(ctx, model.ActionMarkNotApplied, d, targets)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Verdict != reconcile.VerdictIllegal || out[1].Verdict != reconcile.VerdictWritten {
		t.Fatalf("verdicts %s, %s; want illegal, written (%v)", out[0].Verdict, out[1].Verdict, out[0].Err)
	}
	d.Override = true
	out, err = l.svc.DecideMany(ctx, model.ActionMarkNotApplied, d, targets[:1])
	if err != nil || out[0].Verdict != reconcile.VerdictWritten {
		t.Fatalf("with override: %+v %v", out, err)
	}

	// A provider that cannot be asked: "cannot tell", recorded, and the
	// operator's typed evidence decides.
	unknownWithDelivery(t, l, "unreachable")
	op, _ := l.st.Get(ctx, "acme", "unreachable")
	down := reconcile.New(l.st, l.svc.Tools, provider.Registry{"sandbox": provider.Unreachable("sandbox", true, "no provider file")})
	looked, err = down.LookFirst(ctx, model.ActionMarkNotApplied, []model.Operation{*op}, "alice")
	if err != nil || looked[0].Finding == nil || looked[0].Finding.Kind != model.FindingCannotTell {
		t.Fatalf("unreachable: %+v %v", looked[0].Finding, err)
	}
	d.Override = false
	out, err = down.DecideMany(ctx, model.ActionMarkNotApplied, d, []reconcile.Target{reconcile.TargetOf(looked[0])})
	if err != nil || out[0].Verdict != reconcile.VerdictWritten {
		t.Fatalf("cannot tell, typed evidence: %+v %v", out, err)
	}
}

// A bulk "not applied" run with a config that does not name the
// operations' provider (the agents' config had it; --config was left out,
// or the provider was renamed since) asked nothing and said nothing: every
// row, the ones the provider has too, was written on the typed evidence
// with no "cannot tell" on it. Such a provider cannot be asked: that is
// "cannot tell", recorded on its row, naming why — as for one that is
// down.
func TestLookFirstSaysCannotTellForAProviderThisConfigDoesNotName(t *testing.T) {
	l := newLedger(t, fast())
	ctx := context.Background()
	unknownWithDelivery(t, l, "k")
	op, err := l.st.Get(ctx, "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	other := reconcile.New(l.st, l.svc.Tools, provider.Registry{"mail": provider.Unreachable("mail", true, "not this one")})
	if !other.NeedsLook(model.ActionMarkNotApplied, *op) {
		t.Fatal("NeedsLook: false for an operation whose provider this service does not know")
	}
	looked, err := other.LookFirst(ctx, model.ActionMarkNotApplied, []model.Operation{*op}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	f := looked[0].Finding
	if f == nil || f.Kind != model.FindingCannotTell || !strings.Contains(f.Detail, `provider "sandbox" is not in this config`) {
		t.Fatalf("finding %+v; want cannot tell naming the provider", f)
	}
	if rec, _ := l.st.Get(ctx, "acme", "k"); rec.Finding == nil || rec.Finding.Kind != model.FindingCannotTell {
		t.Fatalf("recorded: %+v; want cannot tell", rec.Finding)
	}
}

// A "has nothing" in the ledger that this process did not ask for (a
// console opened on a ledger restored from a backup, or on one of two
// copies, after the other history made the effect under the same
// downstream key) is asked again before "not applied", and the review by
// finding does not propose it until it was; one this process asked for
// is not asked again.
func TestNotAppliedAsksAgainAboutAHasNothingThisProcessDidNotRecord(t *testing.T) {
	l := newLedger(t, fast())
	ctx := context.Background()
	unknownWithoutDelivery(t, l, "k")
	op, err := l.st.Get(ctx, "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	looked, err := l.svc.LookFirst(ctx, model.ActionMarkNotApplied, []model.Operation{*op}, "alice")
	if err != nil || looked[0].Finding == nil || looked[0].Finding.Kind != model.FindingHasNothing {
		t.Fatalf("first look: %+v %v", looked[0].Finding, err)
	}
	recorded, err := l.st.Get(ctx, "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	authoritative := map[string]bool{"sandbox": true}
	l.svc.AuthoritativeLookups = authoritative
	if l.svc.NeedsLook(model.ActionMarkNotApplied, *recorded) {
		t.Fatal("this process's own has-nothing is asked again")
	}
	if r := l.svc.ReviewByFinding([]model.Operation{*recorded}); len(r.NotApplied) != 1 || len(r.Recheck) != 0 {
		t.Fatalf("own has-nothing: review %+v; want it proposed", r)
	}

	// Another process over the same ledger, after the other history made
	// the effect under the key.
	other := reconcile.New(l.st, l.svc.Tools, l.svc.Providers)
	other.Grace, other.AuthoritativeLookups = l.svc.Grace, authoritative
	if _, err := l.sb.Provider("sandbox", true).Dispatch(ctx, provider.Request{DownstreamKey: recorded.DownstreamKey, Tool: recorded.Tool, Args: recorded.Args}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		action model.Action
		want   bool
	}{
		{"not applied", model.ActionMarkNotApplied, true},
		{"new key", model.ActionAuthorizeKey, true},
		{"applied", model.ActionMarkApplied, false},
	}
	for _, tc := range tests {
		if got := other.NeedsLook(tc.action, *recorded); got != tc.want {
			t.Errorf("%s: NeedsLook on a has-nothing read from the ledger = %v, want %v", tc.name, got, tc.want)
		}
	}
	if r := other.ReviewByFinding([]model.Operation{*recorded}); len(r.NotApplied) != 0 || len(r.Recheck) != 1 {
		t.Fatalf("read has-nothing: review %+v; want it to be checked again, not proposed", r)
	}
	again, err := other.LookFirst(ctx, model.ActionMarkNotApplied, []model.Operation{*recorded}, "bob")
	if err != nil || again[0].Finding == nil || again[0].Finding.Kind != model.FindingHasIt {
		t.Fatalf("asked again: %+v %v; want has it", again[0].Finding, err)
	}
	if against, _ := reconcile.AgainstFinding(model.ActionMarkNotApplied, again[0]); !against {
		t.Fatal("not applied is not against the provider's has it")
	}
	out, err := other.DecideMany(ctx, model.ActionMarkNotApplied, reconcile.Decision{Operator: "bob", Reason: "restored", Evidence: "old finding"},
		[]reconcile.Target{reconcile.TargetOf(again[0])})
	if err != nil || out[0].Verdict != reconcile.VerdictIllegal {
		t.Fatalf("not applied after the provider's has it: %+v %v; want refused", out, err)
	}
}
