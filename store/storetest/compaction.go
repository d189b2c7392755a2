package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// CompactionRowsAtSchema15 are the rows a driver's migration test writes
// in a ledger at schema 15 (before the indexes compaction looks links up
// by) for CheckCompactionAfterMigration: t/new (id 8), applied, its replay
// window ended long ago, superseding t/old (id 7); each with an attempt,
// and t/kept (id 9), applied, its window still open. fp is a fingerprint
// (64 characters); no boolean is written.
func CompactionRowsAtSchema15(fp string) []string {
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	return []string{
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at, expires_at)
			VALUES (8, 't', 'new', 'create_support_task', 1, '{}', '` + fp + `', 'applied', '{}', 1, 1, 2)`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, superseded_by_id, created_at, updated_at)
			VALUES (7, 't', 'old', 'create_support_task', 1, '{}', '` + fp + `', 'superseded', 8, 1, 1)`,
		`UPDATE operations SET supersedes_id = 7 WHERE id = 8`,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at, expires_at)
			VALUES (9, 't', 'kept', 'create_support_task', 1, '{}', '` + fp + `', 'applied', '{}', 1, 1, ` + strconv.FormatInt(far, 10) + `)`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (7, 1, 'created', '` + fp + `', 1)`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (8, 1, 'created', '` + fp + `', 1)`,
	}
}

// CheckCompactionAfterMigration is what a driver's migration test checks
// once a ledger made at schema 15 with CompactionRowsAtSchema15 is opened
// and migrated to schema 16: a compaction takes t/new and the operation it
// superseded, t/old, to tombstones and deletes both (their links and
// attempts with them), and keeps t/kept as it was. The driver's own
// test checks the indexes.
func CheckCompactionAfterMigration(t *testing.T, s store.Ledger) {
	t.Helper()
	ctx := ctxT(t)
	var compacted int
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		var err error
		compacted, _, err = tx.CompactExpired(time.Hour, 100)
		return err
	}); err != nil || compacted != 1 {
		t.Fatalf("compaction after the migration: %d compacted (%v); want 1", compacted, err)
	}
	for _, key := range []string{"new", "old"} {
		if _, err := s.Get(ctx, "t", key); !model.IsCode(err, model.CodeNotFound) {
			t.Errorf("t/%s after compaction: %v; want not found", key, err)
		}
		ts, err := s.Tombstone(ctx, "t", key)
		if err != nil || ts == nil {
			t.Errorf("tombstone of t/%s: %+v (%v); want one", key, ts, err)
		}
	}
	if op, err := s.Get(ctx, "t", "kept"); err != nil || op.State != model.StateApplied {
		t.Errorf("t/kept, its window open: %+v (%v); want kept, applied", op, err)
	}
}
