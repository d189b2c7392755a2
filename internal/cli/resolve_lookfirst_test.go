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
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
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
		// have seen: one this very run found is refused, naming it and
		// its digest; bare, it confirms none; with the digest ops show
		// prints, the recorded "has it" is confirmed (no --check needed).
		{name: "has it found by this run, --against-finding: refused", key: "lf-2", extra: []string{"--against-finding"}, code: 2, stderr: []string{"provider check: ", "this run's provider check found the effect", "--against-finding="}, state: "unknown", sends: 1},
		{name: "has it recorded, bare --against-finding: refused", key: "lf-2", extra: []string{"--against-finding"}, code: 2, stderr: []string{"bare --against-finding confirms none", "--against-finding="}, state: "unknown", sends: 1},
		{name: "has it seen in the run before, --against-finding=DIGEST: written", key: "lf-2", extra: []string{"--against-finding=SHOWN"}, code: 0, state: "not_applied", sends: 2},
		{name: "cannot tell: the typed evidence decides", key: "lf-3", extra: []string{"--provider-db", filepath.Join(t.TempDir(), "missing.db")}, code: 0, stderr: []string{"cannot tell"}, state: "not_applied", sends: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			extra := append([]string{}, c.extra...)
			for i, e := range extra {
				if e == "--against-finding=SHOWN" {
					extra[i] = "--against-finding=" + shownDigest(t, db, c.key)
				}
			}
			out, errText, code := resolve(c.key, extra...)
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

// --check asks too, and --against-finding on the same command line
// confirms only a "has it" recorded before the run: the one --check has
// just found is refused (run again), as without --check. Before, one run
// of `--check --against-finding` marked it not applied and the next call
// sent a second delivery.
func TestCheckAgainstFindingRefusesTheHasItItJustFound(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "kc", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: exit %d", code)
	}
	resolve := func(flag string) (string, int) {
		_, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "kc", "--as", "not-applied",
			"--evidence", "INC", "--reason", "r", "--operator", "alice", "--check", flag)
		return errText, code
	}
	errText, code := resolve("--against-finding")
	d := digestIn(t, errText)
	if code != 2 || d == "" || !strings.Contains(errText, "--check") {
		t.Fatalf("first run: exit %d, want 2 and the command with its digest:\n%s", code, errText)
	}
	if n := deliveries(t, db, "acme", "kc"); n != 1 {
		t.Fatalf("%d deliveries", n)
	}
	if errText, code := resolve("--against-finding"); code != 2 || !strings.Contains(errText, "bare --against-finding confirms none") {
		t.Fatalf("second run, bare: exit %d, want 2:\n%s", code, errText)
	}
	if errText, code := resolve("--against-finding=" + d); code != 0 {
		t.Fatalf("third run (the finding seen, named): exit %d:\n%s", code, errText)
	}
}

// A stale "has it" naming one delivery does not confirm another: after a
// retry made a second delivery (its reply lost too), --against-finding is
// refused until the operator has seen the new reference.
func TestAgainstFindingDoesNotConfirmANewDeliveryBehindAStaleHasIt(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	call := func(extra ...string) int {
		_, _, code := cli(t, callArgs(db, "acme", "ks", "send_notification", notifyArgs, extra...)...)
		return code
	}
	var d string
	resolve := func() (string, int) {
		_, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "ks", "--as", "not-applied",
			"--evidence", "INC", "--reason", "r", "--operator", "alice", "--against-finding="+d)
		return errText, code
	}
	if code := call("--fault", "lose-reply"); code != 5 {
		t.Fatalf("setup: exit %d", code)
	}
	cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "ks")
	d = shownDigest(t, db, "ks")
	if errText, code := resolve(); code != 0 {
		t.Fatalf("first decision (seen): exit %d\n%s", code, errText)
	}
	if code := call("--fault", "lose-reply"); code != 5 {
		t.Fatalf("the retry: exit %d", code)
	}
	errText, code := resolve()
	t.Logf("after the second delivery: exit %d\n%s", code, errText)
	if code == 0 {
		t.Fatalf("--against-finding confirmed a delivery nobody was shown:\n%s", errText)
	}
}
