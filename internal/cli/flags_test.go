package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// --fault and --provider belong to external tools: on a local tool they
// were silently ignored. Refused, exit 2, nothing written.
func TestACallOfALocalToolRefusesExternalOnlyFlags(t *testing.T) {
	db := newLedgerFile(t)
	before := digest(t, db)
	for _, extra := range [][]string{{"--fault", "reject"}, {"--fault", "lose-reply"}, {"--provider", "sandbox-idem"}} {
		out, errText, code := cli(t, callArgs(db, "acme", "loc", "create_support_task", taskArgs("x"), extra...)...)
		line := oneErrorLine(t, extra[0], errText)
		if code != 2 || out != "" || !strings.Contains(line, extra[0]) || !strings.Contains(line, "local") {
			t.Errorf("local call with %v: exit %d, %q %q; want 2 naming the flag", extra, code, out, line)
		}
	}
	if digest(t, db) != before {
		t.Error("a refused call changed the ledger")
	}
}

// tokens create --json and tokens list --json write created_at alike (the
// ledger keeps milliseconds; create printed nanoseconds it never stored).
func TestTokensCreateAndListWriteTheSameCreatedAt(t *testing.T) {
	db := newLedgerFile(t)
	out, errText, code := cli(t, "tokens", "create", "--db", db, "--tenant", "acme", "--json")
	if code != 0 {
		t.Fatalf("tokens create: exit %d %s", code, errText)
	}
	var created struct {
		Record struct {
			CreatedAt string `json:"created_at"`
		} `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatal(err)
	}
	out, _, _ = cli(t, "tokens", "list", "--db", db, "--json")
	var listed []struct {
		CreatedAt string `json:"created_at"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("tokens list: %s %v", out, err)
	}
	if created.Record.CreatedAt != listed[0].CreatedAt {
		t.Errorf("created_at: create says %s, list says %s", created.Record.CreatedAt, listed[0].CreatedAt)
	}
}

// The help tells the truth: ops list's --finding selects by what the
// FINDING column shows (the binding finding when an earlier one binds), and
// ops's exit 2 does not promise "nothing was written" where a check
// records its finding or a bulk --yes keeps what it wrote.
func TestOpsHelpSaysWhatExitTwoWrites(t *testing.T) {
	out, _, _ := cli(t, "ops", "list", "-h")
	if strings.Count(out, "Usage:") != 1 || strings.Contains(out, "whose latest provider finding") || !strings.Contains(out, "binds") {
		t.Errorf("ops list -h:\n%s", out)
	}
	for _, cmd := range [][]string{{"ops", "-h"}, {"ops", "resolve", "-h"}, {"ops", "check", "-h"}} {
		out, _, _ := cli(t, cmd...)
		i := strings.Index(out, "\n  2  ")
		if i < 0 {
			t.Errorf("%v -h: no exit 2 line", cmd)
			continue
		}
		line := out[i:]
		if j := strings.Index(line[1:], "\n"); j > 0 {
			line = line[:j+1]
		}
		if strings.Contains(line, "nothing was written") || !strings.Contains(line, "finding") {
			t.Errorf("%v: exit 2 says %q", cmd, line)
		}
	}
}

// --fault is the sandbox's: on a tool whose provider is a real HTTP API it
// was ignored and the real request sent (exit 0, "created") — a failure
// test that charged a payment. Refused, exit 2, nothing sent or written.
func TestACallToAnHTTPProviderRefusesASandboxFault(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"d_1"}`)
	}))
	defer srv.Close()
	cfg, tools := triageServeConfig(t, strings.TrimPrefix(srv.URL, "http://"), 1)
	db := newLedgerFile(t)
	before := digest(t, db)
	for _, fault := range []string{"reject", "lose-reply", "delay=1s"} {
		out, errText, code := cli(t, append(callArgs(db, "acme", "f-"+fault, tools[0], `{"to":"a@x","body":"b"}`, "--fault", fault), "--config", cfg)...)
		line := oneErrorLine(t, "--fault", errText)
		if code != 2 || out != "" || !strings.Contains(line, "--fault") || !strings.Contains(line, "sandbox") {
			t.Errorf("--fault %s on an http provider: exit %d, %q %q; want 2 naming the flag", fault, code, out, line)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the provider was sent %d requests", n)
	}
	if digest(t, db) != before {
		t.Error("a refused call changed the ledger")
	}
}
