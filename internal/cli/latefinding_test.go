package cli

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// recordLateAnswer appends to tenant/key a late provider answer with no
// definite outcome (a late_result attempt, as a lost reply's answer
// arriving after the operation went unknown records): news from the
// provider, which makes an earlier finding stale — a refused retry sent
// nothing and does not.
func recordLateAnswer(t *testing.T, db, tenant, key string) {
	t.Helper()
	st, err := ledger.OpenStore(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	op, err := st.Get(context.Background(), tenant, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WithTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLateResult, Fingerprint: op.Fingerprint,
			WorkerID: "test", Error: "provider said no definite answer (reply lost)", StartedAt: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
}
