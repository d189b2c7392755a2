package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --db that is no ledger — a text file, a directory, another
// application's SQLite file, /dev/null — is a setup error on every command:
// exit 2 and the reason. `call` said "internal … retry the same key later"
// (exit 1), and a runner retried forever.
func TestADBThatIsNoLedgerIsASetupErrorOnEveryCommand(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a ledger\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	if db, err := sql.Open("sqlite", foreign); err != nil {
		t.Fatal(err)
	} else if _, err := db.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{text, foreign, sub, os.DevNull} {
		for _, cmd := range [][]string{
			callArgs(target, "acme", "k", "create_support_task", taskArgs("x")),
			callArgs(target, "acme", "k", "send_notification", notifyArgs),
			append(callArgs(target, "acme", "k", "create_support_task", taskArgs("x")), "--json"),
			{"ops", "list", "--db", target},
			{"ops", "show", "--db", target, "--tenant", "acme", "--key", "k"},
			{"sweep", "--db", target},
		} {
			out, errText, code := cli(t, cmd...)
			line := oneErrorLine(t, strings.Join(cmd[:2], " ")+" "+target, errText)
			if code != 2 || strings.Contains(line, "internal") || strings.Contains(line, "retry the same key") {
				t.Errorf("%s --db %s: exit %d, %q (stdout %q); want exit 2 and the reason", cmd[0], target, code, line, out)
			}
		}
	}
}

// A replay of an applied external key reads the ledger only: it needs no
// provider file, so one that is missing does not refuse it. A new key
// through that missing file is still refused (nothing sent).
func TestAReplayNeedsNoProviderFile(t *testing.T) {
	db := newLedgerFile(t)
	out, _, code := cli(t, callArgs(db, "acme", "n1", "send_notification", notifyArgs)...)
	if code != 0 {
		t.Fatalf("setup call: exit %d %s", code, out)
	}
	if err := os.Rename(providerPath(db), providerPath(db)+".away"); err != nil {
		t.Fatal(err)
	}
	out, errText, code := cli(t, callArgs(db, "acme", "n1", "send_notification", notifyArgs)...)
	if code != 0 || parseCallLine(t, out).Status != "replayed" {
		t.Errorf("replay without the provider file: exit %d %s %s; want a replay", code, out, errText)
	}
	if _, err := os.Stat(providerPath(db)); !os.IsNotExist(err) {
		t.Errorf("the replay created a provider file: %v", err)
	}
	if _, errText, code := cli(t, callArgs(db, "acme", "n2", "send_notification", notifyArgs)...); code != 2 || !strings.Contains(errText, "not there") {
		t.Errorf("a new key without the provider file: exit %d %s; want 2", code, errText)
	}
}
