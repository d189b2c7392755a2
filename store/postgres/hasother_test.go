package postgres_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/storetest"
)

// A ledger at schema 14 (before a lookup could find "has another
// request") keeps its findings through migration 15, records and reads
// back a has_other lookup afterwards, and its CHECK still refuses a
// finding it does not know and a finding on an attempt that is not a
// lookup.
func TestMigration15KeepsTheFindingsAndRecordsHasOther(t *testing.T) {
	url := pgtest.URL(t)
	s := openFromSchema(t, url, 14, storetest.HasOtherRowsAtSchema14(strings.Repeat("0", 64))...)
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
		err := pgtest.Exec(t, url, `INSERT INTO attempts (operation_id, seq, outcome, finding, fingerprint, started_at) VALUES (7, `+c.values+`, 'f', 0)`)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v; want accepted %v", c.values, err, c.ok)
		} else if err != nil && !strings.Contains(err.Error(), "attempts_row_check") {
			t.Errorf("%s: refused with %v; want attempts_row_check", c.values, err)
		}
	}
}
