package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config whose tool is named exactly like its sandbox provider (tool
// sandbox-idem on provider sandbox-idem): its deliveries looked like those
// taken through `sandbox serve` (kept under the provider's name, not
// compared), so a copy of the ledger that sent another request under the
// original's downstream key had it reported "has it" — and ops resolve
// --as applied wrote it. The sandbox now records a serve delivery as one,
// so this one is compared: another request, exit 2, and "applied" is
// refused with nothing written.
func TestAToolNamedLikeItsProviderIsComparedByTheSandbox(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace
	cfg := filepath.Join(t.TempDir(), "same-name.toml")
	if err := os.WriteFile(cfg, []byte(`
[[providers]]
name = "sandbox-idem"
kind = "sandbox"
honours_keys = true
authoritative_lookup = true

[[tools]]
name = "sandbox-idem"
description = "A tool named like its provider."
payload_version = 1
summary = "to"
provider = "sandbox-idem"
arguments = '''
{"type": "object", "properties": {"to": {"type": "string", "minLength": 1}}, "required": ["to"]}
'''
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := newLedgerFile(t)
	cp := copyLedger(t, db)
	pdb := providerPath(db)
	if _, errText, code := cli(t, callArgs(db, "acme", "n-1", "sandbox-idem", `{"to":"a@example.com"}`, "--config", cfg)...); code != 0 {
		t.Fatalf("the original's call: exit %d: %s", code, errText)
	}
	if _, errText, code := cli(t, callArgs(cp, "acme", "n-1", "sandbox-idem", `{"to":"someone-else@example.com"}`, "--config", cfg,
		"--provider-db", pdb, "--fault", "delay=2s", "--timeout", "300ms")...); code != 4 || !strings.Contains(errText, "outcome unknown") {
		t.Fatalf("the copy's call: exit %d; want 4 (outcome unknown, on a provider that honours keys): %s", code, errText)
	}
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--config", cfg, "--tenant", "acme", "--key", "n-1"); code != 0 || !strings.Contains(out, "has it · sbx_1") {
		t.Fatalf("the original's check: exit %d %q %q; want has it", code, out, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", cp, "--config", cfg, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1")
	if code != exitInvalid || strings.Contains(out, "to settle") || !strings.Contains(errText, "different request under this key") || !strings.Contains(errText, "sbx_1") {
		t.Fatalf("the copy's check: exit %d %q %q; want 2, another request (sbx_1), nothing offered", code, out, errText)
	}
	before := digest(t, cp, "attempts")
	out, errText, code = cli(t, "ops", "resolve", "--db", cp, "--config", cfg, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1",
		"--as", "applied", "--evidence", "sbx_1", "--reason", "the provider has it")
	if code == 0 || !strings.Contains(errText, "different request") || !strings.Contains(errText, "nothing was written") {
		t.Errorf("ops resolve --as applied: exit %d %q %q; want refused, nothing written", code, out, errText)
	}
	if digest(t, cp, "attempts") != before {
		t.Fatal("a refused resolve changed the ledger")
	}
}
