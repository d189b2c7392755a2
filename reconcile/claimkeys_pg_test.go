package reconcile_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// On PostgreSQL too a claim records whether its provider honoured keys,
// and a sweep from a config that disagrees does not send it again; where
// both say so, it does, as before.
func TestOnPostgreSQLASweepResendsOnlyWhatTheClaimsConfigAllowed(t *testing.T) {
	url := pgtest.URL(t)
	st, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx := context.Background()
	worker := reconcile.New(st, config.Default().Tools, provider.Registry{"pay": sb.Provider("pay", false), "pay-idem": sb.Provider("pay-idem", true)})
	for _, c := range []struct{ key, prov string }{{"ignored", "pay"}, {"honoured", "pay-idem"}} {
		if err := st.WithTx(ctx, func(tx store.Tx) error {
			p, err := config.Default().Tools.Prepare(notify("acme", c.key, "ops@example.com"))
			if err != nil {
				return err
			}
			_, err = worker.ClaimTx(tx, p, c.prov, 0, st.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond) // the leases (0) end
	// The sweep's config says both providers honour keys; only "pay-idem"
	// really does, and only its claim said so.
	sweeper := reconcile.New(st, config.Default().Tools, provider.Registry{
		"pay": saysHonours{sb.Provider("pay", false)}, "pay-idem": sb.Provider("pay-idem", true)})
	rep, err := sweeper.Sweep(ctx)
	if err != nil || rep.Redispatched != 1 || rep.Unknown != 1 || rep.NotResent != 1 ||
		!strings.Contains(rep.NotResentWhy, "the claim was made by a config where provider pay does not honour downstream keys") {
		t.Fatalf("sweep = %+v %v; want one re-dispatch (pay-idem) and one held back (pay)", rep, err)
	}
	id, err := st.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]model.State{"ignored": model.StateUnknown, "honoured": model.StateApplied} {
		op, err := st.Get(ctx, "acme", key)
		if err != nil || op.State != want {
			t.Errorf("%s after the sweep: %+v %v; want %s", key, op, err, want)
		}
		n, err := sb.Deliveries(ctx, reconcile.DownstreamKey(id, "acme", key))
		if wantN := map[string]int{"ignored": 0, "honoured": 1}[key]; err != nil || n != wantN {
			t.Errorf("%s: %d deliveries %v; want %d", key, n, err, wantN)
		}
	}
}
