// Package testfiles holds the file chores tests share: copying a ledger
// as an operator's cp would, and making the files a kill -9 during a
// checkpoint leaves behind.
package testfiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
)

// Copy copies the file from into to (created or truncated, with from's
// permissions: a copied test binary stays executable), as cp does.
func Copy(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// KilledAfterPage1 makes path (a SQLite database in WAL mode, its -wal
// beside it) look as a checkpoint killed after its first write leaves it:
// the log's last copy of page 1 — whose header counts pages the file does
// not have yet — written over the file's page 1, and no more. Opened with
// its -wal the database is whole; read alone it is "malformed".
func KilledAfterPage1(path string) error {
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		return err
	}
	if len(wal) < 32 {
		return fmt.Errorf("%s-wal holds no frames", path)
	}
	pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
	var page1 []byte
	// Frames are a 24-byte header (its page number first) and a page.
	for off := 32; off+24+pageSize <= len(wal); off += 24 + pageSize {
		if binary.BigEndian.Uint32(wal[off:off+4]) == 1 {
			page1 = wal[off+24 : off+24+pageSize]
		}
	}
	if page1 == nil {
		return errors.New("the log holds no page 1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(page1, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
