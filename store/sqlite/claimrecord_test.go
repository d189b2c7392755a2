package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 12 (before claims recorded until when their request
// may be applied and where it went) keeps its rows through migration 13,
// each reading "not recorded"; a claim written afterwards records them,
// and the new CHECKs refuse them on an operation without a provider.
func TestMigration13KeepsTheRowsWithTheirClaimRecordUnrecorded(t *testing.T) {
	path := ledgerAtVersion(t, 12)
	fp := strings.Repeat("0", 64)
	plainExec(t, path,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, claim_no, provider, downstream_key, lease_owner, lease_until, created_at, updated_at, claim_honours_keys)
			VALUES (7, 't', 'claimed', 'send_notification', 1, '{}', '`+fp+`', 'in_progress', 1, 'pay', 'dk-7', 'w1', 5, 1, 1, 1)`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
			VALUES (8, 't', 'local', 'create_support_task', 1, '{}', '`+fp+`', 'applied', '{}', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, worker_id, started_at) VALUES (40, 7, 1, 'dispatched', 'f', 'w1', 5)`)
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// What both drivers must do with the migrated rows: storetest.
	storetest.CheckClaimRecordAfterMigration(t, s)
	for _, set := range []string{"claim_apply_by = 5", "claim_dispatch_id = 'x'", "claim_lookup_id = 'x'", "claim_dispatch_id = ''"} {
		err = s.WithTx(context.Background(), func(tx store.Tx) error {
			id := 8
			if strings.HasSuffix(set, "''") {
				id = 7 // has a provider, but an empty record is no record
			}
			_, err := tx.Exec(`UPDATE operations SET `+set+` WHERE id = ?`, id)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "extended code 275") { // SQLITE_CONSTRAINT_CHECK
			t.Errorf("%s: %v; want refused by the CHECK", set, err)
		}
	}
}
