package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A call without --payload-version retrying a key recorded before the
// operator raised the tool's payload_version is the same request (compared
// under the recorded version); one naming another version explicitly is a
// conflict. A conflict on an unsettled key does not advise a new key.
func TestCallAfterARaisedPayloadVersion(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	cfg := filepath.Join(dir, "tools.toml")
	write := func(version string) {
		writeTwoTools(t, cfg, version, `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)
	}
	const same, other = `{"to":"x"}`, `{"to":"y"}`
	cases := []struct {
		name, tool, fault string
		code              int // the same bytes, after the bump
		settled           bool
	}{
		{"applied", "note", "", 0, true},
		{"unknown", "charge", "lose-reply", 5, false},
		{"not_applied", "charge", "fail-before", 0, true},
	}
	write("1")
	for _, c := range cases {
		extra := []string{"--config", cfg}
		if c.fault != "" {
			extra = append(extra, "--fault", c.fault)
		}
		cli(t, callArgs(db, "acme", c.name, c.tool, same, extra...)...)
	}
	write("2")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errText, code := cli(t, callArgs(db, "acme", c.name, c.tool, same, "--config", cfg)...)
			if code != c.code {
				t.Fatalf("same bytes after the bump: exit %d, want %d; %q %q", code, c.code, out, errText)
			}
			out, errText, code = cli(t, callArgs(db, "acme", c.name, c.tool, same, "--config", cfg, "--payload-version", "2")...)
			if code != 3 {
				t.Fatalf("--payload-version 2 named: exit %d, want 3 (conflict); %q %q", code, out, errText)
			}
			_, errText, code = cli(t, callArgs(db, "acme", c.name, c.tool, other, "--config", cfg)...)
			if code != 3 {
				t.Fatalf("other arguments: exit %d, want 3; %q", code, errText)
			}
			if !c.settled && (!strings.Contains(errText, "not settled") || strings.Contains(errText, "or a new key")) {
				t.Fatalf("a conflict on an unsettled key advises a new key: %q", errText)
			}
		})
	}
	if n := deliveries(t, db, "acme", "not_applied"); n != 1 {
		t.Fatalf("not_applied re-sent: %d deliveries, want 1", n)
	}
}

// writeTwoTools writes a config with an external tool "charge" (sandbox
// provider "pay") and a local tool "note", both with the given payload
// version and arguments schema.
func writeTwoTools(t *testing.T, path, version, schema string) {
	t.Helper()
	doc := `[[providers]]
name = "pay"
kind = "sandbox"

[[tools]]
name = "charge"
payload_version = ` + version + `
provider = "pay"
arguments = '` + schema + `'

[[tools]]
name = "note"
payload_version = ` + version + `
local = "local_effects"
arguments = '` + schema + `'
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}
