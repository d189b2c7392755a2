package ui

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The provider said, late, that it applied a key an operator had already
// replaced — and the new key had been sent by then: nothing could hold it,
// and its effect may be a second one. The old key's detail says so, where
// it said only that retries are told to use the new key.
func TestALateAppliedAfterTheNewKeyWasSentSaysItMayBeASecondEffect(t *testing.T) {
	l := newLedger(t)
	l.supersedeWhileDispatching(t, func(ctx context.Context, other *reconcile.Service) {
		if res, err := other.Call(ctx, model.Request{Tenant: "acme", Key: "k2", Tool: "send_notification", PayloadVersion: 1,
			Args: []byte(`{"to":"a@example.com","body":"disk full"}`), WorkerID: "worker-3"}, reconcile.CallOptions{}); err != nil || res.Class != model.ClassDone {
			t.Fatalf("the new key's call: %s %v", res.Class, err)
		}
	})
	if op := l.get(t, "acme", "k").Operation; op.State != model.StateSuperseded || !op.Contradicted {
		t.Fatalf("set-up: k %s contradicted=%v; want superseded, contradicted", op.State, op.Contradicted)
	}
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "acme/k")
	h.keys("enter")
	h.contains("the provider later said it applied this key after all", "k2 was already sent", "second")
}
