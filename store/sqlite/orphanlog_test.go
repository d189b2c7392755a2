package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A ledger file removed without its -wal (or -journal) leaves a log that
// names no database: SQLite would replay its pages into a new ledger made
// at that path — another ledger's operations, under a new identity. A new
// ledger is not made there; the path's log is left as it is (it may hold
// the removed ledger's latest commits).
func TestANewLedgerIsNotMadeOverAnOrphanedLog(t *testing.T) {
	ctx := context.Background()
	for _, suffix := range []string{"-wal", "-journal"} {
		t.Run(suffix, func(t *testing.T) {
			s, path := openLedger(t, store.Options{LeaveWAL: true})
			if err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "old") }); err != nil {
				t.Fatal(err)
			}
			// The log as a killed writer leaves it, before any checkpoint.
			log, err := os.ReadFile(path + "-wal")
			if err != nil || len(log) == 0 {
				t.Fatalf("no WAL to orphan (%d bytes, %v)", len(log), err)
			}
			s.Close()
			fresh := filepath.Join(t.TempDir(), "ledger.db")
			if err := os.WriteFile(fresh+suffix, log, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Open(fresh, store.Options{Create: true})
			if !model.IsCode(err, model.CodeUnsupported) || !strings.Contains(err.Error(), suffix) {
				t.Fatalf("Open over an orphaned %s: %v; want it refused, naming the log", suffix, err)
			}
			if _, err := os.Stat(fresh); !os.IsNotExist(err) {
				t.Errorf("a ledger was made over the orphaned log (%v)", err)
			}
			if b, _ := os.ReadFile(fresh + suffix); string(b) != string(log) {
				t.Error("the orphaned log was changed")
			}
		})
	}
	// An empty log holds nothing to take in.
	fresh := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(fresh+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(fresh, store.Options{Create: true})
	if err != nil {
		t.Fatalf("Open over an empty -wal: %v", err)
	}
	s.Close()
}
