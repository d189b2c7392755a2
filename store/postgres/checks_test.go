package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// Migration 10 folds each table's CHECKs into one function call; every
// rule still holds, one by one: a row that breaks any of them is refused
// (SQLSTATE 23514) and nothing is written, and a NULL where a rule allowed
// one still passes.
func TestRowChecksRefuseEveryBrokenRule(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	fp := strings.Repeat("a", 64)
	// op inserts operation id with the columns the rules read.
	op := func(id int, tenant, key string, pv int, fp, state string, receipt, lease any) error {
		_, err := conn.Exec(ctx, `INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state,
			receipt, lease_until, created_at, updated_at) VALUES ($1,$2,$3,'x',$4,'{}',$5,$6,$7,$8,1,1)`,
			id, tenant, key, pv, fp, state, receipt, lease)
		return err
	}
	if err := op(1, "t", "base", 1, fp, "unknown", nil, nil); err != nil {
		t.Fatalf("a valid operation: %v", err)
	}
	att := func(id int, outcome string, finding any) error {
		_, err := conn.Exec(ctx, `INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, started_at, finding)
			VALUES ($1, 1, $4, $2, 'f', 1, $3)`, id, outcome, finding, id)
		return err
	}
	cases := []struct {
		name  string
		write func() error
		ok    bool
	}{
		{"operation: empty tenant", func() error { return op(2, "", "k", 1, fp, "unknown", nil, nil) }, false},
		{"operation: tenant of 513 bytes", func() error { return op(2, strings.Repeat("t", 513), "k", 1, fp, "unknown", nil, nil) }, false},
		{"operation: empty key", func() error { return op(2, "t", "", 1, fp, "unknown", nil, nil) }, false},
		{"operation: key of 1025 bytes", func() error { return op(2, "t", strings.Repeat("k", 1025), 1, fp, "unknown", nil, nil) }, false},
		{"operation: payload version 0", func() error { return op(2, "t", "k", 0, fp, "unknown", nil, nil) }, false},
		{"operation: short fingerprint", func() error { return op(2, "t", "k", 1, "abc", "unknown", nil, nil) }, false},
		{"operation: unknown state", func() error { return op(2, "t", "k", 1, fp, "done", nil, nil) }, false},
		{"operation: applied without a receipt", func() error { return op(2, "t", "k", 1, fp, "applied", nil, nil) }, false},
		{"operation: failed without a receipt", func() error { return op(2, "t", "k", 1, fp, "failed", nil, nil) }, false},
		{"operation: in_progress without a lease", func() error { return op(2, "t", "k", 1, fp, "in_progress", nil, nil) }, false},
		{"operation: applied with a receipt", func() error { return op(3, "t", "k3", 1, fp, "applied", "{}", nil) }, true},
		{"operation: in_progress with a lease", func() error { return op(4, "t", "k4", 1, fp, "in_progress", nil, int64(5)) }, true},
		{"attempt: unknown outcome", func() error { return att(1, "done", nil) }, false},
		{"attempt: unknown finding", func() error { return att(1, "lookup", "maybe") }, false},
		{"attempt: lookup without a finding", func() error { return att(1, "lookup", nil) }, false},
		{"attempt: a finding on a non-lookup", func() error { return att(1, "created", "has_it") }, false},
		{"attempt: created", func() error { return att(2, "created", nil) }, true},
		{"attempt: lookup with its finding", func() error { return att(3, "lookup", "cannot_tell") }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before int
			if err := conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM operations) + (SELECT COUNT(*) FROM attempts)`).Scan(&before); err != nil {
				t.Fatal(err)
			}
			err := c.write()
			var pe *pgconn.PgError
			switch {
			case c.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !c.ok && (!errors.As(err, &pe) || pe.Code != "23514"):
				t.Fatalf("got %v; want a check violation (23514)", err)
			}
			var after int
			if err := conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM operations) + (SELECT COUNT(*) FROM attempts)`).Scan(&after); err != nil {
				t.Fatal(err)
			}
			if want := before + map[bool]int{true: 1, false: 0}[c.ok]; after != want {
				t.Errorf("rows %d → %d; want %d", before, after, want)
			}
		})
	}
}
