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

// The first frame's queries come first: Init reads the counts alone, the
// first page follows them, and the watcher (its own connection) is asked
// for only once the first page is in — once, whatever reloads follow. If
// the counts fail, no page can start, and the watcher is asked for then.
func TestTheWatcherWaitsForTheFirstPage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		unknown bool
		wantTab model.State
	}{
		{"unknown operations: the unknown tab", true, model.StateUnknown},
		{"no unknown operation: all", false, ""},
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
				t.Fatalf("Init: %d counts of %d messages; want the counts alone", n, len(initMsgs))
			}
			var msgs []tea.Msg
			m, msgs = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
			if len(msgs) != 0 {
				t.Fatalf("the window's size before the counts: %d messages, want none (the counts pick the tab)", len(msgs))
			}
			m, msgs = update(t, m, counts)
			page, n := pick[pageMsg](msgs)
			if n != 1 || len(msgs) != 1 {
				t.Fatalf("after the counts: %d page reads of %d messages; want the page alone", n, len(msgs))
			}
			if got := tabStates[m.list.tab]; got != tc.wantTab {
				t.Fatalf("tab %q, want %q", got, tc.wantTab)
			}
			m, msgs = update(t, m, page)
			watch, w := pick[watchMsg](msgs)
			if w != 1 || watch.Err != nil {
				t.Fatalf("the first page's arrival asked for %d watchers (%v), want 1", w, watch.Err)
			}
			m, _ = update(t, m, watch) // the model holds it (and Close releases it)
			if len(m.list.rows) != 1 || m.list.loading {
				t.Fatalf("first page: %d rows, loading %v; want 1", len(m.list.rows), m.list.loading)
			}
			// A reload's page does not ask again.
			m, msgs = update(t, m, keyMsg("r"))
			for len(msgs) > 0 {
				if _, w := pick[watchMsg](msgs); w != 0 {
					t.Fatal("a later page asked for the watcher again")
				}
				var next []tea.Msg
				for _, msg := range msgs {
					var more []tea.Msg
					m, more = update(t, m, msg)
					next = append(next, more...)
				}
				msgs = next
			}
		})
	}
	t.Run("the counts fail: the watcher is asked for then", func(t *testing.T) {
		l := newLedger(t)
		m := New(config(l))
		defer func() { m.Close() }()
		m, _ = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
		var msgs []tea.Msg
		m, msgs = update(t, m, countsMsg{Seq: m.countsSeq, Err: model.Errorf(model.CodeUnavailable, "down")})
		watch, w := pick[watchMsg](msgs)
		if w != 1 {
			t.Fatalf("failed counts asked for %d watchers, want 1", w)
		}
		m, _ = update(t, m, watch)
	})
}
