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

	// A bulk dry run says so before --yes does: the row would be refused,
	// and it is not counted among those it would mark.
	out, errText, code = cli(t, "ops", "resolve", "--db", cp, "--provider-db", pdb, "--state", "unknown", "--as", "applied",
		"--evidence", "sbx_1", "--reason", "triage", "--dry-run")
	if code != 0 || !strings.Contains(out, "would be refused: the provider holds another request") || !strings.Contains(out, "dry run: mark applied 0 operations") {
		t.Errorf("bulk --as applied --dry-run: exit %d %q %q; want the has-another-request row refused, none to mark", code, out, errText)
	}
	if digest(t, cp) != before {
		t.Fatal("a dry run changed the ledger")
	}

	// Not applied is refused too, override or not, asked first or not:
	// the next call would go under the same downstream key, and a
	// provider that honours keys answers it with the other request's
	// result. A new key is the way.
	// (Each asks the provider first and records the lookup, an attempt;
	// nothing else is written. ops show offers no digest to override
	// with: no "has it" binds.)
	before = digest(t, cp, "attempts")
	showOut, _, _ := cli(t, "ops", "show", "--db", cp, "--tenant", "acme", "--key", "n-1")
	against := digestIn(t, showOut)
	if against == "" {
		against = "00000000"
	}
	for _, c := range []struct {
		name  string
		args  []string
		words []string
	}{
		{"typed evidence", []string{"--key", "n-1", "--evidence", "INC-1"}, []string{"cannot mark acme/n-1 not applied", "different request", "wrong receipt", "authorize a new key", "nothing was written"}},
		{"override", []string{"--key", "n-1", "--evidence", "INC-1", "--against-finding=" + against}, []string{"nothing was written"}},
		{"asked first", []string{"--key", "n-1", "--check", "--evidence", "INC-1"}, []string{"different request under this key", "nothing was decided"}},
		{"bulk", []string{"--finding", "has-other", "--yes", "--evidence", "INC-1"}, nil},
	} {
		args := append([]string{"ops", "resolve", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--as", "not-applied", "--reason", "never sent"}, c.args...)
		out, errText, code := cli(t, args...)
		if code == 0 && !strings.Contains(out+errText, "nothing") {
			t.Errorf("not applied, %s: exit 0 %q %q; want refused", c.name, out, errText)
		}
		for _, words := range c.words {
			if !strings.Contains(errText, words) {
				t.Errorf("not applied, %s: stderr %q does not say %q", c.name, errText, words)
			}
		}
		if digest(t, cp, "attempts") != before {
			t.Fatalf("not applied, %s: the ledger changed (exit %d %q %q)", c.name, code, out, errText)
		}
	}
	if out, errText, code := cli(t, "ops", "supersede", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1", "--reason", "send it under a new key"); code != 0 {
		t.Errorf("ops supersede: exit %d %q %q; want a new key", code, out, errText)
	}
}
