package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A ledger at schema 11 (before claims recorded whether their provider
// honoured downstream keys) keeps its rows through migration 12, and each
// reads "not recorded" (nil); a claim written afterwards records its word,
// and the new CHECK refuses the word on an operation without a provider.
func TestMigration12KeepsTheRowsWithTheirClaimsUnrecorded(t *testing.T) {
	url := pgtest.URL(t)
	fp := strings.Repeat("0", 64)
	s := openFromSchema(t, url, 11,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, claim_no, provider, downstream_key, lease_owner, lease_until, created_at, updated_at)
			VALUES (7, 't', 'claimed', 'send_notification', 1, '{}', '`+fp+`', 'in_progress', 1, 'pay', 'dk-7', 'w1', 5, 1, 1)`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
			VALUES (8, 't', 'local', 'create_support_task', 1, '{}', '`+fp+`', 'applied', '{}', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, worker_id, started_at) VALUES (40, 7, 1, 'dispatched', 'f', 'w1', 5)`)
	ctx := context.Background()
	for _, key := range []string{"claimed", "local"} {
		d, err := s.Detail(ctx, "t", key)
		if err != nil {
			t.Fatal(err)
		}
		if d.Operation.ClaimHonoursKeys != nil {
			t.Errorf("%s after the migration: claim keys %v; want not recorded", key, *d.Operation.ClaimHonoursKeys)
		}
		if key == "claimed" && (d.Operation.State != model.StateInProgress || d.Operation.DownstreamKey != "dk-7" || len(d.Attempts) != 1 || d.Attempts[0].WorkerID != "w1") {
			t.Errorf("the claimed row after the migration: %+v %+v", d.Operation, d.Attempts)
		}
	}
	var expired []*model.Operation
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		var err error
		expired, err = tx.ExpiredLeases(10)
		if err != nil || len(expired) != 1 {
			return err
		}
		op := expired[0]
		yes := true
		op.ClaimHonoursKeys = &yes
		return tx.UpdateOperation(op, op.State, op.Version)
	}); err != nil || len(expired) != 1 {
		t.Fatalf("the old claim's lease: %v %v", expired, err)
	}
	if op, err := s.Get(ctx, "t", "claimed"); err != nil || op.ClaimHonoursKeys == nil || !*op.ClaimHonoursKeys {
		t.Errorf("a claim written after the migration: %+v %v", op, err)
	}
	if err := pgtest.Exec(t, url, `UPDATE operations SET claim_honours_keys = true WHERE id = 8`); err == nil || !strings.Contains(err.Error(), "operations_claim_honours_keys_check") {
		t.Errorf("the word on an operation without a provider: %v; want refused by the CHECK", err)
	}
}
