package postgres_test

import (
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// openFromSchema makes url's schema a ledger as a build that knew the
// first n migrations left it, holding rows (INSERT statements), then opens
// it with this build: the later migrations run on those rows.
func openFromSchema(t *testing.T, url string, n int, rows ...string) *postgres.Store {
	t.Helper()
	stmts := []string{`CREATE SCHEMA ` + postgres.SchemaOf(url)}
	for i, sql := range postgres.MigrationSQL(n) {
		stmts = append(stmts, sql, fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, 'old', 0)`, i+1))
	}
	for _, q := range append(stmts, rows...) {
		if err := pgtest.Exec(t, url, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := postgres.Open(url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
