package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// A SQLite ledger's clock is this host's: there is no other clock to be
// off from, so the store reports no offset (store.ClockReporter is for a
// ledger whose clock is a database server's).
func TestASQLiteLedgerReportsNoClockOffset(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "ledger.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := any(s).(store.ClockReporter); ok {
		t.Error("the SQLite store claims a clock offset; its clock is the host's")
	}
}
