package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// oldOperation is an applied local operation as schema 13 holds it.
const oldOperation = `INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
	VALUES (8, 'acme', 'old-key', 'create_support_task', 1, '{}', '` + "0000000000000000000000000000000000000000000000000000000000000000" + `', 'applied', '{}', 1, 1)`

// sqliteLedgerAt makes a ledger file as a build that knew the first n
// migrations left it, holding one operation.
func sqliteLedgerAt(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stmts []string
	for _, m := range store.Migrations(os.DirFS("../../store/sqlite"), "migrations")[:n] {
		stmts = append(stmts, m.SQL)
	}
	for _, q := range append(stmts, fmt.Sprintf("PRAGMA user_version = %d", n), oldOperation) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// pgLedgerAt makes url's schema a ledger as a build that knew the first n
// migrations left it, holding one operation.
func pgLedgerAt(t *testing.T, url string, n int) {
	t.Helper()
	stmts := []string{`CREATE SCHEMA ` + postgres.SchemaOf(url)}
	for i, m := range store.Migrations(os.DirFS("../../store/postgres"), "migrations")[:n] {
		stmts = append(stmts, m.SQL, fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, '%s', 0)`, i+1, m.Name))
	}
	for _, q := range append(stmts, oldOperation) {
		if err := pgtest.Exec(t, url, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// schemaVersionOf reads a ledger's schema version without opening it
// through the store (which would migrate it).
func schemaVersionOf(t *testing.T, where string) int {
	t.Helper()
	var v int
	if postgres.IsURL(where) {
		conn, err := pgx.Connect(t.Context(), where)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(t.Context())
		if err := conn.QueryRow(t.Context(), `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	db, err := sql.Open("sqlite", "file:"+where+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// After an upgrade, the read commands (which open the ledger read-only
// and have no --read-only flag to drop) refuse an older ledger with a
// next step that can be followed: `retrysafe migrate`, which migrates it
// and says from which version to which; then the reads work. Nothing is
// changed by a refused read.
func TestReadCommandsOnAnOlderLedgerNameRetrysafeMigrate(t *testing.T) {
	type driver struct {
		name    string
		old     func(t *testing.T) string
		current int
	}
	for _, d := range []driver{
		{"sqlite", func(t *testing.T) string { return sqliteLedgerAt(t, sqlite.SchemaVersion()-1) }, sqlite.SchemaVersion()},
		{"postgres", func(t *testing.T) string {
			u := pgURL(t)
			pgLedgerAt(t, u, postgres.SchemaVersion()-1)
			return u
		}, postgres.SchemaVersion()},
	} {
		t.Run(d.name, func(t *testing.T) {
			db := d.old(t)
			reads := [][]string{
				{"ops", "list", "--db", db},
				{"ops", "show", "--db", db, "--tenant", "acme", "--key", "old-key"},
				{"ops", "decisions", "--db", db},
				{"tokens", "list", "--db", db},
			}
			for _, args := range reads {
				_, errText, code := cli(t, args...)
				line := oneErrorLine(t, strings.Join(args[:2], " "), errText)
				if code != 2 || !strings.Contains(line, "`retrysafe migrate`") || strings.Contains(line, "--read-only") ||
					!strings.Contains(line, fmt.Sprintf("schema version %d", d.current-1)) {
					t.Errorf("%s on an older ledger: exit %d %q; want 2 naming `retrysafe migrate`", strings.Join(args[:2], " "), code, line)
				}
			}
			if v := schemaVersionOf(t, db); v != d.current-1 {
				t.Fatalf("a refused read changed the schema version to %d", v)
			}
			out, errText, code := cli(t, "migrate", "--db", db)
			if code != 0 || !strings.Contains(out, fmt.Sprintf("migrated from schema version %d to %d", d.current-1, d.current)) {
				t.Fatalf("migrate: exit %d %q %q", code, out, errText)
			}
			if v := schemaVersionOf(t, db); v != d.current {
				t.Fatalf("after migrate: schema version %d, want %d", v, d.current)
			}
			for _, args := range reads {
				if out, errText, code := cli(t, args...); code != 0 {
					t.Errorf("%s after migrate: exit %d %q %q", strings.Join(args[:2], " "), code, out, errText)
				}
			}
			out, _, code = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "old-key")
			if code != 0 || !strings.Contains(out, "old-key") {
				t.Errorf("the old operation after migrate: exit %d %q", code, out)
			}
			// Again: nothing to do, said so; --json for scripts.
			out, errText, code = cli(t, "migrate", "--db", db)
			if code != 0 || !strings.Contains(out, fmt.Sprintf("schema version %d", d.current)) || !strings.Contains(out, "nothing to migrate") {
				t.Errorf("migrate again: exit %d %q %q", code, out, errText)
			}
			out, errText, code = cli(t, "migrate", "--db", db, "--json")
			var got struct {
				Ledger   string `json:"ledger"`
				From, To int
				Migrated bool `json:"migrated"`
			}
			if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.From != d.current || got.To != d.current || got.Migrated || got.Ledger == "" {
				t.Errorf("migrate --json: exit %d %q %q (%v)", code, out, errText, err)
			}
		})
	}
}

// migrate --json on an older ledger says what it did; migrate never
// creates a ledger.
func TestMigrateSaysWhatItDidAndCreatesNothing(t *testing.T) {
	db := sqliteLedgerAt(t, 12)
	out, errText, code := cli(t, "migrate", "--db", db, "--json")
	var got struct {
		From     int  `json:"from"`
		To       int  `json:"to"`
		Migrated bool `json:"migrated"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.From != 12 || got.To != sqlite.SchemaVersion() || !got.Migrated {
		t.Fatalf("migrate --json from 12: exit %d %q %q (%v)", code, out, errText, err)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	_, errText, code = cli(t, "migrate", "--db", missing)
	if code != 2 || !strings.Contains(oneErrorLine(t, "migrate a missing ledger", errText), "no ledger") {
		t.Errorf("migrate a missing ledger: exit %d %q; want 2, no ledger", code, errText)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("migrate created %s", missing)
	}
}

// On PostgreSQL a worker whose role is not the schema's owner (the
// README's GRANTs) cannot migrate it after an upgrade. Its every call used
// to fail "internal: … permission denied", exit 1 — retry later, for ever
// — with the URL twice. It is a setup error (exit 2, nothing written) that
// says the schema needs migrating by its owner, with `retrysafe migrate`;
// once the owner has run it, the worker's calls go through.
func TestAWorkerRoleThatMayNotMigrateIsToldWhoMust(t *testing.T) {
	owner := pgURL(t)
	pgLedgerAt(t, owner, postgres.SchemaVersion()-1)
	schema := postgres.SchemaOf(owner)
	role := "app_" + strings.TrimPrefix(pgtest.NewSchemaName(), "t_")
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA ` + schema + ` TO ` + role,
	} {
		if err := pgtest.Exec(t, owner, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
			if err := pgtest.Exec(t, owner, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	worker := u.String()
	pdb := filepath.Join(t.TempDir(), "provider.db")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"call", callArgs(worker, "acme", "k-1", "create_support_task", taskArgs("s"), "--provider-db", pdb)},
		{"sweep", []string{"sweep", "--db", worker, "--provider-db", pdb}},
		{"migrate", []string{"migrate", "--db", worker}},
		{"serve", []string{"serve", "--db", worker, "--listen", "127.0.0.1:0", "--provider-db", pdb}},
		{"mcp", []string{"mcp", "--db", worker, "--tenant", "acme", "--provider-db", pdb}},
		{"ops list", []string{"ops", "list", "--db", worker}},
	} {
		out, errText, code := cli(t, c.args...)
		line := out + errText
		if code != 2 || !strings.Contains(line, "`retrysafe migrate`") || !strings.Contains(line, "owner") ||
			strings.Contains(line, "internal") || strings.Count(line, schema) != 1 {
			t.Errorf("%s as a role that may not migrate: exit %d %q; want 2, the owner to run `retrysafe migrate`, the ledger named once", c.name, code, line)
		}
	}
	if v := schemaVersionOf(t, owner); v != postgres.SchemaVersion()-1 {
		t.Fatalf("the worker changed the schema version to %d", v)
	}
	if out, errText, code := cli(t, "migrate", "--db", owner); code != 0 {
		t.Fatalf("migrate as the owner: exit %d %q %q", code, out, errText)
	}
	if out, errText, code := cli(t, callArgs(worker, "acme", "k-1", "create_support_task", taskArgs("s"), "--provider-db", pdb)...); code != 0 {
		t.Fatalf("call as the worker after the owner migrated: exit %d %q %q", code, out, errText)
	}
}
