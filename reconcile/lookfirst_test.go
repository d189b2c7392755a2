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
