package postgres_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 12 (before claims recorded until when their request
// may be applied and where it went) keeps its rows through migration 13,
// each reading "not recorded"; a claim written afterwards records them,
// and the new CHECKs refuse them on an operation without a provider.
func TestMigration13KeepsTheRowsWithTheirClaimRecordUnrecorded(t *testing.T) {
	url := pgtest.URL(t)
	fp := strings.Repeat("0", 64)
	s := openFromSchema(t, url, 12,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, claim_no, provider, downstream_key, lease_owner, lease_until, created_at, updated_at, claim_honours_keys)
			VALUES (7, 't', 'claimed', 'send_notification', 1, '{}', '`+fp+`', 'in_progress', 1, 'pay', 'dk-7', 'w1', 5, 1, 1, true)`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
			VALUES (8, 't', 'local', 'create_support_task', 1, '{}', '`+fp+`', 'applied', '{}', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, worker_id, started_at) VALUES (40, 7, 1, 'dispatched', 'f', 'w1', 5)`)
	// What both drivers must do with the migrated rows: storetest.
	storetest.CheckClaimRecordAfterMigration(t, s)
	for _, c := range []struct{ set, check string }{
		{"claim_apply_by = 5 WHERE id = 8", "operations_claim_apply_by_check"},
		{"claim_dispatch_id = 'x' WHERE id = 8", "operations_claim_dispatch_id_check"},
		{"claim_lookup_id = 'x' WHERE id = 8", "operations_claim_lookup_id_check"},
		{"claim_dispatch_id = '' WHERE id = 7", "operations_claim_dispatch_id_check"}, // an empty record is no record
	} {
		if err := pgtest.Exec(t, url, `UPDATE operations SET `+c.set); err == nil || !strings.Contains(err.Error(), c.check) {
			t.Errorf("%s: %v; want refused by %s", c.set, err, c.check)
		}
	}
}
