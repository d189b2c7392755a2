package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// --against-finding names the "has it" findings it confirms, as an HTTP
// If-Match names a version: ops show, ops check and a bulk --dry-run
// print a digest of the ones they show, and a deciding run that finds
// others — another operator's check recorded a "has it" after this one
// looked — is refused whole, nothing written. It used to confirm any
// "has it" recorded before the run, seen or not: a second e-mail or
// payment behind a confirmation given for something else.

var againstDigest = regexp.MustCompile(`--against-finding=([0-9a-f]{8})\b`)

// digestIn is the digest an output offers (--against-finding=D), or "".
func digestIn(t *testing.T, out string) string {
	t.Helper()
	m := againstDigest.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return ""
	}
	for _, x := range m[1:] {
		if x[1] != m[0][1] {
			t.Fatalf("two digests offered (%s, %s):\n%s", m[0][1], x[1], out)
		}
	}
	return m[0][1]
}

func stateOf(t *testing.T, db, key string, extra ...string) string {
	t.Helper()
	out, errText, code := cli(t, append([]string{"ops", "show", "--db", db, "--tenant", "acme", "--key", key}, extra...)...)
	if code != 0 {
		t.Fatalf("ops show %s: exit %d %s", key, code, errText)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "state" {
			return f[1]
		}
	}
	t.Fatalf("ops show %s: no state:\n%s", key, out)
	return ""
}

func lost(t *testing.T, db string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, errText, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d %s", k, code, errText)
		}
	}
}

// Two operators, several keys: alice's dry run shows x's "has it" (y:
// cannot tell, the provider file was away); bob's check then finds y's;
// alice's --yes with the digest her dry run printed is refused, names y,
// and writes nothing — bare --against-finding too. Her next dry run
// prints another digest, which decides both.
func TestBulkAgainstFindingNamesTheHasItsItConfirms(t *testing.T) {
	db := newLedgerFile(t)
	lost(t, db, "x", "y")
	if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "x"); code != 0 {
		t.Fatalf("ops check x: exit %d", code)
	}
	pdb, moved := providerPath(db), providerPath(db)+".moved"
	if err := os.Rename(pdb, moved); err != nil {
		t.Fatal(err)
	}
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "x", "--key", "y", "--as", "not-applied",
		"--evidence", "INC-1", "--reason", "never sent", "--operator", "alice"}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	d1 := digestIn(t, out)
	if code != 0 || d1 == "" || !strings.Contains(out, "cannot tell") {
		t.Fatalf("dry run: exit %d, digest %q\n%s%s", code, d1, out, errText)
	}
	if err := os.Rename(moved, pdb); err != nil {
		t.Fatal(err)
	}
	if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "y", "--operator", "bob"); code != 0 {
		t.Fatalf("bob's ops check y: exit %d", code)
	}
	before := digest(t, db)
	for _, flag := range []string{"--against-finding=" + d1, "--against-finding"} {
		out, errText, code = cli(t, append(base, "--yes", flag)...)
		if code != 2 || !strings.Contains(errText, "y") || !strings.Contains(errText, "has it") || !strings.Contains(errText, "nothing was written") {
			t.Fatalf("--yes %s after bob's check: exit %d, want 2 naming y's new \"has it\"\n%s%s", flag, code, out, errText)
		}
		if flag != "--against-finding" && !strings.Contains(errText, "acme/y") {
			t.Errorf("--yes %s does not say which key got a \"has it\" since: %s", flag, errText)
		}
		if after := digest(t, db); after != before {
			t.Fatalf("--yes %s wrote something:\n%s%s", flag, out, errText)
		}
	}
	if s := stateOf(t, db, "x"); s != "unknown" {
		t.Fatalf("x is %s", s)
	}
	out, errText, code = cli(t, append(base, "--dry-run", "--json")...)
	d2 := digestIn(t, strings.ReplaceAll(out, `"against_finding_digest": "`, "--against-finding="))
	if code != 0 || d2 == "" || d2 == d1 {
		t.Fatalf("second dry run --json: exit %d, digest %q (first %q)\n%s%s", code, d2, d1, out, errText)
	}
	out, errText, code = cli(t, append(base, "--dry-run")...)
	if got := digestIn(t, out); got != d2 || !strings.Contains(out, "--yes") || !strings.Contains(out, "--db "+db) {
		t.Fatalf("second dry run: digest %q, want %q and the command to run\n%s%s", got, d2, out, errText)
	}
	out, errText, code = cli(t, append(base, "--yes", "--against-finding="+d2)...)
	if code != 0 || strings.Count(out, "written") != 2 {
		t.Fatalf("--yes --against-finding=%s: exit %d\n%s%s", d2, code, out, errText)
	}
}

