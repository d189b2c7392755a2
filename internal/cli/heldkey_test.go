package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// The brief's repro: a held new key (its replaced key found applied after
// it was authorized) checked with ops check asked about its own key, never
// sent — "has nothing" — and that finding then refused its only legal
// decision: mark applied needed --against-finding, and the dry run said
// "would be refused". The check asks about the replaced key now, says so,
// and mark applied with the replaced key's reference is written.
func TestOpsCheckOfAHeldNewKeyAsksAboutTheReplacedKey(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "held-1", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d", code)
	}
	// Superseded while the provider could not be asked (its file elsewhere):
	// "cannot tell", so the new key is authorized; the "has it" comes after.
	missing := filepath.Join(t.TempDir(), "elsewhere.provider.db")
	if out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "held-1", "--new-key", "held-1-new", "--reason", "resend", "--provider-db", missing); code != 0 {
		t.Fatalf("supersede: exit %d %s%s", code, out, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "held-1")
	if code != 0 || !strings.Contains(out, "has it") {
		t.Fatalf("check held-1: exit %d %s%s", code, out, errText)
	}
	out, errText, code = cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "held-1-new")
	if code != 0 || !strings.Contains(out, "asked about the key it replaced, held-1") || !strings.Contains(out, "finding: has it") ||
		!strings.Contains(out, "--key held-1-new --as applied --evidence sbx_") {
		t.Fatalf("check held-1-new: exit %d\n%s%s", code, out, errText)
	}
	ref := out[strings.Index(out, "--evidence ")+len("--evidence "):]
	ref = strings.Fields(ref)[0]
	resolve := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "held-1-new", "--as", "applied", "--evidence", ref, "--reason", "the provider has held-1's"}
	out, errText, code = cli(t, append(resolve, "--dry-run")...)
	if code != 0 || strings.Contains(out, "would be refused") || !strings.Contains(out, "authorized (v2) → applied") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	out, errText, code = cli(t, resolve...)
	if code != 0 || !strings.Contains(out, "authorized → applied") {
		t.Fatalf("mark held-1-new applied: exit %d\n%s%s", code, out, errText)
	}
	if out, errText, code = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "held-1-new"); code != 0 || !strings.Contains(out, ref) {
		t.Fatalf("show: exit %d\n%s%s", code, out, errText)
	}
}

// ops resolve --as applied with several keys and one --evidence: each
// operation's receipt names its own "has it" reference (the dry run says
// so), not the typed evidence — another operation's reference.
func TestOpsResolveSeveralAppliedKeepsEachOwnReference(t *testing.T) {
	db := newLedgerFile(t)
	refs := map[string]string{}
	for _, k := range []string{"u-1", "u-2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
		out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", k)
		if code != 0 || !strings.Contains(out, "--evidence ") {
			t.Fatalf("check %s: exit %d %s%s", k, code, out, errText)
		}
		refs[k] = strings.Fields(out[strings.Index(out, "--evidence ")+len("--evidence "):])[0]
	}
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "u-1", "--key", "u-2", "--as", "applied",
		"--evidence", refs["u-2"], "--reason", "provider has both"}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "receipt: its own reference "+refs["u-1"]) {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	if out, errText, code = cli(t, append(base, "--yes")...); code != 0 {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, errText)
	}
	other := map[string]string{"u-1": "u-2", "u-2": "u-1"}
	for _, k := range []string{"u-1", "u-2"} {
		out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", k, "--json")
		flat := strings.Join(strings.Fields(out), "")
		if !strings.Contains(flat, `"provider_ref":"`+refs[k]+`"`) || strings.Contains(flat, `"provider_ref":"`+refs[other[k]]+`"`) {
			t.Errorf("%s: want provider_ref %s only:\n%s", k, refs[k], out)
		}
	}
}
