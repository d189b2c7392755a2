package cli

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

// ageOperations moves every operation of a ledger file back by d, keeping
// the replay window each recorded when it settled (expires_at − updated_at),
// as if it had settled d earlier.
func ageOperations(t *testing.T, path string, d time.Duration) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE operations SET created_at = created_at - ?, updated_at = updated_at - ?,
		expires_at = expires_at - ?`, d.Milliseconds(), d.Milliseconds(), d.Milliseconds()); err != nil {
		t.Fatal(err)
	}
}

// tombstoneWindow is forget_at − expired_at of the tombstone of key.
func tombstoneWindow(t *testing.T, path, key string) time.Duration {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var w int64
	if err := db.QueryRow(`SELECT forget_at - expired_at FROM tombstones WHERE op_key = ?`, key).Scan(&w); err != nil {
		t.Fatalf("tombstone of %s: %v", key, err)
	}
	return time.Duration(w) * time.Millisecond
}

// The tombstone window is checked against the replay window the ledger
// recorded with each operation (24 h for every call), not against a flag:
// `sweep --replay-window 1m --tombstone-window 1m` made tombstones that a
// later sweep forgot a minute on, and a retry of the key created its
// effect a second time.
func TestSweepChecksTheTombstoneWindowAgainstTheRecordedReplayWindow(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("once"))...); code != 0 {
		t.Fatal("setup call failed")
	}
	ageOperations(t, db, 25*time.Hour) // settled 25 h ago with a 24 h window: expired
	before := digest(t, db)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"tombstone window shorter than the recorded window", []string{"--tombstone-window", "1m"}},
		{"just under it", []string{"--tombstone-window", "23h59m"}},
		{"the replay window is no longer a flag", []string{"--replay-window", "1m", "--tombstone-window", "1m"}},
	} {
		out, errText, code := cli(t, append([]string{"sweep", "--db", db}, c.args...)...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
		}
		oneErrorLine(t, c.name, errText)
		if c.name == "tombstone window shorter than the recorded window" && !strings.Contains(errText, "24h0m0s") {
			t.Errorf("%s: the refusal does not name the recorded window: %q", c.name, errText)
		}
	}
	if digest(t, db) != before {
		t.Fatal("a refused sweep changed the ledger")
	}
	if out, errText, code := cli(t, "sweep", "--db", db, "--tombstone-window", "24h", "--json"); code != 0 || !strings.Contains(out, `"compacted":1`) {
		t.Fatalf("sweep with the recorded window: exit %d %s %s", code, out, errText)
	}
	if w := tombstoneWindow(t, db, "k"); w < 24*time.Hour {
		t.Errorf("tombstone kept %v; want at least the recorded 24h", w)
	}
	_, errText, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("once"))...)
	if code != 7 {
		t.Errorf("retry after compaction: exit %d %s; want 7 (expired)", code, errText)
	}
}
