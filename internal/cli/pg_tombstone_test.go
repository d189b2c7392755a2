package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// ops show of a compacted key on PostgreSQL said `no operation` (exit 2)
// where SQLite showed the tombstone: ops show opens the ledger read-only,
// PostgreSQL had no read-side tombstone read, and the fallback (a write
// transaction, refused read-only) failed silently into "no operation".
// Both drivers now read it on the read side, and a failed read is that
// failure, never "no operation".
func TestOpsShowOfACompactedKeyOnPostgreSQLShowsItsTombstone(t *testing.T) {
	url := pgURL(t)
	if _, errText, code := cli(t, callArgs(url, "acme", "loc1", "create_support_task", taskArgs("once"))...); code != 0 {
		t.Fatalf("setup call: exit %d %s", code, errText)
	}
	if err := pgtest.Exec(t, url, `UPDATE operations SET created_at = created_at - 172800000,
		updated_at = updated_at - 172800000, expires_at = expires_at - 172800000`); err != nil {
		t.Fatal(err)
	}
	if out, errText, code := cli(t, "sweep", "--db", url, "--json"); code != 0 || !strings.Contains(out, `"compacted":1`) {
		t.Fatalf("sweep: exit %d %s %s", code, out, errText)
	}
	out, errText, code := cli(t, "ops", "show", "--db", url, "--tenant", "acme", "--key", "loc1")
	if code != 0 {
		t.Fatalf("ops show of a compacted key: exit %d %s %s", code, out, errText)
	}
	for _, want := range []string{"loc1", "create_support_task", "compacted", "applied", "refused until"} {
		if !strings.Contains(out, want) {
			t.Errorf("ops show of a compacted key lacks %q:\n%s", want, out)
		}
	}
	out, errText, code = cli(t, "ops", "show", "--db", url, "--tenant", "acme", "--key", "loc1", "--json")
	var v struct {
		Tombstone *struct {
			Key        string
			FinalState string `json:"final_state"`
		} `json:"tombstone"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Tombstone == nil || v.Tombstone.Key != "loc1" || v.Tombstone.FinalState != "applied" {
		t.Errorf("ops show --json of a compacted key: exit %d %s %s", code, out, errText)
	}
	if _, errText, code := cli(t, "ops", "show", "--db", url, "--tenant", "globex", "--key", "loc1"); code != 2 || !strings.Contains(errText, "no operation") {
		t.Errorf("another tenant: exit %d %s", code, errText)
	}
	// A tombstone that cannot be read is not "no operation".
	if err := pgtest.Exec(t, url, `DROP TABLE tombstones`); err != nil {
		t.Fatal(err)
	}
	if _, errText, code := cli(t, "ops", "show", "--db", url, "--tenant", "acme", "--key", "loc1"); code == 0 || code == 2 || strings.Contains(errText, "no operation") {
		t.Errorf("unreadable tombstones: exit %d %s; want the read's failure, not \"no operation\"", code, errText)
	}
}
