package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// copyLedger copies a closed ledger file (and its log, if one was left)
// to a new directory: a copy with the same ledger id.
func copyLedger(t *testing.T, db string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suffix)
		if suffix != "" && os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// A copy of a ledger (the same ledger id) sends its own acme/n-1 — to
// someone else — under the downstream key the original sent its acme/n-1
// under, and the provider file is shared. ops check of the copy's n-1
// used to find the original's delivery ("has it", exit 0, and a "to
// settle: ops resolve --as applied" line), and ops resolve --as applied
// wrote it: the copy's notification was never sent. Now the check says
// the provider holds a different request under the key (exit 2, as cannot
// tell: no evidence either way), ops list finds it by that finding, and
// marking it applied is refused in plain words, nothing written.
func TestACopiedLedgersLookupOfAnotherRequestIsNotHasIt(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace
	db := newLedgerFile(t)
	cp := copyLedger(t, db)
	pdb := providerPath(db)
	if _, errText, code := cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs)...); code != 0 {
		t.Fatalf("the original's call: exit %d: %s", code, errText)
	}
	other := `{"to":"someone-else@example.com","body":"your refund is on its way"}`
	if _, errText, code := cli(t, callArgs(cp, "acme", "n-1", "send_notification", other, "--provider-db", pdb, "--fault", "delay=2s", "--timeout", "300ms")...); code != 5 {
		t.Fatalf("the copy's call: exit %d; want 5 (unknown): %s", code, errText)
	}
	if n, err := countDeliveries(t, pdb); err != nil || n != 1 {
		t.Fatalf("deliveries %d, %v; want 1 (the original's)", n, err)
	}
	// The original's own check finds its delivery.
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1"); code != 0 || !strings.Contains(out, "has it · sbx_1") {
		t.Fatalf("the original's check: exit %d %q %q; want has it", code, out, errText)
	}

	out, errText, code := cli(t, "ops", "check", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1", "--operator", "oncall")
	if code != exitInvalid || strings.Contains(out, "to settle") {
		t.Fatalf("the copy's check: exit %d %q %q; want 2, nothing offered", code, out, errText)
	}
	line := oneErrorLine(t, "ops check", errText)
	for _, words := range []string{"different request under this key", "sbx_1", "other arguments", "do not mark it applied", "authorize a new key"} {
		if !strings.Contains(line, words) {
			t.Errorf("the copy's check %q does not say %q", line, words)
		}
	}
	if strings.Contains(line, "lookup failed") {
		t.Errorf("the copy's check %q says lookup failed: the provider answered", line)
	}
	out, _, _ = cli(t, "ops", "check", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1", "--json")
	var got struct {
		Finding model.Finding `json:"finding"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Finding.Kind != model.FindingHasOther || got.Finding.Ref != "sbx_1" {
		t.Errorf("ops check --json: %q (%v); want finding has_other sbx_1", out, err)
	}
	if out, errText, code := cli(t, "ops", "list", "--db", cp, "--finding", "has-other"); code != 0 || !strings.Contains(out, "n-1") || !strings.Contains(out, "has another request") {
		t.Errorf("ops list --finding has-other: exit %d %q %q", code, out, errText)
	}

	// Asked first (--check): the same answer, nothing decided.
	if _, errText, code := cli(t, "ops", "resolve", "--check", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1", "--as", "applied", "--evidence", "sbx_1", "--reason", "seen"); code != exitInvalid ||
		!strings.Contains(errText, "different request under this key") || !strings.Contains(errText, "nothing was decided") || strings.Contains(errText, "lookup failed") {
		t.Errorf("ops resolve --check --as applied: exit %d %q; want 2, the different request, nothing decided", code, errText)
	}
	before := digest(t, cp)
	for _, args := range [][]string{
		{"ops", "resolve", "--as", "applied", "--evidence", "sbx_1", "--reason", "the provider has it"},
		{"ops", "resolve", "--as", "applied", "--finding", "has-it", "--yes", "--reason", "triage"},
	} {
		args = append(args, "--db", cp, "--provider-db", pdb, "--tenant", "acme")
		if args[4] != "--finding" {
			args = append(args, "--key", "n-1")
		}
		out, errText, code := cli(t, args...)
		if code == 0 && !strings.Contains(out+errText, "nothing") {
			t.Errorf("%v: exit 0 %q %q; want refused", args[:5], out, errText)
		}
		if args[4] == "--evidence" {
			for _, words := range []string{"cannot mark acme/n-1 applied", "different request", "authorize a new key", "nothing was written"} {
				if !strings.Contains(errText, words) {
					t.Errorf("%v: stderr %q does not say %q", args[:5], errText, words)
				}
			}
		}
		if digest(t, cp) != before {
			t.Fatalf("%v: the ledger changed", args[:5])
		}
	}
}
