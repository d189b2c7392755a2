package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// "Applied" on an operation a "has it" finding with the provider's
// reference binds stores that reference in the receipt every caller is
// replayed; what the operator typed stays in the decision row. Before,
// --evidence sbx_9 became the receipt's provider_ref against the finding's
// sbx_1.
func TestMarkAppliedStoresTheBindingFindingsReference(t *testing.T) {
	for _, c := range []struct {
		name     string
		check    bool   // a lookup found the delivery before the decision
		evidence string // typed
		wantRef  string // "" : the finding's reference
	}{
		{name: "has it binds, other evidence typed", check: true, evidence: "sbx_9"},
		{name: "has it binds, a ticket typed", check: true, evidence: "INC-4471 provider console"},
		{name: "no finding: the typed evidence", evidence: "sbx_9", wantRef: "sbx_9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				clk := newClock()
				l := mk(clk)
				ctx := context.Background()
				l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
				want := c.wantRef
				if c.check {
					_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob")
					if err != nil || looked.Finding.Kind != model.FindingHasIt || looked.Finding.Ref == "" {
						t.Fatalf("check: %+v %v", looked.Finding, err)
					}
					want = looked.Finding.Ref
				}
				clk.Advance(time.Second)
				d := decision(l.op("acme", "k"))
				d.Evidence = c.evidence
				if err := l.decide(model.ActionMarkApplied, d); err != nil {
					t.Fatal(err)
				}
				det := l.detail("acme", "k")
				var rc model.Receipt
				if err := json.Unmarshal(det.Operation.Receipt, &rc); err != nil {
					t.Fatal(err)
				}
				var res map[string]string
				_ = json.Unmarshal(rc.Result, &res)
				if det.Operation.ProviderRef != want || rc.ProviderRef != want || res["provider_ref"] != want {
					t.Fatalf("provider ref %q, receipt %q, result %q; want %q", det.Operation.ProviderRef, rc.ProviderRef, res["provider_ref"], want)
				}
				if n := len(det.Decisions); n != 1 || det.Decisions[0].Evidence != c.evidence {
					t.Fatalf("decision rows: %+v; want the typed evidence %q", det.Decisions, c.evidence)
				}
				// A replay gives every caller the same reference.
				if r := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{}); r.Receipt == nil || r.Receipt.ProviderRef != want {
					t.Fatalf("replay: %+v", r.Receipt)
				}
			})
		})
	}
}
