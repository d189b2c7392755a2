package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
)

// flatten runs cmd and returns its messages, batches opened, without
// feeding them to the model: the test chooses their order.
func flatten(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, flatten(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

func update(t *testing.T, m Model, msg tea.Msg) (Model, []tea.Msg) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), flatten(cmd)
}

func pick[T tea.Msg](msgs []tea.Msg) (T, int) {
	var zero T
	n := 0
	for _, msg := range msgs {
		if v, ok := msg.(T); ok {
			zero = v
			n++
		}
	}
	return zero, n
}

// The first page is read beside the counts, not after them: on unknown,
// the tab the counts pick whenever there is an unknown operation. If the
// counts pick another tab, the early page is dropped by its sequence
// number and the right one read. The watcher is asked for only once the
// first page is in.
func TestFirstPageStartsBesideTheCounts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		unknown     bool
		wantTab     model.State
		wantReloads int // pages read after the counts arrive
	}{
		{"unknown operations: the early page is the one shown", true, model.StateUnknown, 0},
		{"no unknown operation: the counts pick all, the early page is dropped", false, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t)
			l.task(t, "acme", "task-1", "Printer on fire")
			if tc.unknown {
				l.unknown(t, "acme", "notify-1", "oncall@acme.example")
			}
			m := New(config(l))
			defer func() { m.Close() }()
			initMsgs := flatten(m.Init())
			counts, n := pick[countsMsg](initMsgs)
			if n != 1 || len(initMsgs) != 1 {
				t.Fatalf("Init: %d counts of %d messages; want the counts alone (the watcher waits for the first page)", n, len(initMsgs))
			}
			// The window's size arrives before the counts: the page starts now.
			var msgs []tea.Msg
			m, msgs = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
			early, n := pick[pageMsg](msgs)
			if n != 1 || m.countsOK {
				t.Fatalf("before the counts: %d page reads (want 1), counts ok %v", n, m.countsOK)
			}
			m, msgs = update(t, m, counts)
			reload, n := pick[pageMsg](msgs)
			if n != tc.wantReloads {
				t.Fatalf("after the counts: %d page reads, want %d", n, tc.wantReloads)
			}
			if _, w := pick[watchMsg](msgs); w != 0 {
				t.Fatal("the watcher was opened before the first page arrived")
			}
			if got := tabStates[m.list.tab]; got != tc.wantTab {
				t.Fatalf("tab %q, want %q", got, tc.wantTab)
			}
			// The early page arrives: shown, or dropped as stale.
			m, msgs = update(t, m, early)
			watch, w := pick[watchMsg](msgs)
			if w != 1 || watch.Err != nil {
				t.Fatalf("the first page's arrival opened %d watchers (%v), want 1", w, watch.Err)
			}
			m, _ = update(t, m, watch) // the model holds it (and Close releases it)
			if m.list.loading != (tc.wantReloads > 0) {
				t.Fatalf("after the early page: loading %v", m.list.loading)
			}
			if tc.wantReloads > 0 {
				if len(m.list.rows) != 0 {
					t.Fatalf("the stale early page was shown: %d rows", len(m.list.rows))
				}
				m, msgs = update(t, m, reload)
				if _, w := pick[watchMsg](msgs); w != 0 {
					t.Fatal("a second page asked for the watcher again")
				}
			}
			// unknown: the one unknown operation; all: the one task.
			if len(m.list.rows) != 1 || m.list.loading {
				t.Fatalf("first page: %d rows, loading %v; want 1", len(m.list.rows), m.list.loading)
			}
			if tc.unknown && m.list.rows[0].State != model.StateUnknown {
				t.Fatalf("the unknown tab shows %s", m.list.rows[0].State)
			}
		})
	}
}
