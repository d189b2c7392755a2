package sandbox

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// A sandbox file's id is made by its first open, kept by every later open,
// differs between files, and an older file (no file_meta) gets one when
// first opened since.
func TestFileIDIsMadeOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	open := func(path string) string {
		t.Helper()
		sb, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		id := sb.FileID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("FileID = %q; want 32 lowercase hex digits", id)
		}
		return id
	}
	a := filepath.Join(dir, "a.provider.db")
	first := open(a)
	if again := open(a); again != first {
		t.Errorf("reopened: FileID %s; want %s", again, first)
	}
	if other := open(filepath.Join(dir, "b.provider.db")); other == first {
		t.Errorf("another file has the same FileID %s", other)
	}
	db, err := sql.Open("sqlite", "file:"+a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE file_meta`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	old := open(a)
	if old == first {
		t.Errorf("an older file got the id it never had: %s", old)
	}
	if again := open(a); again != old {
		t.Errorf("an older file, reopened: FileID %s; want %s", again, old)
	}
}
