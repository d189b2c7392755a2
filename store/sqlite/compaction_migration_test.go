package sqlite

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 15 (its links between operations not indexed) gets
// the indexes compaction looks them up by through migration 16, keeps its
// rows, and compacts a chain afterwards.
func TestMigration16IndexesTheLinksAndCompactsAChain(t *testing.T) {
	path := ledgerAtVersion(t, 15)
	plainExec(t, path, storetest.CompactionRowsAtSchema15(strings.Repeat("0", 64))...)
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ index, table, sql string }{
		{"operations_supersedes", "operations", "WHERE supersedes_id IS NOT NULL"},
		{"operations_superseded_by", "operations", "WHERE superseded_by_id IS NOT NULL"},
		{"tombstones_forget", "tombstones", "(forget_at)"},
	} {
		var table, sql string
		if err := s.r.QueryRow(`SELECT tbl_name, sql FROM sqlite_schema WHERE type = 'index' AND name = ?`, c.index).Scan(&table, &sql); err != nil {
			t.Errorf("index %s after migration 16: %v", c.index, err)
		} else if table != c.table || !strings.Contains(sql, c.sql) {
			t.Errorf("index %s: on %s, %s; want on %s, with %q", c.index, table, sql, c.table, c.sql)
		}
	}
	storetest.CheckCompactionAfterMigration(t, s)
}
