package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The audit log lists every decision newest first, filters by action,
// operator and tenant, and opens a decision's operation; esc walks back.
func TestAuditLogListsFiltersAndOpens(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("D")
	h.contains("Audit log", "3 decisions", "acme/notify-contra", "initech/notify-settled", "globex/notify-super")
	v := h.view()
	if strings.Index(v, "notify-contra") > strings.Index(v, "notify-settled") || strings.Index(v, "notify-settled") > strings.Index(v, "notify-super") {
		t.Fatalf("not newest first:\n%s", v)
	}
	h.keys("/")
	h.typeText("action:applied")
	h.keys("enter")
	h.contains("1 decision", `filter "action:applied"`, "initech/notify-settled")
	h.lacks("notify-contra", "notify-super")
	h.keys("enter")
	h.contains("initech / notify-settled", "APPLIED")
	h.keys("esc")
	h.contains("Audit log", "initech/notify-settled")
	h.keys("esc") // clears the filter
	h.contains("3 decisions")
	h.keys("/")
	h.typeText("operator:nobody")
	h.keys("enter")
	h.contains("No decisions match.")
	h.keys("esc", "/")
	h.typeText("colour:red")
	h.keys("enter")
	h.contains("Audit filter: unknown filter")
	h.keys("esc") // leaves the field; the filter is unchanged
	h.contains("3 decisions")
	h.keys("esc", "esc") // the first clears the banner
	h.lacks("Audit log")
}

// At 80 columns the audit log still shows who, what and why on one line.
func TestAuditLogAt80Columns(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.keys("D")
	h.contains("bob", "acme/notify-contra", "→ not_applied", "screenshot 42")
	for _, l := range strings.Split(h.view(), "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Fatalf("line of %d cells: %q", w, l)
		}
	}
}

// What an operator typed reaches the audit log's screen only through the
// sanitizer: no escape sequence from a stored reason gets to the terminal.
func TestAuditLogShowsStoredTextSanitized(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "acme", "k1", "a@acme.example")
	// Written below the decision rule (which refuses control characters
	// today): a ledger from an older version, or another writer.
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "k1")
		if err != nil {
			return err
		}
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "eve\x1b[2J", Action: model.ActionMarkApplied,
			Reason: "ok\x1b]52;c;aGVsbG8=\x07", Evidence: "sbx_1", FromState: model.StateUnknown, ToState: model.StateApplied, FromVersion: 2})
	})
	if err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 120, 30)
	h.keys("D")
	if v := h.m.View(); strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x1b]52") {
		t.Fatalf("a stored escape sequence reached the screen: %q", v)
	}
	h.contains("eve")
}
