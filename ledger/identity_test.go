package ledger_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A claim made through a ledger's sandbox provider (wrapped to check its
// file) records the sandbox's own identity: the same as the sandbox
// provider's without a ledger, so a sweep or lookup by either reads it as
// the same place.
func TestAClaimThroughALedgersSandboxRecordsTheSandboxsIdentity(t *testing.T) {
	ctx := context.Background()
	where := filepath.Join(t.TempDir(), "l.db")
	l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{Use: ledger.Dispatching, Store: store.Options{Create: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if res, err := l.Service().Call(ctx, model.Request{Tenant: "acme", Key: "k", Tool: "send_notification", Args: notify}, reconcile.CallOptions{}); err != nil || res.Class != model.ClassDone {
		t.Fatalf("call: %+v %v", res, err)
	}
	op, err := l.Service().Store.Get(ctx, "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	want := (provider.Target{Kind: "sandbox"}).Digest()
	if op.ClaimDispatchID != want || op.ClaimLookupID != want {
		t.Errorf("the claim recorded %q %q; want the sandbox's %q", op.ClaimDispatchID, op.ClaimLookupID, want)
	}
}
