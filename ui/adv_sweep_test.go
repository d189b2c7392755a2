package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// hostileLedger is the fixture plus hostile text in every field a person
// can see: wide keys and tenants at their length limit, escape sequences
// in the arguments, the provider's reference and a lookup's detail, an
// attempt's error, a decision's words (as an older retrysafe stored them),
// 10,000-character values and bytes that are not UTF-8.
func hostileLedger(t *testing.T) *ledger {
	t.Helper()
	l := fixture(t)
	long := strings.Repeat("界", 80) // its trace id "trace-"+key stays within 255 bytes
	wideTenant := strings.Repeat("租", model.MaxTenantLen)
	l.task(t, wideTenant, long, hostile+strings.Repeat("🦄", 900))
	l.unknown(t, "acme", "evil-"+strings.Repeat("é", 100), "x@y.example\x1b]52;c;cm0gLXJmIH4K\x07")
	op, err := l.st.Get(context.Background(), "acme", "notify-1")
	if err != nil {
		t.Fatal(err)
	}
	testledger.Lookups{Worker: "w\x9b2J" + strings.Repeat("ω", 300), Ref: "sbx_\x1b]8;;http://evil\x1b\\x\u202e" + strings.Repeat("R", 10000),
		Detail: func(f model.FindingKind) string { return hostile + "\xff\xfe" + strings.Repeat("D", 10000) },
		At:     func(int) time.Time { l.clock.Advance(time.Minute); return l.clock.Now().UTC() }}.
		Record(t, l.st, op, model.FindingHasIt, model.FindingCannotTell)
	err = l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "notify-2")
		if err != nil {
			return err
		}
		if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: op.Fingerprint,
			Error: hostile + strings.Repeat("E", 10000), WorkerID: "w", StartedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "mallory\x1b[8m" + strings.Repeat("M", 5000), Action: model.ActionMarkApplied,
			FromState: op.State, ToState: op.State, FromVersion: op.Version, Reason: hostile + strings.Repeat("r", 10000), Evidence: "ref\u2067\xff", At: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// checkFrame fails when the view is taller or wider than the terminal or
// holds anything a terminal acts on.
func checkFrame(t *testing.T, what string, h *harness, w, ht int) {
	t.Helper()
	raw := h.m.View()
	for _, r := range raw {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfffd {
			t.Errorf("%s at %dx%d: the view holds %U", what, w, ht, r)
			return
		}
	}
	lines := strings.Split(ansi.Strip(raw), "\n")
	if len(lines) > max(ht, 4) {
		t.Errorf("%s at %dx%d: %d lines:\n%s", what, w, ht, len(lines), ansi.Strip(raw))
	}
	for i, line := range lines {
		if lw := ansi.StringWidth(line); lw > max(w, 1) {
			t.Errorf("%s at %dx%d: line %d is %d cells: %q", what, w, ht, i, lw, line)
			return
		}
	}
}

// Every screen, on hostile data, at tiny, odd and huge sizes, and through
// a resize storm while it is open: never taller or wider than the
// terminal, never a raw control character, never a panic.
func TestAdvEveryScreenOnHostileDataAtEverySize(t *testing.T) {
	l := hostileLedger(t)
	cfg := config(l)
	cfg.Lab, cfg.LabScenarios = &lab.Runner{Exe: "/nonexistent"}, []lab.Scenario{{ID: "s", Name: "a scenario " + strings.Repeat("x", 300), Expected: "0 → 1"}}
	screens := []struct {
		name string
		keys []string
	}{
		{"list", nil},
		{"list-all", []string{"8"}},
		{"detail", []string{"enter"}},
		{"detail-end", []string{"enter", "G"}},
		{"detail-2", []string{"j", "enter", "G"}},
		{"detail-3", []string{"j", "j", "enter", "G"}},
		{"detail-check", []string{"enter", "c"}},
		{"form-a", []string{"a"}},
		{"form-n", []string{"n"}},
		{"form-n-2", []string{"j", "n"}},
		{"form-s", []string{"enter", "s"}},
		{"form-s-not-applied", []string{"3", "enter", "s"}},
		{"form-s-not-applied-2", []string{"3", "j", "enter", "s"}},
		{"review-s-not-applied", []string{"3", "enter", "s", "x", "enter", "enter"}},
		{"review", []string{"a", "x", "tab", "y", "enter"}},
		{"review-n", []string{"n", "x", "tab", "y", "enter"}},
		{"bulk-form", []string{"*", "n"}},
		{"bulk-review", []string{"*", "n", "x", "tab", "y", "enter"}},
		{"bulk-review-a", []string{"*", "a", "x", "tab", "y", "enter"}},
		{"review-by-finding", []string{"R"}},
		{"review-by-finding-2", []string{"R", "enter"}},
		{"audit", []string{"D"}},
		{"audit-search", []string{"D", "/", "x"}},
		{"help", []string{"?"}},
		{"help-end", []string{"?", "G"}},
		{"picker", []string{"t"}},
		{"lab", []string{"L"}},
		{"search", []string{"/", "x"}},
		{"command", []string{":"}},
		{"command-typed", []string{":", "t", "e", "n"}},
		{"copy-menu", []string{"enter", "y"}},
		{"sweep", []string{"S"}},
		{"sort", []string{"s", "s", "s"}},
		{"finding-filter", []string{"f"}},
	}
	sizes := [][2]int{{1, 1}, {20, 5}, {30, 8}, {40, 10}, {60, 20}, {80, 24}, {200, 60}}
	for _, sc := range screens {
		for _, size := range sizes {
			name := fmt.Sprintf("%s/%dx%d", sc.name, size[0], size[1])
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: panic %v", name, r)
					}
				}()
				h := open(t, cfg, size[0], size[1])
				defer h.m.Close()
				h.keys(sc.keys...)
				checkFrame(t, name, h, size[0], size[1])
				// A resize storm while the screen is open.
				for _, s2 := range [][2]int{{3, 2}, {200, 60}, {21, 6}, {59, 19}, {0, 0}, {80, 24}, {size[0], size[1]}} {
					h.send(tea.WindowSizeMsg{Width: s2[0], Height: s2[1]})
					checkFrame(t, name+fmt.Sprintf(" after resize to %dx%d", s2[0], s2[1]), h, s2[0], s2[1])
				}
			}()
		}
	}
}
