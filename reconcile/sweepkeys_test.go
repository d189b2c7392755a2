package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// SweepKeys settles the named operations' ended leases as Sweep does —
// unknown, or re-dispatched where the provider honours downstream keys —
// and touches no other operation: another tenant's, or its own tenant's
// under another key, stays in_progress with its one claim.
func TestSweepKeysSettlesOnlyTheNamedOperations(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	ctx := context.Background()
	claims := []struct{ tenant, key, prov string }{
		{"lab", "mine", "sandbox"}, {"lab", "mine-idem", "sandbox-idem"},
		{"lab", "not-mine", "sandbox"}, {"globex-billing", "mine", "sandbox"},
	}
	err := l.st.WithTx(ctx, func(tx store.Tx) error {
		for _, c := range claims {
			p, err := config.Default().Tools.Prepare(notify(c.tenant, c.key, "ops@example.com"))
			if err != nil {
				return err
			}
			if _, err := l.svc.ClaimTx(tx, p, c.prov, 0, l.st.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	rep, err := l.svc.SweepKeys(ctx, "lab", []string{"mine", "mine-idem", "never-made"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unknown != 1 || rep.Redispatched != 1 {
		t.Errorf("report %+v, want 1 unknown and 1 re-dispatched", rep)
	}
	want := map[[2]string]model.State{{"lab", "mine"}: model.StateUnknown, {"lab", "mine-idem"}: model.StateApplied,
		{"lab", "not-mine"}: model.StateInProgress, {"globex-billing", "mine"}: model.StateInProgress}
	for k, st := range want {
		d, err := l.st.Detail(ctx, k[0], k[1])
		if err != nil {
			t.Fatal(err)
		}
		if d.Operation.State != st {
			t.Errorf("%s/%s is %s, want %s", k[0], k[1], d.Operation.State, st)
		}
		if st == model.StateInProgress && len(d.Attempts) != 1 {
			t.Errorf("%s/%s has %d attempts; the sweep must not touch it", k[0], k[1], len(d.Attempts))
		}
	}
}
