package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// hostile retitles and clears the terminal, then a C1 CSI and a bidi
// override.
const hostile = "\x1b]0;pwned\x07\x1b[2J pay \u009b31m \u202Eexe.txt"

// rawInert fails when the raw view (the colour profile is ASCII, so the
// console itself writes no escape) holds anything a terminal acts on.
func rawInert(t *testing.T, what string, h *harness) {
	t.Helper()
	for _, r := range h.m.View() {
		if textsafe.Unsafe(r) && r != '\n' {
			t.Fatalf("%s: the view holds %U:\n%s", what, r, h.m.View())
		}
	}
}

func TestHostileTextReachesTheScreenInert(t *testing.T) {
	l := newLedger(t)
	l.task(t, "acme", "evil-task", hostile)
	// A decision with hostile words, as an older retrysafe could have
	// stored it (today's validation refuses them), and a hostile error.
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "evil-task")
		if err != nil {
			return err
		}
		if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: op.Fingerprint,
			Error: hostile, WorkerID: "w", StartedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "mallory\x1b[8m", Action: model.ActionMarkApplied,
			FromState: op.State, ToState: op.State, FromVersion: op.Version, Reason: hostile, Evidence: "ref\u2067\xff", At: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 120, 40)
	rawInert(t, "list", h)
	h.contains(`\x1b]0;pwned`)
	h.keys("enter")
	rawInert(t, "detail", h)
	if v := h.view(); !strings.Contains(v, `mallory\x1b[8m`) || !strings.Contains(v, `\u202e`) {
		t.Fatalf("detail does not show the escapes visibly:\n%s", v)
	}
}
