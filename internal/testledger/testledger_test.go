package testledger_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
)

// The tests' ledger is opened as every command that dispatches opens
// one: its sandbox file serves it and is recorded as its provider file
// for both sandbox providers (it used to be tied with sandbox.Tie alone,
// recording no file id), and a reopen keeps the record.
func TestTheTestLedgerRecordsItsProviderFile(t *testing.T) {
	ctx := context.Background()
	l := testledger.New(t)
	for range 2 {
		id, err := l.Store.LedgerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"sandbox", "sandbox-idem"} {
			if got, err := l.Store.ProviderFile(ctx, name); err != nil || got != l.Sandbox.FileID() {
				t.Errorf("ProviderFile(%s) = %q, %v; want the file's id %s", name, got, err, l.Sandbox.FileID())
			}
			if ok, err := l.Sandbox.Serves(ctx, id, name); err != nil || !ok {
				t.Errorf("the file serves the ledger for %s: %v, %v", name, ok, err)
			}
		}
		l.Reopen()
	}
	if n := testledger.New(t, testledger.NoProviders()); n.Sandbox != nil || len(n.Svc.Providers) != 0 {
		t.Errorf("NoProviders: sandbox %v, providers %v; want none", n.Sandbox, n.Svc.Providers)
	}
}
