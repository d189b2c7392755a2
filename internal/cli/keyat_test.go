package cli

import (
	"strings"
	"testing"
)

// --key KEY@VERSION pins a version only where that reading is the one
// that names an operation: a suffix that is not @<digits> is part of the
// key, and when both readings exist the decision is refused as ambiguous
// (--expect-version names the key whole). Before, --key job@2 decided
// job, and mail@x.com could not be resolved at all.
func TestKeyAtVersionIsReadAsTheOperationThatExists(t *testing.T) {
	db := newLedgerFile(t)
	for _, k := range []string{"job", "job@2", "mail@x.com", "order-8@2", "hint@1"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	state := func(key string) string {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key, "--json")
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", key, code, errText)
		}
		i := strings.Index(out, `"state": "`)
		return strings.SplitN(out[i+len(`"state": "`):], `"`, 2)[0]
	}
	resolve := func(extra ...string) (string, string, int) {
		return cli(t, append([]string{"ops", "resolve", "--db", db, "--tenant", "acme", "--as", "applied",
			"--evidence", "sbx_1", "--reason", "r"}, extra...)...)
	}
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		stderr  string
		applied string // the key decided ("" none)
	}{
		{name: "both readings exist: ambiguous", args: []string{"--key", "job@2"}, code: 2, stderr: "--expect-version"},
		{name: "both readings exist, several keys: ambiguous", args: []string{"--key", "job@2", "--key", "mail@x.com", "--yes"}, code: 2, stderr: "ambiguous"},
		{name: "not @digits: part of the key", args: []string{"--key", "mail@x.com"}, code: 0, applied: "mail@x.com"},
		{name: "only the whole key exists", args: []string{"--key", "order-8@2"}, code: 0, applied: "order-8@2"},
		{name: "--expect-version names the key whole", args: []string{"--key", "job@2", "--expect-version", "2"}, code: 0, applied: "job@2"},
		{name: "only the split reading exists", args: []string{"--key", "job@2@2"}, code: 2, stderr: "changed since you looked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := map[string]string{}
			for _, k := range []string{"job", "job@2", "mail@x.com", "order-8@2"} {
				before[k] = state(k)
			}
			out, errText, code := resolve(c.args...)
			if code != c.code || !strings.Contains(errText+out, c.stderr) {
				t.Fatalf("exit %d (want %d)\n%s%s", code, c.code, out, errText)
			}
			for k, was := range before {
				now := state(k)
				if k == c.applied && now != "applied" {
					t.Fatalf("%s is %s, want applied", k, now)
				}
				if k != c.applied && now != was {
					t.Fatalf("%s changed %s → %s", k, was, now)
				}
			}
		})
	}
	// ops check's hint for a key with @ pins the version with
	// --expect-version: pasted, it decides that key and no other.
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "hint@1")
	if code != 0 || !strings.Contains(out, "--key hint@1 --expect-version 2 ") {
		t.Fatalf("ops check: exit %d\n%s%s", code, out, errText)
	}
}