// One key: ops show printed no "has it" (never checked); bob's check
// recorded one; alice's "not applied" or new key with --against-finding
// is refused and writes nothing. With the digest ops show prints then it
// is decided — and an old digest, after another lookup, is refused.
func TestOneKeyAgainstFindingNamesTheHasIt(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"not applied", []string{"ops", "resolve", "--as", "not-applied", "--evidence", "INC-1", "--reason", "never sent", "--operator", "alice"}, "not_applied"},
		{"supersede", []string{"ops", "supersede", "--reason", "resend", "--operator", "alice"}, "superseded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := newLedgerFile(t)
			lost(t, db, "s")
			cmd := append(append([]string{}, c.args[:2]...), append([]string{"--db", db, "--tenant", "acme", "--key", "s"}, c.args[2:]...)...)
			out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "s")
			if d := digestIn(t, out); d != "" || !strings.Contains(out, "not checked") {
				t.Fatalf("ops show before any check offers %q:\n%s", d, out)
			}
			if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "s", "--operator", "bob"); code != 0 {
				t.Fatalf("bob's ops check: exit %d", code)
			}
			before := digest(t, db)
			out, errText, code := cli(t, append(cmd, "--against-finding")...)
			if code != 2 || !strings.Contains(errText, "has it") || !strings.Contains(errText, "nothing was written") {
				t.Fatalf("bare --against-finding after bob's check: exit %d, want 2\n%s%s", code, out, errText)
			}
			if digest(t, db) != before || stateOf(t, db, "s") != "unknown" {
				t.Fatalf("bare --against-finding wrote something:\n%s%s", out, errText)
			}
			out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "s")
			d1 := digestIn(t, out)
			if d1 == "" || !strings.Contains(out, c.args[1]) {
				t.Fatalf("ops show with a \"has it\" offers no digest and command:\n%s", out)
			}
			// Bob looks again: a new "has it" (another lookup) nobody showed alice.
			if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "s", "--operator", "bob"); code != 0 {
				t.Fatalf("bob's second check: exit %d", code)
			}
			before = digest(t, db)
			out, errText, code = cli(t, append(cmd, "--against-finding="+d1)...)
			if code != 2 || !strings.Contains(errText, "acme/s") || !strings.Contains(errText, "since") {
				t.Fatalf("--against-finding=%s after another lookup: exit %d, want 2\n%s%s", d1, code, out, errText)
			}
			if digest(t, db) != before {
				t.Fatalf("an old digest wrote something:\n%s%s", out, errText)
			}
			out, _, _ = cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "s", "--operator", "alice")
			d2 := digestIn(t, out)
			if d2 == "" || d2 == d1 {
				t.Fatalf("ops check offers %q (ops show's was %q):\n%s", d2, d1, out)
			}
			out, errText, code = cli(t, append(cmd, "--against-finding="+d2)...)
			if code != 0 {
				t.Fatalf("--against-finding=%s: exit %d\n%s%s", d2, code, out, errText)
			}
			if s := stateOf(t, db, "s"); s != c.want {
				t.Fatalf("s is %s, want %s", s, c.want)
			}
		})
	}
}

