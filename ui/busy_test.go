package ui

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A decision the ledger's write lock held back past its deadline said
// "context deadline exceeded before the transaction finished". The store
// says it with a code (model.CodeBusy), and the console says what it
// means: another process holds the ledger's write lock; nothing was
// written. (The error is the real store's, on a ledger another
// connection holds locked, with a short deadline: the console's is ten
// seconds.)
func TestADecisionHeldBackByTheWriteLockSaysSo(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 140, 30)
	h.confirmMarkApplied("sbx_1", "seen in the provider")
	h.contains("Write this decision")
	unlock := testledger.HoldWriteLock(t, l.path)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := l.svc.MarkApplied(ctx, reconcile.Decision{Tenant: "acme", Key: "notify-1", Operator: "alice", Reason: "seen", Evidence: "sbx_1",
		ExpectState: model.StateUnknown, ExpectVersion: 2})
	cancel()
	unlock()
	if !model.IsCode(err, model.CodeBusy) {
		t.Fatalf("the store's error on a locked ledger: %v (code %s), want busy", err, model.CodeOf(err))
	}
	h.m.action.stage = stageRunning
	h.send(decisionMsg{Seq: h.m.action.seq, Action: model.ActionMarkApplied, Tenant: "acme", Key: "notify-1", From: model.StateUnknown, Err: err})
	containsText(t, h, "Not written", "another process holds its write lock", "Nothing was written")
	h.lacks("deadline exceeded", "context deadline")
}
