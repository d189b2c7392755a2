package sandbox_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// A kill -9 during a checkpoint leaves the file itself ahead of its size:
// SQLite writes page 1 (whose header says how many pages the database
// has) before the pages past the file's end, and the -wal still holds
// every commit whole. Opened with its -wal the file is whole (SQLite
// replays the log); read alone it is "malformed". The check that a file
// is a sandbox's read it alone, so such a file was refused on every open
// from then on — found after a kill -9 of `retrysafe serve` under load:
// every later serve exited at start, every external call was refused.
func TestAFileKilledMidCheckpointOpensWithItsLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "provider.db")
	s, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Commits that stay in the log: a writer that never checkpoints, still
	// open when the files are taken (as at a kill -9).
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	const rows = 400
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows; i++ {
		if _, err := tx.Exec(`INSERT INTO deliveries (provider, downstream_key, tool, args, created_at) VALUES ('sandbox', ?, 't', ?, 0)`,
			"k"+strings.Repeat("x", i%7), strings.Repeat("a", 500)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(t.TempDir(), "provider.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(killed+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The checkpoint's first write, and no more.
	if err := testfiles.KilledAfterPage1(killed); err != nil {
		t.Fatal(err)
	}

	s, err = sandbox.Open(killed)
	if err != nil {
		t.Fatalf("a sandbox file killed mid-checkpoint is refused: %v", err)
	}
	defer s.Close()
	if n, err := s.Deliveries(context.Background(), ""); err != nil || n != rows {
		t.Fatalf("deliveries %d, %v; want the %d its log holds", n, err, rows)
	}
}
