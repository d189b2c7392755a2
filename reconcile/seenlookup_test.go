package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// One key's override names the lookups it confirmed (Decision.SeenLookup,
// as a bulk target's Seen): a "has it" another operator's check recorded
// after the operator looked — between the CLI's read and its write —
// refuses the decision as stale, nothing written. Without SeenLookup the
// override is as before.
func TestOneKeyOverrideIsRefusedAfterAnotherLookup(t *testing.T) {
	l := newLedger(t, fast())
	ctx := context.Background()
	unknownWithDelivery(t, l, "k")
	recordHistory(t, l, "k", "sbx_1", []model.FindingKind{model.FindingHasIt})
	det, err := l.st.Detail(ctx, "acme", "k")
	if err != nil || det.Operation.Finding == nil {
		t.Fatalf("detail: %+v %v", det, err)
	}
	seen := det.Operation.Finding.Seq
	recordHistory(t, l, "k", "sbx_1", []model.FindingKind{model.FindingHasIt}) // bob's check
	d := reconcile.Decision{Tenant: "acme", Key: "k", Operator: "alice", Reason: "customer says no mail came", Evidence: "ticket 4411", WithinGrace: true,
		Override: true, SeenLookup: &seen}
	if _, err := l.svc.MarkNotApplied(ctx, d); model.CodeOf(err) != model.CodeStale {
		t.Fatalf("not applied after another lookup: %v; want refused (stale)", err)
	}
	if _, _, err := l.svc.AuthorizeNewKey(ctx, d); model.CodeOf(err) != model.CodeStale {
		t.Fatalf("a new key after another lookup: %v; want refused (stale)", err)
	}
	if got, err := l.st.Get(ctx, "acme", "k"); err != nil || got.State != model.StateUnknown {
		t.Fatalf("after the refusals: %+v %v; want unknown", got, err)
	}
	seen++
	if got, err := l.svc.MarkNotApplied(ctx, d); err != nil || got.State != model.StateNotApplied {
		t.Fatalf("with the lookups seen: %+v %v", got, err)
	}
}
