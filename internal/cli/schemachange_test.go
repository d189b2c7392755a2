package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A retry of the very bytes recorded under a key, after the operator
// changed the tool's arguments (and raised its payload version), gets the
// operation's answer — not "fix the arguments", which would lead the
// caller to change them under a new key and make the effect a second
// time. Such a request is never made again: a key whose operation may be
// made again (not applied) is refused with nothing written, and new keys
// and other bytes are held to the schema as always.
func TestRetryAfterTheToolsArgumentsChanged(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	cfg := filepath.Join(dir, "tools.toml")
	write := func(version, schema string) { writeTwoTools(t, cfg, version, schema) }
	const (
		v1   = `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"],"additionalProperties":false}`
		v2   = `{"type":"object","properties":{"recipient":{"type":"string"}},"required":["recipient"],"additionalProperties":false}`
		same = `{"to":"x"}`
	)
	cases := []struct {
		name, tool, fault string
		code              int    // the same bytes, after the change
		want              string // in its output
	}{
		{"applied", "note", "", 0, `"status":"replayed"`},
		{"unknown", "charge", "lose-reply", 5, "unknown"},
		{"not_applied", "charge", "fail-before", 2, "not made again"},
		// Sent, then its worker killed and its lease ended: unknown, as
		// the provider path answers it — never "fix the arguments".
		{"gone", "charge", "", 5, "unknown"},
	}
	write("1", v1)
	for _, c := range cases {
		extra := []string{"--config", cfg}
		if c.fault != "" {
			extra = append(extra, "--fault", c.fault)
		}
		if c.name == "gone" {
			worker := append([]string{workerCommand}, callArgs(db, "acme", c.name, c.tool, same, extra...)[1:]...)
			worker = append(worker, "--lease", "1s", "--die-at", "after-dispatch", "--die-how", "kill")
			if out, errText, code, signaled := asBinary(t, worker...); !signaled {
				t.Fatalf("set-up gone: the worker was not killed: exit %d %s%s", code, out, errText)
			}
			continue
		}
		cli(t, callArgs(db, "acme", c.name, c.tool, same, extra...)...)
	}
	time.Sleep(1200 * time.Millisecond) // the killed worker's lease ends
	write("2", v2)
	// The recorded version named explicitly is the same request too.
	if _, errText, code := cli(t, callArgs(db, "acme", "unknown", "charge", same, "--config", cfg, "--payload-version", "1")...); code != 5 {
		t.Fatalf("the recorded version named: exit %d, want 5 (unknown); %q", code, errText)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := showJSON(t, db, "acme", c.name)
			out, errText, code := cli(t, callArgs(db, "acme", c.name, c.tool, same, "--config", cfg)...)
			if code != c.code || !strings.Contains(out+errText, c.want) {
				t.Fatalf("same bytes after the change: exit %d, want %d with %q; %q %q", code, c.code, c.want, out, errText)
			}
			if c.code == 2 && showJSON(t, db, "acme", c.name) != before {
				t.Fatalf("a refused retry wrote to the operation:\nbefore %s\nafter  %s", before, showJSON(t, db, "acme", c.name))
			}
			// Other bytes under the key, and the old bytes under a new
			// key, are held to the tool's arguments as they are now.
			if _, errText, code := cli(t, callArgs(db, "acme", c.name, c.tool, `{"to":"y"}`, "--config", cfg)...); code != 2 || !strings.Contains(errText, "recipient") {
				t.Fatalf("other bytes: exit %d, want 2 naming the argument the tool takes now; %q", code, errText)
			}
			if _, errText, code := cli(t, callArgs(db, "acme", c.name+"-new", c.tool, same, "--config", cfg)...); code != 2 {
				t.Fatalf("old bytes under a new key: exit %d, want 2; %q", code, errText)
			}
			if _, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.name+"-new"); code == 0 {
				t.Fatalf("a refused new key was written: %q", errText)
			}
		})
	}
	// Bytes the tool refuses, against a ledger that does not exist yet:
	// refused, and no ledger file is made to look the key up.
	fresh := filepath.Join(dir, "fresh.db")
	if _, errText, code := cli(t, callArgs(fresh, "acme", "k", "note", same, "--config", cfg)...); code != 2 {
		t.Fatalf("against a new ledger: exit %d, want 2; %q", code, errText)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("a refused call made the ledger file: %v", err)
	}
	if n := deliveries(t, db, "acme", "gone"); n != 1 {
		t.Fatalf("gone sent again: %d deliveries, want 1", n)
	}
	if n := deliveries(t, db, "acme", "not_applied"); n != 0 {
		t.Fatalf("not_applied sent again with arguments the tool no longer takes: %d deliveries, want 0", n)
	}
}

// showJSON is ops show --json of one operation, its attempts included.
func showJSON(t *testing.T, db, tenant, key string) string {
	t.Helper()
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", tenant, "--json", "--key", key)
	if code != 0 {
		t.Fatalf("ops show %s: exit %d %q", key, code, errText)
	}
	return out
}
