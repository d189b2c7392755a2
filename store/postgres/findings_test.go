package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A ledger made before findings existed (schema 4) keeps every attempt,
// with its id and number, when 0005 swaps the outcome CHECK and adds the
// finding columns; a lookup is accepted afterwards.
func TestFindingsMigrationKeepsEveryAttempt(t *testing.T) {
	url := pgtest.URL(t)
	s := openFromSchema(t, url, 4,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, provider, created_at, updated_at)
			VALUES (7, 't', 'k', 'send_notification', 1, '{}', '`+fmt.Sprintf("%064d", 0)+`', 'unknown', 'sandbox', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, trace_id, started_at, duration_us) VALUES (40, 7, 1, 'dispatched', 'f', 'trace-1', 5, 6)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, error, started_at) VALUES (41, 7, 2, 'timed_out', 'f', 'no reply', 9)`)
	ctx := context.Background()
	d, err := s.Detail(ctx, "t", "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != 2 || d.Attempts[0].ID != 40 || d.Attempts[0].TraceID != "trace-1" || d.Attempts[1].Error != "no reply" ||
		d.Attempts[1].Seq != 2 || d.Operation.Finding != nil {
		t.Fatalf("after the migration: attempts %+v, finding %+v", d.Attempts, d.Operation.Finding)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: 7, Outcome: model.OutcomeLookup, Finding: model.FindingHasIt, ProviderRef: "sbx_1", Fingerprint: "f"})
	}); err != nil {
		t.Fatalf("a lookup after the migration: %v", err)
	}
	ops, err := s.List(ctx, store.ListQuery{Search: "trace-1", Finding: model.FilterHasIt})
	if err != nil || len(ops) != 1 || ops[0].Finding == nil || ops[0].Finding.Ref != "sbx_1" || ops[0].Finding.Seq != 3 {
		t.Fatalf("list after the migration: %+v %v", ops, err)
	}
}
