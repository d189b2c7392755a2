package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// Every statement compaction runs per receipt finds its rows through an
// index, and so does every foreign-key check its DELETE makes (the query
// PostgreSQL runs for it, looking for rows still referring to the one
// deleted): on a ledger of 20,000 operations, planned as a prepared
// statement planned once for every argument, none reads a table whole. A
// sequential scan per compacted receipt made a sweep grow with the square
// of the ledger (20,000 expired receipts: five minutes).
func TestCompactionStatementsUseIndexes(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// 20,000 expired receipts, every tenth superseding an older operation,
	// and as many tombstones.
	if err := postgres.Exec(ctx, s, `INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at, expires_at)
			SELECT 't', 'k' || i, 'create_support_task', 1, '{}', repeat('a', 64), 'applied', '{}', 1, 1, 2 FROM generate_series(1, 20000) i;
		INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, superseded_by_id, created_at, updated_at)
			SELECT 't', 'old' || id, tool, 1, '{}', repeat('a', 64), 'superseded', id, 1, 1 FROM operations WHERE id % 10 = 0;
		UPDATE operations o SET supersedes_id = p.id FROM operations p WHERE p.superseded_by_id = o.id;
		INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
			SELECT 't', 'gone' || i, 'create_support_task', repeat('a', 64), 'applied', i, i + 1000000 FROM generate_series(1, 20000) i;
		ANALYZE operations; ANALYZE tombstones`); err != nil {
		t.Fatal(err)
	}
	conn := genericPlanConn(t, url)
	type statement struct{ sql, args string }
	var statements []statement
	for _, st := range postgres.CompactStatements {
		statements = append(statements, statement{st.SQL, st.Args})
	}
	// The DELETE checks, in each table referring to operations, the rows
	// referring to the one deleted, with this query (ri_triggers.c).
	rows, err := conn.Query(ctx, `SELECT c.conrelid::regclass::text, a.attname::text FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'f' AND c.confrelid = 'operations'::regclass ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var children []string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		children = append(children, table+"."+col)
		statements = append(statements, statement{`SELECT 1 FROM ONLY ` + table + ` x WHERE $1 OPERATOR(pg_catalog.=) ` + col + ` FOR KEY SHARE OF x`, `1`})
	}
	if rows.Close(); rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for _, want := range []string{"attempts.operation_id", "decisions.operation_id", "operations.superseded_by_id", "operations.supersedes_id"} {
		if !strings.Contains(strings.Join(children, " "), want) {
			t.Errorf("foreign keys referring to operations: %v; want %s among them", children, want)
		}
	}
	for i, st := range statements {
		name := fmt.Sprintf("compact%d", i)
		if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+st.sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
		if plan := explainExecute(t, conn, name+`(`+st.args+`)`); strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s\nreads a table whole:\n%s", strings.Join(strings.Fields(st.sql), " "), plan)
		}
	}
}
