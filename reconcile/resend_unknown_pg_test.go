package reconcile_test

import (
	"path/filepath"
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

// R4's repro on PostgreSQL: after a lost reply, a sweep that sends nothing
// leaves the claim in progress, and a config where the provider ignores
// keys does not send it a second time.
func TestOnPostgreSQLAResendThatSendsNothingKeepsTheEarlierRequestsOutcomeOpen(t *testing.T) {
	st, err := postgres.Open(pgtest.URL(t), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx := t.Context()
	with := func(p provider.Provider) *reconcile.Service {
		return reconcile.New(st, config.Default().Tools, provider.Registry{"mail": p})
	}
	req := notify("acme", "a2", "customer@example.com")
	res, err := with(saysHonours{sb.Provider("mail", false)}).Call(ctx, req, reconcile.CallOptions{Provider: "mail", Faults: provider.Faults{LoseReply: true}})
	if err != nil || res.Class != model.ClassInProgress {
		t.Fatalf("A2: %+v %v; want in_progress (released)", res, err)
	}
	time.Sleep(5 * time.Millisecond)
	rep, err := with(newAnswering("mail", true, notSentAnswer)).Sweep(ctx)
	if err != nil || rep.Redispatched != 0 || rep.NotSent != 1 {
		t.Fatalf("sweep = %+v %v; want nothing re-dispatched, one not sent", rep, err)
	}
	if op, err := st.Get(ctx, "acme", "a2"); err != nil || op.State != model.StateInProgress {
		t.Fatalf("after the sweep: %+v %v; want in_progress", op, err)
	}
	time.Sleep(5 * time.Millisecond)
	res, err = with(sb.Provider("mail", false)).Call(ctx, req, reconcile.CallOptions{Provider: "mail"})
	if err != nil || res.Class != model.ClassUnknown {
		t.Errorf("call from a config that ignores keys: %+v %v; want unknown", res, err)
	}
	id, err := st.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sb.Deliveries(ctx, reconcile.DownstreamKey(id, "acme", "a2")); err != nil || n != 1 {
		t.Errorf("%d deliveries %v; want 1", n, err)
	}
}
