package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A one-key "not applied" asks the provider first, as the bulk path does
// (reconcile.LookFirst): the provider has the delivery, so the decision is
// refused and the next call replays nothing twice — without the look, it
// was written on the typed evidence and the next call sent a second
// delivery.
func TestOneKeyNotAppliedAsksTheProviderFirst(t *testing.T) {
	db := newLedgerFile(t)
	for _, k := range []string{"lf-1", "lf-2", "lf-3"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	resolve := func(key string, extra ...string) (string, string, int) {
		return cli(t, append([]string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", key, "--as", "not-applied",
			"--evidence", "INC-4471", "--reason", "never sent", "--operator", "alice"}, extra...)...)
	}
	cases := []struct {
		name, key string
		extra     []string
		code      int
		stderr    []string
		state     string
		sends     int // deliveries after the next call with the key
	}{
		{name: "has it: refused", key: "lf-1", code: 2, stderr: []string{"provider check: ", "the provider check found the effect", "--against-finding"}, state: "unknown", sends: 1},
		// --against-finding confirms only a finding the operator could
		// have seen: one this very run found is refused; run again, the
		// recorded "has it" is confirmed (no --check needed).
		{name: "has it found by this run, --against-finding: refused", key: "lf-2", extra: []string{"--against-finding"}, code: 2, stderr: []string{"provider check: ", "this run's provider check found the effect", "run the same command again"}, state: "unknown", sends: 1},
		{name: "has it seen in the run before, --against-finding: written", key: "lf-2", extra: []string{"--against-finding"}, code: 0, state: "not_applied", sends: 2},
		{name: "cannot tell: the typed evidence decides", key: "lf-3", extra: []string{"--provider-db", filepath.Join(t.TempDir(), "missing.db")}, code: 0, stderr: []string{"cannot tell"}, state: "not_applied", sends: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errText, code := resolve(c.key, c.extra...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errText)
			}
			for _, w := range c.stderr {
				if !strings.Contains(errText, w) {
					t.Fatalf("stderr lacks %q:\n%s", w, errText)
				}
			}
			show, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key)
			if !strings.Contains(show, "state") || !strings.Contains(show, c.state) {
				t.Fatalf("after: want %s\n%s", c.state, show)
			}
			if !strings.Contains(show, "lookup") {
				t.Fatalf("the finding was not recorded:\n%s", show)
			}
			cli(t, callArgs(db, "acme", c.key, "send_notification", notifyArgs)...)
			if n := deliveries(t, db, "acme", c.key); n != c.sends {
				t.Fatalf("%d deliveries after the next call, want %d", n, c.sends)
			}
		})
	}
}
