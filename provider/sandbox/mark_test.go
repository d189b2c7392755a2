package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
)

// A file restored from an older backup keeps its file id but no longer
// holds the newest delivery a ledger saw (Mark): Holds says so — whether
// the restored file stayed behind, or went on delivering and gave that
// delivery's number to another one. The file that was not restored holds
// every mark it ever showed.
func TestHoldsTellsAFileRestoredFromAnOlderBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "p.db"), filepath.Join(dir, "backup.db")
	sb, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	send := func(sb *Sandbox, key string) Mark {
		t.Helper()
		if _, err := sb.Provider("sandbox", false).Dispatch(ctx, provider.Request{DownstreamKey: key, Tool: "t", Args: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		m, err := sb.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m, err := sb.Mark(ctx); err != nil || m != (Mark{}) {
		t.Fatalf("a new file's Mark = %+v, %v; want zero", m, err)
	}
	early := send(sb, "k1")
	if _, err := sb.db.Exec(`VACUUM INTO ?`, backup); err != nil {
		t.Fatal(err)
	}
	late := send(sb, "k2")
	if late.Seq != early.Seq+1 || late.Check == early.Check || len(late.Check) != 32 {
		t.Fatalf("marks %+v then %+v; want consecutive numbers with different checks", early, late)
	}
	holds := func(sb *Sandbox, m Mark) bool {
		t.Helper()
		ok, err := sb.Holds(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, m := range []Mark{{}, early, late} {
		if !holds(sb, m) {
			t.Errorf("the file that was not restored does not hold %+v", m)
		}
	}
	id := sb.FileID()
	sb.Close()
	for _, f := range []string{path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sb, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.FileID() != id {
		t.Fatalf("the restored file's id %s; want the same %s (a backup is the same file)", sb.FileID(), id)
	}
	if !holds(sb, early) || holds(sb, late) {
		t.Errorf("restored: holds the early mark %v, the late one %v; want true, false", holds(sb, early), holds(sb, late))
	}
	// It goes on delivering: the late mark's number is another delivery's now.
	again := send(sb, "k3")
	if again.Seq != late.Seq {
		t.Fatalf("the restored file's next delivery is #%d; want #%d (its number given again)", again.Seq, late.Seq)
	}
	if holds(sb, late) {
		t.Errorf("restored, then delivering: still holds the late mark %+v (now %+v)", late, again)
	}
	if bad := (Mark{Seq: early.Seq, Check: "00000000000000000000000000000000"}); holds(sb, bad) {
		t.Errorf("holds a mark whose check is another delivery's")
	}
}
