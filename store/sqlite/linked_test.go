package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A ledger's files removed or replaced under an open store: what the store
// acknowledged must be in the files that bear the ledger's name, which are
// all that the next process (after a kill -9, a reboot) opens. Before, a
// removed -wal went unnoticed: every commit went on into the unlinked log,
// was acknowledged, and vanished with the process — and the next call of
// an acknowledged key made its effect a second time.
func TestCommitsAfterTheLedgersFilesAreRemovedAreNeverAcknowledgedAndLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		disturb func(t *testing.T, path string)
	}{
		{"write-ahead log removed", func(t *testing.T, path string) {
			if err := os.Remove(path + "-wal"); err != nil {
				t.Fatal(err)
			}
		}},
		{"ledger file replaced by a copy", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			testfiles.Copy(t, path+".old", path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openLedger(t, store.Options{})
			ctx := context.Background()
			write := func(key string) error {
				return s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, key) })
			}
			if err := write("before"); err != nil {
				t.Fatal(err)
			}
			tc.disturb(t, path)
			acked := map[string]bool{"before": true}
			for _, key := range []string{"after", "later", "last"} {
				err := write(key)
				switch {
				case err == nil:
					acked[key] = true
				case !model.IsCode(err, model.CodeInternal):
					t.Fatalf("write %s after the files changed: %v; want success or an internal (retry later) error", key, err)
				}
			}
			// What a new process finds under the ledger's name, now.
			dir := t.TempDir()
			testfiles.Copy(t, path, filepath.Join(dir, "ledger.db"))
			if _, err := os.Stat(path + "-wal"); err == nil {
				testfiles.Copy(t, path+"-wal", filepath.Join(dir, "ledger.db-wal"))
			}
			found, err := Open(filepath.Join(dir, "ledger.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer found.Close()
			for key := range acked {
				if _, err := found.Get(ctx, "t", key); err != nil {
					t.Errorf("%s was acknowledged, but the ledger's files do not have it: %v", key, err)
				}
			}
			if acked["last"] {
				t.Errorf("every write was acknowledged: the store never noticed its files changed")
			}
		})
	}
}

// A ledger made before the mark is recognised by its tables; one whose
// writer was killed during a checkpoint is whole only with its -wal (the
// file's header already counts pages not yet written), and reading the
// file alone found it "malformed" and refused it as no ledger at all.
func TestALedgerBeforeTheMarkKilledMidCheckpointIsRecognised(t *testing.T) {
	path := legacyLedger(t)
	// The old writer's commits, still in its log when it is killed.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=wal_autocheckpoint(0)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for i := 0; i < 300; i++ {
		if _, err := db.Exec(`INSERT INTO tasks (tenant, subject, operation_id, created_at) VALUES ('t', ?, ?, 0)`,
			strings.Repeat("s", 500), i+1); err != nil {
			t.Fatal(err)
		}
	}
	killed := filepath.Join(t.TempDir(), "old.db")
	testfiles.Copy(t, path, killed)
	testfiles.Copy(t, path+"-wal", killed+"-wal")
	// The checkpoint's first write, and no more.
	if err := testfiles.KilledAfterPage1(killed); err != nil {
		t.Fatal(err)
	}
	s, err := Open(killed, store.Options{})
	if err != nil {
		t.Fatalf("an old ledger killed mid-checkpoint is refused: %v", err)
	}
	s.Close()
}

// A watcher pinned to a ledger file that was then replaced (or removed)
// says so on its next poll instead of "nothing changed" — the pinned
// connection reads the old file, which nobody writes any more — for a
// read-only store too; and a writable store then refuses writes before
// committing anything into the old file.
func TestAWatcherSaysTheLedgerFileWasReplaced(t *testing.T) {
	for _, ro := range []bool{false, true} {
		t.Run(map[bool]string{false: "writable", true: "read-only"}[ro], func(t *testing.T) {
			w0, path := openLedger(t, store.Options{})
			ctx := context.Background()
			if err := w0.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "before") }); err != nil {
				t.Fatal(err)
			}
			s := w0
			if ro {
				var err error
				if s, err = Open(path, store.Options{ReadOnly: true}); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			}
			w, err := s.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Changed(ctx); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			testfiles.Copy(t, path+".old", path)
			for i := 0; i < 2; i++ {
				if _, err := w.Changed(ctx); err == nil || !strings.Contains(err.Error(), "replaced") {
					t.Fatalf("poll %d after the file was replaced: %v; want an error saying so", i, err)
				}
			}
			if ro {
				return
			}
			if err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "after") }); err == nil {
				t.Fatal("a write after the watcher noticed was accepted")
			}
		})
	}
}

// The write-ahead log removed under a watcher (rm of the -wal and -shm,
// a clean-up script): other processes' commits go into a new log this
// connection never reads, so "nothing changed" would keep a screen
// stale for good. The watcher says so; the writer's own next commit still
// copies what the unlinked log held into the ledger file, as before.
func TestAWatcherSaysTheWriteAheadLogWasRemoved(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "before") }); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Changed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-shm")
	if _, err := w.Changed(ctx); err == nil || !strings.Contains(err.Error(), "-wal was removed") {
		t.Fatalf("poll after the log was removed: %v; want an error saying so", err)
	}
	// The writer is not stopped by the watcher: its next commit saves the
	// unlinked log's commits into the ledger file (and then refuses).
	s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "after") })
	s.Close()
	found, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer found.Close()
	if _, err := found.Get(ctx, "t", "before"); err != nil {
		t.Fatalf("the commit acknowledged before the log was removed is lost: %v", err)
	}
}
