package reconcile

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// A decision the grace holds, on a row whose grace was never read (a
// batched read that missed it, a row made after the read), is refused as
// stale in its transaction — not written unchecked. Where the grace does
// not hold the action, or the operator overrode it, nothing is refused.
func TestAGraceNeverReadRefusesTheWrite(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "l.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	op := &model.Operation{ID: 7, Tenant: "acme", Key: "k", State: model.StateUnknown}
	for _, c := range []struct {
		action model.Action
		within bool
		stale  bool
	}{
		{model.ActionMarkNotApplied, false, true},
		{model.ActionAuthorizeKey, false, true},
		{model.ActionMarkNotApplied, true, false},
		{model.ActionMarkApplied, false, false},
	} {
		d := Decision{Tenant: "acme", Key: "k", WithinGrace: c.within}
		err := st.WithTx(context.Background(), func(tx store.Tx) error { return graceTx(tx, d, c.action, op, nil) })
		if got := model.IsCode(err, model.CodeStale); got != c.stale {
			t.Errorf("%s (within-grace %v) with no grace read: %v; want stale %v", c.action, c.within, err, c.stale)
		}
	}
}
