package testledger

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Lookups appends a provider lookup history to an operation, for the tests
// of which finding binds a decision (a "has it" outlives what comes after).
type Lookups struct {
	Worker string                         // every attempt's worker id
	Ref    string                         // a "has it"'s (or "has another request"'s) provider reference
	Detail func(model.FindingKind) string // a lookup's detail (nil: none)
	At     func(i int) time.Time          // the i-th attempt's time (nil: now + i ms)
}

// Record appends to op, in one transaction and in order, one lookup attempt
// per finding — "" standing for a retry of the key (a dispatched attempt,
// which makes an earlier finding stale).
func (h Lookups) Record(t testing.TB, st store.Ledger, op *model.Operation, findings ...model.FindingKind) {
	t.Helper()
	err := st.WithTx(context.Background(), func(tx store.Tx) error {
		for i, f := range findings {
			at := time.Now().Add(time.Duration(i) * time.Millisecond).UTC()
			if h.At != nil {
				at = h.At(i)
			}
			a := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Finding: f, Fingerprint: op.Fingerprint,
				WorkerID: h.Worker, StartedAt: at}
			if h.Detail != nil {
				a.Detail = h.Detail(f)
			}
			switch f {
			case model.FindingHasIt, model.FindingHasOther:
				a.ProviderRef = h.Ref
			case "":
				a.Outcome, a.Detail = model.OutcomeDispatched, "a retry"
			}
			if err := tx.InsertAttempt(a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
