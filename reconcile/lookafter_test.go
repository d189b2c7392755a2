package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operation marked not applied on typed evidence (a ticket, no lookup),
// and then looked up — `ops check`, the console's c, a lookup that was
// under way while the decision was made — whose provider has the
// delivery: that finding is the provider saying "applied" against the
// decision, as a late answer of a dispatch does. It used to be recorded
// and nothing more, and the next retry of the key sent the effect a
// second time through a provider that ignores downstream keys.
func TestAHasItLookupAfterANotAppliedDecisionStopsItsRedispatch(t *testing.T) {
	l := newLedger(t)
	req := model.Request{Tenant: "acme", Key: "k", Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":"cfo@acme.example","body":"invoice"}`)}
	if r := l.call(req, reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); r.State != model.StateUnknown {
		t.Fatalf("lost reply: %s; want unknown", r.State)
	}
	d := decision(l.op("acme", "k"))
	d.Evidence = "INC-7: the provider says it dropped the batch"
	if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
		t.Fatal(err)
	}
	_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "oncall")
	if err != nil || looked.Finding.Kind != model.FindingHasIt {
		t.Fatalf("check: %+v, %v; want has it", looked.Finding, err)
	}
	op := l.op("acme", "k")
	if op.State != model.StateNotApplied || !op.Contradicted {
		t.Errorf("after the lookup: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassUnknown {
		t.Errorf("a retry after the provider was found to have it got %s (%s); want unknown", res.Class, res.Message)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries for one operation; want 1", n)
	}
	// Marking it applied agrees with the provider and settles it.
	d = decision(l.op("acme", "k"))
	if err := l.decide(model.ActionMarkApplied, d); err != nil {
		t.Fatal(err)
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed {
		t.Errorf("after mark applied: %s %s; want a replay", res.Class, res.Outcome)
	}
	l.audit()
}
