package postgres_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 13 (before an operation recorded its busy provider's
// Retry-After) keeps its rows through migration 14, none with a wait; a
// wait written afterwards is kept, and the new CHECK refuses one on an
// operation without a provider.
func TestMigration14KeepsTheRowsWithNoWaitRecorded(t *testing.T) {
	url := pgtest.URL(t)
	fp := strings.Repeat("0", 64)
	s := openFromSchema(t, url, 13,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, claim_no, provider, downstream_key, lease_owner, lease_until, created_at, updated_at, claim_honours_keys)
			VALUES (7, 't', 'claimed', 'send_notification', 1, '{}', '`+fp+`', 'in_progress', 1, 'pay', 'dk-7', 'released', 5, 1, 1, true)`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
			VALUES (8, 't', 'local', 'create_support_task', 1, '{}', '`+fp+`', 'applied', '{}', 1, 1)`)
	storetest.CheckRetryNotBeforeAfterMigration(t, s)
	if err := pgtest.Exec(t, url, `UPDATE operations SET retry_not_before = 5 WHERE id = 8`); err == nil || !strings.Contains(err.Error(), "operations_retry_not_before_check") {
		t.Errorf("a wait on a local operation: %v; want refused by operations_retry_not_before_check", err)
	}
}