// A "has it" a one-key run's own check finds is refused as before; the
// refusal names it with its digest and the command that confirms it.
func TestOneKeyRefusalOffersTheDigest(t *testing.T) {
	db := newLedgerFile(t)
	lost(t, db, "s")
	cmd := []string{"ops", "supersede", "--db", db, "--tenant", "acme", "--key", "s", "--reason", "resend", "--new-key", "s2"}
	out, errText, code := cli(t, cmd...)
	d := digestIn(t, errText)
	if code != 2 || d == "" || !strings.Contains(errText, "ops supersede --db "+db) {
		t.Fatalf("supersede of a delivered operation: exit %d, digest %q\n%s%s", code, d, out, errText)
	}
	if out, errText, code := cli(t, append(cmd, "--against-finding="+d)...); code != 0 || strings.TrimSpace(out) != "s2" {
		t.Fatalf("--against-finding=%s: exit %d %s%s", d, code, out, errText)
	}
}

// The flag: bare or =DIGEST, once; a digest is what the commands print.
func TestAgainstFindingFlagForms(t *testing.T) {
	db := newLedgerFile(t)
	lost(t, db, "s")
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "s", "--as", "not-applied", "--evidence", "INC", "--reason", "r"}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--against-finding=zz"}, "digest"},
		{[]string{"--against-finding", "--against-finding=0123abcd"}, "more than once"},
		{[]string{"--against-finding=0123abcd", "--against-finding=0123abcd"}, "more than once"},
	} {
		before := digest(t, db)
		_, errText, code := cli(t, append(base, c.flags...)...)
		if code != 2 || !strings.Contains(errText, c.want) || digest(t, db) != before {
			t.Errorf("%v: exit %d %q; want 2 saying %q, nothing written", c.flags, code, errText, c.want)
		}
	}
}

// The same on PostgreSQL: a digest from a dry run, another lookup, the
// --yes refused whole.
func TestBulkAgainstFindingDigestOnPostgreSQL(t *testing.T) {
	url := pgURL(t)
	pdb := filepath.Join(t.TempDir(), "provider.db")
	for _, k := range []string{"x", "y"} {
		if _, errText, code := cli(t, callArgs(url, "acme", k, "send_notification", notifyArgs, "--provider-db", pdb, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d %s", k, code, errText)
		}
	}
	base := []string{"ops", "resolve", "--db", url, "--provider-db", pdb, "--tenant", "acme", "--key", "x", "--key", "y", "--as", "not-applied",
		"--evidence", "INC-1", "--reason", "never sent", "--operator", "alice"}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	d1 := digestIn(t, out)
	if code != 0 || d1 == "" {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	if _, _, code := cli(t, "ops", "check", "--db", url, "--provider-db", pdb, "--tenant", "acme", "--key", "y", "--operator", "bob"); code != 0 {
		t.Fatalf("bob's check: exit %d", code)
	}
	out, errText, code = cli(t, append(base, "--yes", "--against-finding="+d1)...)
	if code != 2 || !strings.Contains(errText, "acme/y") {
		t.Fatalf("--yes with the old digest: exit %d\n%s%s", code, out, errText)
	}
	for _, k := range []string{"x", "y"} {
		if s := stateOf(t, url, k); s != "unknown" {
			t.Fatalf("%s is %s after a refused run", k, s)
		}
	}
	out, _, _ = cli(t, append(base, "--dry-run")...)
	d2 := digestIn(t, out)
	if out, errText, code = cli(t, append(base, "--yes", "--against-finding="+d2)...); code != 0 {
		t.Fatalf("--yes --against-finding=%s: exit %d\n%s%s", d2, code, out, errText)
	}
}

// shownDigest is the --against-finding=DIGEST ops show offers for
// acme/key (the "has it" it shows); the test fails if it offers none.
func shownDigest(t *testing.T, db, key string) string {
	t.Helper()
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key)
	d := digestIn(t, out)
	if code != 0 || d == "" {
		t.Fatalf("ops show %s offers no digest: exit %d\n%s%s", key, code, out, errText)
	}
	return d
}
