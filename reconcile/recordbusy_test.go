package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// A lookup whose finding cannot be recorded because another process
// keeps the ledger's write lock answers busy once RecordTimeout passes:
// the console's check (c) used to spin for as long as the lock was held.
func TestALookupOnALockedLedgerAnswersBusy(t *testing.T) {
	l := newLedger(t, fast())
	ctx := context.Background()
	unknownWithDelivery(t, l, "k")
	op, err := l.st.Get(ctx, "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	release := testledger.HoldWriteLock(t, l.path)
	defer release()
	l.svc.RecordTimeout = 300 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := l.svc.Look(ctx, op, "alice")
		done <- err
	}()
	select {
	case err := <-done:
		if model.CodeOf(err) != model.CodeBusy || !strings.Contains(err.Error(), "provider sandbox answered (has it · sbx_") ||
			!strings.Contains(err.Error(), "but the ledger did not record it") {
			t.Fatalf("Look on a locked ledger: %v (code %q); want busy, saying the answer was not recorded", err, model.CodeOf(err))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Look on a locked ledger did not return")
	}
}
