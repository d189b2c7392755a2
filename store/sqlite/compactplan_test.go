package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// Every statement compaction runs per receipt finds its rows through an
// index, and so does every foreign-key check its DELETE makes: the query
// plans (EXPLAIN QUERY PLAN) scan no table. A scan of operations per
// compacted receipt made a sweep grow with the square of the ledger (8,000
// expired receipts: more than two minutes), holding the writer meanwhile.
func TestCompactionStatementsUseIndexes(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "l.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	statements := []struct {
		sql  string
		args []any
	}{
		{compactExpiredSQL, []any{int64(1), 500}},
		{compactTombstoneSQL, []any{"t", "k", "tool", "fp", "applied", int64(1), int64(2)}},
		{compactChainSQL, []any{int64(1)}},
		{compactChainTombstoneSQL, []any{int64(1), int64(2), int64(1)}},
		{compactUnlinkSQL, []any{int64(1), int64(1), int64(1)}},
		{compactDeleteSQL, []any{int64(1)}},
		{compactForgetSQL, []any{int64(1)}},
	}
	// The DELETE checks, in each table referring to operations, the rows
	// referring to the one deleted: SQLite looks them up as this SELECT.
	fks, err := s.r.QueryContext(ctx, `SELECT m.name, f."from" FROM sqlite_schema m, pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND f."table" = 'operations' ORDER BY m.name, f."from"`)
	if err != nil {
		t.Fatal(err)
	}
	var children []string
	for fks.Next() {
		var table, col string
		if err := fks.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		children = append(children, table+"."+col)
		statements = append(statements, struct {
			sql  string
			args []any
		}{`SELECT 1 FROM ` + table + ` WHERE ` + col + ` = ?`, []any{int64(1)}})
	}
	if err := fks.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"attempts.operation_id", "decisions.operation_id", "operations.superseded_by_id", "operations.supersedes_id"} {
		if !strings.Contains(strings.Join(children, " "), want) {
			t.Errorf("foreign keys referring to operations: %v; want %s among them", children, want)
		}
	}
	for _, st := range statements {
		plan := queryPlan(t, s.r, st.sql, st.args...)
		for _, line := range plan {
			if strings.HasPrefix(line, "SCAN ") && line != "SCAN CONSTANT ROW" {
				t.Errorf("%s\nscans a table:\n%s", oneSpaced(st.sql), strings.Join(plan, "\n"))
				break
			}
		}
	}
}

// queryPlan is the detail of every row of EXPLAIN QUERY PLAN q.
func queryPlan(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func oneSpaced(q string) string { return strings.Join(strings.Fields(q), " ") }
