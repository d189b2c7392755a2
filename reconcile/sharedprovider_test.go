package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// Two ledgers may send through one provider (one sandbox file serves
// several ledgers; an API account, several services), and their tenants
// and keys are their own: acme/op-1 of one is not acme/op-1 of the
// other. The downstream keys they send used to be derived from (tenant,
// key) alone, so the second ledger's call through a provider that honours
// keys was answered with the first ledger's delivery — a "created"
// receipt for a notification to someone else, its own never sent — and a
// lookup of an operation the provider never took found the other
// ledger's delivery: "has it", the evidence for marking it applied.
func TestTwoLedgersSharingAProviderNeverGetEachOthersDeliveries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := testledger.In(t, dir, testledger.Named("a.db"), testledger.ProviderFile("shared.provider.db"))
	defer a.Close()
	b := testledger.In(t, dir, testledger.Named("b.db"), testledger.ProviderFile("shared.provider.db"))
	defer b.Close()
	call := func(l *testledger.Ledger, key, to string, opt reconcile.CallOptions) reconcile.Result {
		t.Helper()
		res, err := l.Svc.Call(ctx, model.Request{Tenant: "acme", Key: key, Tool: "send_notification", PayloadVersion: 1,
			Args: []byte(`{"to":"` + to + `","body":"hello"}`)}, opt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	ra := call(a, "op-1", "alice@a.example", reconcile.CallOptions{Provider: "sandbox-idem"})
	rb := call(b, "op-1", "bob@b.example", reconcile.CallOptions{Provider: "sandbox-idem"})
	if ra.Class != model.ClassDone || rb.Class != model.ClassDone {
		t.Fatalf("classes %s, %s; want done, done", ra.Class, rb.Class)
	}
	if ra.Receipt.ProviderRef == rb.Receipt.ProviderRef {
		t.Errorf("ledger b's call was answered with ledger a's delivery %s: b's notification was never sent", rb.Receipt.ProviderRef)
	}
	opA, _ := a.Store.Get(ctx, "acme", "op-1")
	opB, _ := b.Store.Get(ctx, "acme", "op-1")
	for _, op := range []*model.Operation{opA, opB} {
		if n, err := a.Sandbox.Deliveries(ctx, op.DownstreamKey); err != nil || n != 1 {
			t.Errorf("%s: %d deliveries under its downstream key (%v); want 1", op.ProviderRef, n, err)
		}
	}

	// b's op-2 is delivered; a's op-2 never reaches the provider.
	call(b, "op-2", "bob@b.example", reconcile.CallOptions{})
	if r := call(a, "op-2", "carol@a.example", reconcile.CallOptions{Faults: provider.Faults{FailBefore: true}}); r.State != model.StateNotApplied {
		t.Fatalf("a's op-2 is %s; want not_applied", r.State)
	}
	_, ev, err := a.Svc.Check(ctx, "acme", "op-2")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Found {
		t.Errorf("ledger a's lookup of op-2, never delivered, found %s — ledger b's delivery", ev.Ref)
	}
}
