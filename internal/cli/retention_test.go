package cli

import (
	"database/sql"
	"encoding/json"
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

// After a sweep compacts an expired key, `ops show` said `no operation`
// while `call` said "expired": the CLI could not see tombstones. ops show
// now says what the key was, when it was compacted and until when calls of
// it are refused (text and --json); call's message before and after
// compaction names true times (the ending of the replay window, then the
// compaction — the tombstone does not keep the former).
func TestOpsShowOfACompactedKeyShowsItsTombstone(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "loc1", "create_support_task", taskArgs("once"))...); code != 0 {
		t.Fatal("setup call failed")
	}
	ageOperations(t, db, 25*time.Hour)
	_, before, code := cli(t, callArgs(db, "acme", "loc1", "create_support_task", taskArgs("once"))...)
	if code != 7 || !strings.Contains(before, "past its replay window (ended ") {
		t.Errorf("expired call before compaction: exit %d %q", code, before)
	}
	if out, errText, code := cli(t, "sweep", "--db", db, "--json"); code != 0 || !strings.Contains(out, `"compacted":1`) {
		t.Fatalf("sweep: exit %d %s %s", code, out, errText)
	}
	_, after, code := cli(t, callArgs(db, "acme", "loc1", "create_support_task", taskArgs("once"))...)
	if code != 7 || strings.Contains(after, "expired on") || !strings.Contains(after, "compacted on ") {
		t.Errorf("expired call after compaction: exit %d %q; want it to say when it was compacted, not a false expiry time", code, after)
	}
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "loc1")
	if code != 0 {
		t.Fatalf("ops show of a compacted key: exit %d %s %s", code, out, errText)
	}
	for _, want := range []string{"loc1", "create_support_task", "compacted", "applied", "refused until", "receipt", "not kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("ops show of a compacted key lacks %q:\n%s", want, out)
		}
	}
	out, errText, code = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "loc1", "--json")
	var v struct {
		Tombstone *struct {
			Tenant, Key, Tool, Fingerprint string
			FinalState                     string    `json:"final_state"`
			CompactedAt                    time.Time `json:"compacted_at"`
			RefusedUntil                   time.Time `json:"refused_until"`
			ReceiptKept                    *bool     `json:"receipt_kept"`
		} `json:"tombstone"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Tombstone == nil || v.Tombstone.Key != "loc1" ||
		v.Tombstone.FinalState != "applied" || v.Tombstone.CompactedAt.IsZero() || !v.Tombstone.RefusedUntil.After(v.Tombstone.CompactedAt) ||
		v.Tombstone.ReceiptKept == nil || *v.Tombstone.ReceiptKept {
		t.Errorf("ops show --json of a compacted key: exit %d %s %s", code, out, errText)
	}
	// Another tenant still sees nothing.
	if _, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "globex", "--key", "loc1"); code != 2 || !strings.Contains(errText, "no operation") {
		t.Errorf("another tenant: exit %d %s", code, errText)
	}
}
