package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A single-valued flag given twice used to take the last value silently:
// `call --key K --key Z` created Z. Every command refuses it with one line,
// exit 2, and writes nothing; `ops resolve --key` alone repeats.
func TestARepeatedSingleValuedFlagIsRefusedAndWritesNothing(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("once"))...); code != 0 {
		t.Fatal("setup call failed")
	}
	before := digest(t, db)
	other := filepath.Join(t.TempDir(), "other.db")
	for _, c := range []struct {
		name, flag string
		args       []string
	}{
		{"call --key twice", "--key", []string{"call", "--db", db, "--tenant", "acme", "--key", "K", "--key", "Z", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"call --tenant twice", "--tenant", []string{"call", "--db", db, "--tenant", "acme", "--tenant", "globex", "--key", "Z", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"call --db twice", "--db", []string{"call", "--db", other, "--db", db, "--tenant", "acme", "--key", "Z", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"call --db=X --db Y", "--db", []string{"call", "--db=" + other, "-db", db, "--tenant", "acme", "--key", "Z", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"call --json twice", "--json", []string{"call", "--db", db, "--json", "--json", "--tenant", "acme", "--key", "Z", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"ops list --tenant twice", "--tenant", []string{"ops", "list", "--db", db, "--tenant", "acme", "--tenant", "globex"}},
		{"ops show --key twice", "--key", []string{"ops", "show", "--db", db, "--tenant", "acme", "--key", "k", "--key", "z"}},
		{"sweep --tombstone-window twice", "--tombstone-window", []string{"sweep", "--db", db, "--tombstone-window", "720h", "--tombstone-window", "48h"}},
		{"tokens create --tenant twice", "--tenant", []string{"tokens", "create", "--db", db, "--tenant", "acme", "--tenant", "globex"}},
	} {
		out, errText, code := cli(t, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
			continue
		}
		line := oneErrorLine(t, c.name, errText)
		if !strings.HasPrefix(line, "retrysafe ") || !strings.Contains(line, c.flag+" was given more than once") {
			t.Errorf("%s: %q does not say %s was given more than once", c.name, line, c.flag)
		}
		if strings.Contains(c.name, "json") && !strings.Contains(out, `"class":"invalid"`) {
			t.Errorf("%s: stdout %q; want the refusal as JSON", c.name, out)
		}
	}
	if digest(t, db) != before {
		t.Error("a refused command changed the ledger")
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a refused call created %s: %v", other, err)
	}
	// ops resolve --key is a list.
	if out, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--key", "k2", "--applied", "--reason", "checked", "--dry-run"); code == 2 && strings.Contains(errText, "more than once") {
		t.Errorf("ops resolve --key twice: exit %d %s %s", code, out, errText)
	}
}

// A flag error names the command and spells the flag as the help does.
func TestFlagErrorsNameTheCommandAndSpellFlagsWithTwoDashes(t *testing.T) {
	db := newLedgerFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "--db", db, "--key"}, "retrysafe call: flag needs an argument: --key"},
		{[]string{"call", "--bogus"}, "retrysafe call: flag provided but not defined: --bogus"},
		{[]string{"ops", "list", "--db", db, "--limit", "x"}, `retrysafe ops list: invalid value "x" for flag --limit`},
		{[]string{"--db", db, "call", "--key", "k"}, "flags go after the command: retrysafe call --db"},
	} {
		_, errText, code := cli(t, c.args...)
		line := oneErrorLine(t, strings.Join(c.args, " "), errText)
		if code != 2 || !strings.Contains(line, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, line, c.want)
		}
	}
}

// The console refuses an operator name the other commands refuse (a
// bidirectional override, a control character, blank), before it opens
// the ledger or the terminal.
func TestTheConsoleRefusesAnOperatorNameThatIsNotPrintable(t *testing.T) {
	db := newLedgerFile(t)
	for _, name := range []string{"a\u202eb", "a\x1b[2Jb", "   ", ""} {
		out, errText, code := cli(t, "--db", db, "--operator", name, "--read-only")
		line := oneErrorLine(t, "console --operator", errText)
		if code != 2 || out != "" || !strings.Contains(line, "--operator") || strings.ContainsRune(line, '\u202e') {
			t.Errorf("--operator %q: exit %d, %q; want 2", name, code, line)
		}
	}
}
