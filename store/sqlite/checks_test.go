package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// sqlQuerier is a *sql.DB or *sql.Conn.
type sqlQuerier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// ephemeralTables counts the temporary b-trees the program of q opens
// (OpenEphemeral): a CHECK with an IN list of more than two constants is
// coded as one, built again for every row the statement writes.
func ephemeralTables(t *testing.T, db sqlQuerier, q string) int {
	t.Helper()
	args := make([]any, strings.Count(q, "?"))
	rows, err := db.QueryContext(context.Background(), "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var addr, p1, p2, p3 int
		var op, p4, p5, comment sql.NullString
		if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatal(err)
		}
		if op.String == "OpenEphemeral" {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// The statements every new operation and every replay run build no
// temporary tables for their CHECKs (migration 9): neither on the writer
// connection of the process that created or migrated the ledger, nor on a
// connection that was open before the migration, nor on a new one.
func TestTheHotInsertsBuildNoTemporaryTables(t *testing.T) {
	hot := map[string]string{"attempt": insertAttemptSQL, "operation": insertOperationSQL}
	check := func(t *testing.T, where string, db sqlQuerier) {
		t.Helper()
		for name, q := range hot {
			if n := ephemeralTables(t, db, q); n != 0 {
				t.Errorf("%s: the %s INSERT opens %d temporary tables", where, name, n)
			}
		}
	}
	t.Run("created", func(t *testing.T) {
		s, path := openLedger(t, store.Options{})
		check(t, "the creating writer", s.wc)
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, "a new connection", db)
	})
	t.Run("migrated", func(t *testing.T) {
		path := ledgerAtVersion(t, 8)
		before, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer before.Close()
		before.SetMaxOpenConns(1)
		// The old CHECKs did build them: the test can tell.
		if n := ephemeralTables(t, before, insertAttemptSQL); n == 0 {
			t.Fatal("a version-8 ledger's attempt INSERT opens no temporary table; the test cannot tell")
		}
		s, err := Open(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, "the migrating writer", s.wc)
		// EXPLAIN compiles against the schema the connection has cached; a
		// statement that reads finds the schema cookie moved and reloads.
		var n int
		if err := before.QueryRow("SELECT COUNT(*) FROM operations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		check(t, "a connection open before the migration", before)
	})
}

// ledgerAtVersion makes a ledger of the first v migrations, as an older
// retrysafe left it.
func ledgerAtVersion(t *testing.T, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	var stmts []string
	for _, m := range migrations()[:v] {
		stmts = append(stmts, m.SQL)
	}
	plainExec(t, path, append(stmts, fmt.Sprintf("PRAGMA user_version = %d", v))...)
	return path
}

// tableShape is everything of a table but its CHECKs that migration 9 must
// not change: the columns (type, NOT NULL, default, key), the foreign keys,
// the indexes.
func tableShape(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT cid, name, type, "notnull", quote(dflt_value), pk, hidden FROM pragma_table_xinfo(?)`,
		`SELECT id, seq, "table", "from", quote("to"), on_update, on_delete, "match" FROM pragma_foreign_key_list(?)`,
		`SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`,
		`SELECT name, sql FROM sqlite_schema WHERE tbl_name = ? AND type <> 'table' ORDER BY name`,
	} {
		rows, err := db.Query(q, table)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		rows.Close()
	}
	return out
}

// Migration 9 rewrites only the CHECKs of operations and attempts: the
// rows, the columns, keys and indexes are as they were, the file is sound,
// and the new CHECKs accept and refuse exactly what the old ones did.
func TestMigration9KeepsTheTablesAsTheyWere(t *testing.T) {
	path := ledgerAtVersion(t, 8)
	fp := strings.Repeat("0", 64)
	plainExec(t, path,
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
			VALUES (7, 't', 'k', 'create_support_task', 1, '{}', '`+fp+`', 'applied', '{}', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, trace_id, started_at) VALUES (40, 7, 1, 'created', 'f', 'trace-1', 5)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, finding, detail, started_at) VALUES (41, 7, 2, 'lookup', 'f', 'has_it', 'sbx', 9)`)
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	shapes := map[string][]string{}
	for _, table := range []string{"operations", "attempts"} {
		shapes[table] = tableShape(t, old, table)
	}
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for table, want := range shapes {
		if got := withoutLater(tableShape(t, db, table)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after migration 9:\n%q\nbefore:\n%q", table, got, want)
		}
	}
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	d, err := s.Detail(context.Background(), "t", "k")
	if err != nil {
		t.Fatal(err)
	}
	if d.Operation.State != model.StateApplied || len(d.Attempts) != 2 || d.Attempts[0].TraceID != "trace-1" || d.Attempts[1].Finding != model.FindingHasIt {
		t.Fatalf("rows after the migration: %+v %+v", d.Operation, d.Attempts)
	}
	// What the old CHECKs refused, the new ones refuse; a NULL finding
	// (every attempt but a lookup) still passes.
	for _, c := range []struct {
		sql    string
		refuse bool
	}{
		{`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (7, 3, 'replayed', 'f', 0)`, false},
		{`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (7, 4, 'Replayed', 'f', 0)`, true},
		{`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (7, 5, '', 'f', 0)`, true},
		{`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, finding, started_at) VALUES (7, 6, 'lookup', 'f', 'has_it ', 0)`, true},
		{`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, finding, started_at) VALUES (7, 7, 'lookup', 'f', 'cannot_tell', 0)`, false},
		{`UPDATE operations SET state = 'done' WHERE id = 7`, true},
		{`UPDATE operations SET state = 'unknown' WHERE id = 7`, false},
	} {
		_, err := db.Exec(c.sql)
		if refused := err != nil && strings.Contains(err.Error(), "CHECK constraint failed"); refused != c.refuse {
			t.Errorf("%s: %v; want refused %v", c.sql, err, c.refuse)
		}
	}
}

// withoutLater drops from a table's shape the columns migrations after 9
// added (12: operations.claim_honours_keys; 13: claim_apply_by,
// claim_dispatch_id, claim_lookup_id; 14: retry_not_before) and the
// indexes they made (16: operations_supersedes, operations_superseded_by):
// Open migrates to the latest.
func withoutLater(shape []string) []string {
	var out []string
	for _, s := range shape {
		if !strings.Contains(s, "claim_honours_keys") && !strings.Contains(s, "claim_apply_by") &&
			!strings.Contains(s, "claim_dispatch_id") && !strings.Contains(s, "claim_lookup_id") &&
			!strings.Contains(s, "retry_not_before") &&
			!strings.Contains(s, "operations_supersedes") && !strings.Contains(s, "operations_superseded_by") {
			out = append(out, s)
		}
	}
	return out
}

// Compaction deletes operations but never their effects, so a new
// operation's id is past every id an effect row names — the generic
// local_effects table's too, or a new operation takes the id of a
// compacted one whose effect is still there, and its own effect is
// refused (UNIQUE operation_id).
func TestANewOperationNeverTakesTheIdOfACompactedOnesEffect(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	effect := func(tx store.Tx, op *model.Operation) error {
		_, err := tx.InsertLocalEffect(store.LocalEffect{Table: model.TableLocalEffects, Tool: op.Tool, Tenant: op.Tenant,
			OperationID: op.ID, Args: op.Args})
		return err
	}
	var first int64
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op := newOp("first", model.StateApplied)
		op.ExpiresAt = tx.Now().Add(-time.Minute)
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		first = op.ID
		return effect(tx, op)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		n, _, err := tx.CompactExpired(time.Hour, 10)
		if err == nil && n != 1 {
			err = fmt.Errorf("compacted %d operations, want 1", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op := newOp("second", model.StateApplied)
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		if op.ID <= first {
			return fmt.Errorf("new operation got id %d, not above the compacted %d whose effect remains", op.ID, first)
		}
		return effect(tx, op)
	}); err != nil {
		t.Error(err)
	}
}
