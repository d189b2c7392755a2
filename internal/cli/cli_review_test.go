package cli

import (
	"context"
	"errors"
	"github.com/retrysafe/retrysafe/config"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// Flags that make no sense are refused before the ledger is opened: exit 2
// and no file created, like every other bad input.
func TestCallRefusesBadTimingAndProviderFlagsBeforeCreatingTheLedger(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		extra []string
	}{
		{"zero timeout", []string{"--timeout", "0s"}},
		{"negative timeout", []string{"--timeout", "-1s"}},
		{"zero lease", []string{"--lease", "0s"}},
		{"provider file in a missing directory", []string{"--provider-db", filepath.Join(dir, "nowhere", "p.db")}},
	}
	for _, c := range cases {
		db := filepath.Join(dir, "never.db")
		out, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, c.extra...)...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
		}
		oneErrorLine(t, c.name, errText)
		for _, p := range []string{db, providerPath(db)} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: a refused call created %s", c.name, p)
			}
		}
	}
}

// `ops check` must not answer from a provider file it just created: an empty
// lookup there would read as "nothing was sent".
func TestOpsCheckRefusesAMissingProviderFile(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	elsewhere := filepath.Join(t.TempDir(), "other.provider.db")
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--provider-db", elsewhere)
	if code != 2 || out != "" || !strings.Contains(oneErrorLine(t, "check", errText), "cannot tell") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a line about the provider file", code, out, errText)
	}
	if _, err := os.Stat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ops check created %s", elsewhere)
	}
	out, _, code = cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
	if code != 0 || !strings.Contains(out, "delivered") {
		t.Errorf("check beside the ledger: exit %d, %q", code, out)
	}
}

// The console opens the provider only to ask it: a ledger copied without
// its provider file (or pointed at the wrong --provider-db) gets "cannot
// tell" from every check, and no file is created — asking a new, empty
// provider store would answer "no delivery", a false reason to mark the
// operation not applied.
func TestTheConsoleNeverCreatesAProviderStoreToAskIt(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	copied := filepath.Join(t.TempDir(), "copy.db")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, ledger, providerDB string }{
		{"a copied ledger", copied, ""},
		{"a wrong --provider-db", db, filepath.Join(t.TempDir(), "wrong.provider.db")},
	} {
		l, err := openForLookups(c.ledger, c.providerDB, config.Default(), store.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, ev, err := l.Svc.Check(context.Background(), "acme", "k")
		l.Close()
		if err == nil || !strings.Contains(err.Error(), "cannot tell") || ev.Found || strings.Contains(ev.Detail, "no delivery") {
			t.Errorf("%s: check = %+v, %v; want cannot tell", c.name, ev, err)
		}
		want := c.providerDB
		if want == "" {
			want = providerPath(c.ledger)
		}
		if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: asking created %s", c.name, want)
		}
	}
	// With the right file, the same check finds the delivery.
	l, err := openForLookups(db, "", config.Default(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ev, err := l.Svc.Check(context.Background(), "acme", "k"); err != nil || !ev.Found {
		t.Fatalf("check beside the ledger: %+v, %v", ev, err)
	}
}

// A ledger copied without its provider file must not get a new, empty one
// from a command that dispatches (sweep, a call, serve): every later lookup
// of its earlier operations would then answer an authoritative "has
// nothing", and triage and the console's review would propose marking
// delivered e-mails not applied. Those commands refuse (exit 2, nothing
// created); a local call still works, and triage still cannot tell.
func TestADispatchingCommandNeverCreatesAnEmptyProviderFileBesideHistory(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	copied := filepath.Join(t.TempDir(), "copy.db")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"sweep", []string{"sweep", "--db", copied}},
		{"an external call", callArgs(copied, "acme", "k2", "send_notification", notifyArgs)},
	}
	for _, c := range cases {
		_, errText, code := cli(t, c.args...)
		if code == 0 || !strings.Contains(errText, "not there") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal naming the missing provider file", c.name, code, errText)
		}
		if _, err := os.Stat(providerPath(copied)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s created %s beside a ledger with history", c.name, providerPath(copied))
		}
	}
	if _, errText, code := cli(t, callArgs(copied, "acme", "t", "create_support_task", taskArgs("local"))...); code != 0 {
		t.Errorf("a local call on the copy: exit %d, %s", code, errText)
	}
	out, _, code := cli(t, "triage", "--db", copied, "--json")
	if code == 0 || strings.Contains(out, `"kind": "has_nothing"`) || !strings.Contains(out, `"kind": "cannot_tell"`) {
		t.Errorf("triage on the copy: exit %d, %s; want cannot tell, never has nothing", code, out)
	}
	// The right file beside the original still dispatches.
	if _, errText, code := cli(t, callArgs(db, "acme", "k3", "send_notification", notifyArgs)...); code != 0 {
		t.Errorf("a call beside its provider file: exit %d, %s", code, errText)
	}
}
