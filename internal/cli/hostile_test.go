package cli

// Hostile text: what agents and operators put into the ledger is kept
// faithfully, and never reaches a person's terminal as a control sequence.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// hostileSubject retitles and clears a terminal, then turns on a C1 CSI
// colour and reverses the rest of the line.
const hostileSubject = "\x1b]0;pwned\x07\x1b[2J pay \u009b31m \u202Eexe.txt\x7f"

// inert fails when out holds anything a terminal would act on.
func inert(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not UTF-8: %q", what, out)
	}
	for _, r := range out {
		if textsafe.Unsafe(r) && r != '\n' && r != '\t' {
			t.Errorf("%s: output holds %U: %q", what, r, out)
			return
		}
	}
}

// hostileLedger stores an operation with a hostile subject through `call`,
// and a decision with hostile words as an older retrysafe could have
// written it (today's validation refuses them at the door).
func hostileLedger(t *testing.T) string {
	t.Helper()
	db := newLedgerFile(t)
	args, _ := json.Marshal(map[string]string{"subject": hostileSubject})
	out, errText, code := cli(t, callArgs(db, "acme", "evil", "create_support_task", string(args))...)
	if code != 0 {
		t.Fatalf("call: exit %d %s %s", code, out, errText)
	}
	inert(t, "call stdout", out)
	st, err := sqlite.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "evil")
		if err != nil {
			return err
		}
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "mallory\x1b[8m", Action: model.ActionMarkApplied,
			FromState: op.State, ToState: op.State, FromVersion: op.Version, Reason: hostileSubject, Evidence: "ref\u2067x\u2069\xff", At: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestHostileTextIsShownInertlyAndKeptFaithfully(t *testing.T) {
	db := hostileLedger(t)
	for _, argv := range [][]string{
		{"ops", "list", "--db", db},
		{"ops", "list", "--db", db, "--json"},
		{"ops", "show", "--db", db, "--tenant", "acme", "--key", "evil"},
		{"ops", "show", "--db", db, "--tenant", "acme", "--key", "evil", "--json"},
		callArgs(db, "acme", "evil", "create_support_task", `{"subject":"other\u001b[2J"}`), // conflict: the message may quote
		callArgs(db, "acme", "evil", "create_support_task", `{"subject":"`+strings.ReplaceAll(hostileSubject, "\x1b", `\u001b`)+`"}`),
		{"ops", "show", "--db", db, "--tenant", "acme\x1b[2J", "--key", "evil"},
		{"ops", "list", "--db", db, "--tool", "\u009b2J"},
		{"ops", "resolve", "--db", db + "\x1b[2J", "--tenant", "acme", "--key", "evil", "--as", "applied", "--reason", "r"},
	} {
		out, errText, _ := cli(t, argv...)
		what := strings.Join(argv[:2], " ")
		inert(t, what+" stdout", out)
		inert(t, what+" stderr", errText)
	}
	// The text views show the escapes visibly.
	out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "evil")
	for _, want := range []string{`\x1b]0;pwned\x07\x1b[2J`, `\u009b31m`, `\u202eexe.txt\x7f`, `mallory\x1b[8m`, `ref\u2067x\u2069\xff`} {
		if !strings.Contains(out, want) {
			t.Errorf("ops show does not show %s visibly:\n%s", want, out)
		}
	}
	out, _, _ = cli(t, "ops", "list", "--db", db)
	if !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("ops list does not show the escape visibly:\n%s", out)
	}
	// JSON keeps the value: decoding gives back exactly what was stored.
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "evil", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Operation.Summary != strings.Join(strings.Fields(hostileSubject), " ") || len(d.Decisions) != 1 || d.Decisions[0].Reason != hostileSubject {
		t.Errorf("JSON does not decode to the stored text: summary %q, decisions %+v", d.Operation.Summary, d.Decisions)
	}
}

// Operator input with control characters, bidirectional controls or bytes
// that are not UTF-8 is refused before anything is written.
func TestOperatorInputWithControlsIsRefused(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	before := digest(t, db)
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "not-applied"}
	for _, c := range []struct{ name, flag, value string }{
		{"ESC in reason", "--reason", "checked\x1b[2J"},
		{"newline in reason", "--reason", "line one\nline two"},
		{"C1 in reason", "--reason", "ok\u009b"},
		{"bidi in evidence", "--evidence", "ticket \u202e42"},
		{"zero width in evidence", "--evidence", "tick\u200bet"},
		{"invalid UTF-8 in evidence", "--evidence", "ticket \xff"},
		{"BEL in operator", "--operator", "ann\x07"},
		{"bidi in operator", "--operator", "ann\u2066"},
	} {
		argv := append(append([]string{}, base...), "--reason", "provider has no record", "--evidence", "ticket 7", "--operator", "ann")
		argv = append(argv, c.flag, c.value) // the last occurrence wins
		out, errText, code := cli(t, argv...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
		}
		oneErrorLine(t, c.name, errText)
		inert(t, c.name, errText)
	}
	if digest(t, db) != before {
		t.Error("a refused decision changed the ledger")
	}
}
