package reconcile_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// The bulk generator writes through the call path's own functions, so the
// ledger it builds keeps every invariant the store audits, its counts
// agree with its report, and every state the console shows is in it.
func TestBulkBuildsALedgerThatPassesTheAuditWithEveryState(t *testing.T) {
	l := testledger.New(t, testledger.Named("bulk.db"), testledger.Fast(), testledger.WithNow(time.Now))
	dir, st, sb, svc := l.Dir, l.Store, l.Sandbox, l.Svc
	ctx := context.Background()
	rep, err := svc.Bulk(ctx, reconcile.BulkSpec{Ops: 6000, Tenants: 4, Seed: 7, Batch: 1000, RealCalls: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := st.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("the generated ledger fails the audit: %v", problems)
	}
	c, err := st.Counts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != rep.Operations {
		t.Fatalf("ledger holds %d operations, the report says %d", c.Total, rep.Operations)
	}
	for _, s := range model.AllStates {
		if c.ByState[s] == 0 {
			t.Errorf("no %s operation generated (counts %v)", s, c.ByState)
		}
		if c.ByState[s] != rep.ByState[string(s)] {
			t.Errorf("%s: ledger %d, report %d", s, c.ByState[s], rep.ByState[string(s)])
		}
	}
	tenants, err := st.Tenants(ctx)
	if err != nil || len(tenants) != 4 {
		t.Fatalf("tenants %v (%v), want 4", tenants, err)
	}
	// A claim the generator abandoned is unknown exactly as a sweep leaves
	// it; one still in flight holds its lease.
	unknown, err := st.List(ctx, store.ListQuery{State: model.StateUnknown, Limit: 1})
	if err != nil || len(unknown) == 0 {
		t.Fatalf("no unknown operation: %v", err)
	}
	d, err := st.DetailByID(ctx, unknown[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Attempts); n < 2 || d.Attempts[0].Outcome != model.OutcomeDispatched || d.Attempts[n-1].Outcome != model.OutcomeLeaseExpired {
		t.Fatalf("unknown operation's attempts: %+v", d.Attempts)
	}
	inFlight, err := st.List(ctx, store.ListQuery{State: model.StateInProgress, Limit: 1})
	if err != nil || len(inFlight) == 0 || !inFlight[0].LeaseUntil.After(time.Now()) {
		t.Fatalf("in-flight operation: %+v (%v)", inFlight, err)
	}
	// The same seed builds the same mix.
	st2, err := sqlite.Open(filepath.Join(dir, "bulk2.db"), store.Options{Create: true, Durability: store.Fast})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	rep2, err := reconcile.New(st2, config.Default().Tools, sb.Providers()).Bulk(ctx, reconcile.BulkSpec{Ops: 6000, Tenants: 4, Seed: 7, Batch: 1000, RealCalls: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Operations != rep.Operations || rep2.Attempts != rep.Attempts || rep2.ByState[string(model.StateUnknown)] != rep.ByState[string(model.StateUnknown)] {
		t.Fatalf("seed 7 built %+v, then %+v", rep, rep2)
	}
}

func TestClaimTxRefusesALocalTool(t *testing.T) {
	l := testledger.New(t, testledger.Named("l.db"), testledger.WithNow(time.Now), testledger.NoProviders())
	st, svc := l.Store, l.Svc
	p, err := config.Default().Tools.Prepare(model.Request{Tenant: "t", Key: "k", Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{"subject":"s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	err = st.WithTx(context.Background(), func(tx store.Tx) error {
		_, err := svc.ClaimTx(tx, p, "", time.Hour, time.Now())
		return err
	})
	if !model.IsCode(err, model.CodeInvalid) {
		t.Fatalf("claiming a local tool: %v", err)
	}
}
