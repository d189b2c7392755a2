package sqlite

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 14 (before a lookup could find "has another
// request") keeps its findings through migration 15, records and reads
// back a has_other lookup afterwards, and its CHECK still refuses a
// finding it does not know and a finding on an attempt that is not a
// lookup.
func TestMigration15KeepsTheFindingsAndRecordsHasOther(t *testing.T) {
	path := ledgerAtVersion(t, 14)
	plainExec(t, path, storetest.HasOtherRowsAtSchema14(strings.Repeat("0", 64))...)
	// Before the migration, the schema refuses the new finding.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, finding, started_at) VALUES (7, 90, 'lookup', 'f', 'has_other', 0)`); err == nil {
		t.Fatal("schema 14 took a has_other finding: the migration test proves nothing")
	}
	db.Close()
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckHasOtherAfterMigration(t, s)
	for _, c := range []struct {
		values string
		ok     bool
	}{
		{"91, 'lookup', 'has_other'", true},
		{"92, 'lookup', 'maybe'", false},
		{"93, 'dispatched', 'has_other'", false},
		{"94, 'lookup', 'cannot_tell'", true},
	} {
		err := s.WithTx(t.Context(), func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO attempts (operation_id, seq, outcome, finding, fingerprint, started_at) VALUES (7, ` + c.values + `, 'f', 0)`)
			return err
		})
		if (err == nil) != c.ok {
			t.Errorf("%s: %v; want accepted %v", c.values, err, c.ok)
		} else if err != nil && !strings.Contains(err.Error(), "extended code 275") { // SQLITE_CONSTRAINT_CHECK
			t.Errorf("%s: refused with %v; want the CHECK", c.values, err)
		}
	}
}
