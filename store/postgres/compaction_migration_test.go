package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 15 (operations.supersedes_id and tombstones.forget_at
// not indexed) gets the indexes compaction looks them up by through
// migration 16, keeps its rows, and compacts a chain afterwards.
func TestMigration16IndexesTheLinksAndCompactsAChain(t *testing.T) {
	url := pgtest.URL(t)
	s := openFromSchema(t, url, 15, storetest.CompactionRowsAtSchema15(strings.Repeat("0", 64))...)
	for _, c := range []struct{ index, table, def string }{
		{"operations_supersedes", "operations", "(supersedes_id) WHERE (supersedes_id IS NOT NULL)"},
		{"operations_superseded_by", "operations", "(superseded_by_id) WHERE (superseded_by_id IS NOT NULL)"},
		{"tombstones_forget", "tombstones", "(forget_at)"},
	} {
		var table, def string
		if err := postgres.QueryRow(context.Background(), s, `SELECT tablename::text, indexdef FROM pg_indexes
			WHERE schemaname = current_schema() AND indexname = '`+c.index+`'`, &table, &def); err != nil {
			t.Errorf("index %s after migration 16: %v", c.index, err)
		} else if table != c.table || !strings.HasSuffix(def, c.def) {
			t.Errorf("index %s: on %s, %s; want on %s, ending %q", c.index, table, def, c.table, c.def)
		}
	}
	storetest.CheckCompactionAfterMigration(t, s)
}
