package ui

import (
	"context"
	"database/sql"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// zalgoPair is two operations whose keys draw the same: E's key stacks ten
// combining acute accents (the screen keeps three and writes the rest as
// \u0301), F's key is E's as drawn — three marks, then the escapes as
// literal text. E was never sent (its worker died after its claim, a
// sweep made it unknown); F's provider has it (its reply was lost).
func zalgoPair(t *testing.T) (l *ledger, e, f string) {
	t.Helper()
	e = "e" + strings.Repeat("\u0301", 10) + "Z"
	f = "e" + strings.Repeat("\u0301", 3) + strings.Repeat(`\u0301`, 7) + "Z"
	l = newLedger(t)
	l.unknown(t, "acme", "F-KEY", "F-has-it@x")
	l.inFlight(t, "acme", "E-KEY", "E-nothing@x")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Such keys are refused now (model.ValidateIdentity); a ledger written
	// before that may hold them.
	db, err := sql.Open("sqlite", "file:"+l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for old, key := range map[string]string{"E-KEY": e, "F-KEY": f} {
		if _, err := db.Exec(`UPDATE operations SET op_key = ? WHERE tenant = 'acme' AND op_key = ?`, key, old); err != nil {
			t.Fatal(err)
		}
	}
	if st := l.get(t, "acme", e).Operation.State; st != model.StateUnknown {
		t.Fatalf("setup: E is %s", st)
	}
	return l, e, f
}

// selectArgs moves the list's cursor to the row whose arguments hold want.
func selectArgs(t *testing.T, h *harness, want string) {
	t.Helper()
	for i := 0; ; i++ {
		if op, ok := h.m.list.selected(); ok && strings.Contains(string(op.Args), want) {
			return
		}
		if i > 30 {
			t.Fatalf("no row holds %q:\n%s", want, h.view())
		}
		h.keys("down")
	}
}

// The console names an operation by its stored tenant and key, never by
// the text drawn for it: a key's drawn form can be another operation's
// key. Marking E not applied (its detail open, E's arguments on screen)
// wrote the decision on F — whose provider has it — and F's next call
// delivered again.
func TestTheConsoleDecidesOnTheStoredKeyNotTheDrawnOne(t *testing.T) {
	l, e, f := zalgoPair(t)
	h := open(t, config(l), 120, 40)
	selectArgs(t, h, "E-nothing")
	if op, _ := h.m.list.selected(); op.Key != e {
		t.Fatalf("the row holds key %q, stored %q", op.Key, e)
	}
	h.keys("enter")
	h.contains("E-nothing@x")
	h.lacks("F-has-it@x")
	h.keys("n")
	h.typeText("worker died before sending")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter", "y")
	if st := l.get(t, "acme", e).Operation.State; st != model.StateNotApplied {
		t.Fatalf("E is %s, want not_applied:\n%s", st, h.view())
	}
	if st := l.get(t, "acme", f).Operation.State; st != model.StateUnknown {
		t.Fatalf("F is %s, want unknown (the decision went to F)", st)
	}
}

// Copying a row's key copies the stored key, and the command copied names
// it (shell-quoted), not its drawn form.
func TestCopyingAKeyCopiesTheStoredKey(t *testing.T) {
	l, e, _ := zalgoPair(t)
	var clip strings.Builder
	cfg := config(l)
	cfg.Clipboard = &clip
	h := open(t, cfg, 120, 40)
	selectArgs(t, h, "E-nothing")
	h.keys("y")
	if want := osc52(e); clip.String() != want {
		t.Fatalf("copied %q, want the stored key %q", clip.String(), want)
	}
	clip.Reset()
	h.keys("Y")
	if want := textsafe.ShellWord(e); !strings.Contains(decodeOSC52(t, clip.String()), "--key "+want) {
		t.Fatalf("copied command %q lacks --key %s", decodeOSC52(t, clip.String()), want)
	}
}

func decodeOSC52(t *testing.T, s string) string {
	t.Helper()
	b64 := strings.TrimSuffix(strings.TrimPrefix(s, "\x1b]52;c;"), "\a")
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return string(b)
}

// The stored key is drawn through the one sanitizer everywhere it shows:
// the list, the detail, the decision's form and its confirmation, the
// banner after the write — never the stack of ten marks.
func TestAStoredKeyIsDrawnInert(t *testing.T) {
	l, _, _ := zalgoPair(t)
	h := open(t, config(l), 120, 40)
	stacked := strings.Repeat("\u0301", textsafe.MaxMarks+1)
	check := func(what string) {
		t.Helper()
		if v := h.view(); strings.Contains(v, stacked) {
			t.Fatalf("%s draws a stack of marks:\n%s", what, v)
		}
	}
	check("list")
	selectArgs(t, h, "E-nothing")
	h.keys("enter")
	check("detail")
	h.contains(`\u0301`)
	h.keys("n")
	check("form")
	h.typeText("worker died before sending")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	check("confirmation")
	h.keys("y")
	check("banner")
	h.keys("esc", "t")
	check("tenant picker")
}

// "a" on an operation whose provider reference is hostile pre-fills the
// evidence from the stored reference, as ops resolve writes it
// (reconcile.RefEvidence: escapes written out, bounded), and the decision
// stores exactly that; the form draws it inert.
func TestMarkAppliedPrefillsTheStoredReference(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "notify-1", "oncall@acme.example")
	op, err := l.st.Get(context.Background(), "acme", "notify-1")
	if err != nil {
		t.Fatal(err)
	}
	ref := "sbx_\x1b[2J\x1b]0;pwned\x07e" + strings.Repeat("\u0301", 6) + "\u202e" + strings.Repeat("R", 300)
	testledger.Lookups{Worker: "w", Ref: ref, At: func(int) time.Time { l.clock.Advance(time.Minute); return l.clock.Now().UTC() }}.
		Record(t, l.st, op, model.FindingHasIt)
	h := open(t, config(l), 120, 40)
	selectOp(t, h, "acme/notify-1")
	h.keys("a")
	want := reconcile.RefEvidence(ref)
	if got := h.m.action.value("Evidence"); got != want {
		t.Fatalf("evidence pre-filled %q, want %q", got, want)
	}
	rawInert(t, "form", h)
	h.keys("tab")
	h.typeText("provider has it")
	h.keys("enter", "y")
	d := l.get(t, "acme", "notify-1")
	if n := len(d.Decisions); n != 1 || d.Decisions[0].Evidence != want {
		t.Fatalf("decisions %+v, want evidence %q:\n%s", d.Decisions, want, h.view())
	}
}
