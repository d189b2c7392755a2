package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The findings themselves (latest, stale, filter, the CHECKs) are tested
// on every driver by the conformance suite (store/storetest).

// A ledger made before findings existed (schema 4) keeps every attempt,
// with its id and number, when 0005 rebuilds the table.
func TestFindingsMigrationKeepsEveryAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ms := migrations()
	stmts := []string{}
	for _, m := range ms[:4] {
		stmts = append(stmts, m.SQL)
	}
	stmts = append(stmts, "PRAGMA user_version = 4",
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, created_at, updated_at)
			VALUES (7, 't', 'k', 'send_notification', 1, '{}', '`+fmt.Sprintf("%064d", 0)+`', 'unknown', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, trace_id, started_at, duration_us) VALUES (40, 7, 1, 'dispatched', 'f', 'trace-1', 5, 6)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, error, started_at) VALUES (41, 7, 2, 'timed_out', 'f', 'no reply', 9)`)
	plainExec(t, path, stmts...)
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Detail(context.Background(), "t", "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != 2 || d.Attempts[0].ID != 40 || d.Attempts[0].TraceID != "trace-1" || d.Attempts[1].Error != "no reply" || d.Attempts[1].Seq != 2 {
		t.Fatalf("attempts after the migration: %+v", d.Attempts)
	}
	ops, err := s.List(context.Background(), store.ListQuery{Search: "trace-1"})
	if err != nil || len(ops) != 1 {
		t.Fatalf("the trace index is gone after the migration: %v %v", ops, err)
	}
	if err := s.WithTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: 7, Outcome: model.OutcomeLookup, Finding: model.FindingHasIt, ProviderRef: "sbx_1", Fingerprint: "f"})
	}); err != nil {
		t.Fatalf("a lookup after the migration: %v", err)
	}
}
