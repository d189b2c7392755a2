package ui

import (
	"context"
	"fmt"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// Live updates that put operations above the cursor keep the selection on
// its operation, and the position counter says where that page now starts
// (finding R2 D5).
func TestLiveInsertsAboveTheCursorKeepTheSelectionAndTheCounter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before int      // tasks in the ledger when the console opens
		down   int      // j presses
		sel    string   // the operation under the cursor
		insert int      // tasks another process then creates
		want   []string // the screen after the refresh
	}{
		{name: "first page, fewer new rows than a page", before: 10, down: 6, sel: "acme/task-04", insert: 3, want: []string{"4–10 of 13"}},
		{name: "first page, more new rows than a page", before: 10, down: 6, sel: "acme/task-04", insert: 10, want: []string{"11–17 of 20"}},
		{name: "second page", before: 20, down: 9, sel: "acme/task-11", insert: 3, want: []string{"11–17 of 23"}},
		{name: "second page, many new rows", before: 20, down: 9, sel: "acme/task-11", insert: 12, want: []string{"20–26 of 32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t)
			for i := 1; i <= tc.before; i++ {
				l.task(t, "acme", fmt.Sprintf("task-%02d", i), "s")
			}
			h := open(t, config(l), 80, 12) // 7 rows a page
			for range tc.down {
				h.keys("j")
			}
			if got := h.selected(); got != tc.sel {
				t.Fatalf("cursor on %s, want %s\n%s", got, tc.sel, h.view())
			}
			other := l.second(t)
			for i := tc.before + 1; i <= tc.before+tc.insert; i++ {
				if _, err := other.Call(context.Background(), model.Request{Tenant: "acme", Key: fmt.Sprintf("task-%02d", i),
					Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{"subject":"s"}`)}, reconcile.CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			h.tick()
			if got := h.selected(); got != tc.sel {
				t.Fatalf("cursor moved to %s\n%s", got, h.view())
			}
			h.contains(tc.want...)
		})
	}
}

// Past posCap rows above the page, a refresh does not count them: the
// offset moves by the rows that came in at the top of the list.
func TestLiveInsertsFarDownTheListMoveTheCounterByTheNewRows(t *testing.T) {
	defer func(c int) { posCap = c }(posCap)
	posCap = 3
	l := newLedger(t)
	for i := 1; i <= 30; i++ {
		l.task(t, "acme", fmt.Sprintf("task-%02d", i), "s")
	}
	h := open(t, config(l), 80, 12) // 7 rows a page
	h.keys("pgdown", "pgdown", "j")
	h.contains("15–21 of 30")
	sel := h.selected()
	other := l.second(t)
	for i := 31; i <= 42; i++ {
		if _, err := other.Call(context.Background(), model.Request{Tenant: "acme", Key: fmt.Sprintf("task-%02d", i),
			Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{"subject":"s"}`)}, reconcile.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.tick()
	if got := h.selected(); got != sel {
		t.Fatalf("cursor moved to %s, want %s\n%s", got, sel, h.view())
	}
	h.contains("27–33 of 42")
	// Then a tick with nothing new: the offset stays.
	l.second(t).Call(context.Background(), model.Request{Tenant: "other", Key: "x", Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{"subject":"s"}`)}, reconcile.CallOptions{})
	h.tick()
	h.contains("28–34 of 43")
}

// Operations decided elsewhere leave the unknown tab above the cursor: the
// selection stays, the counter goes down by them.
func TestOperationsLeavingAboveTheCursorMoveTheCounterUp(t *testing.T) {
	l := newLedger(t)
	for i := 1; i <= 10; i++ {
		l.unknown(t, "acme", fmt.Sprintf("n-%02d", i), "x@acme.example")
	}
	h := open(t, config(l), 80, 12) // 7 rows a page
	h.keys("j", "j", "j", "j", "j", "j", "j", "j")
	if got := h.selected(); got != "acme/n-02" {
		t.Fatalf("cursor on %s\n%s", got, h.view())
	}
	h.contains("4–10 of 10")
	other := l.second(t)
	for _, k := range []string{"n-10", "n-09"} {
		if _, err := other.MarkApplied(context.Background(), reconcile.Decision{Tenant: "acme", Key: k, Operator: "bob", Reason: "r", Evidence: "sbx"}); err != nil {
			t.Fatal(err)
		}
	}
	h.tick()
	if got := h.selected(); got != "acme/n-02" {
		t.Fatalf("cursor moved to %s\n%s", got, h.view())
	}
	h.contains("[unknown 8]", "2–8 of 8")
}

// In a sorted list a new row may land anywhere: one that sorts above the
// page moves the counter; the selection stays.
func TestARowSortedAboveTheCursorMovesTheCounter(t *testing.T) {
	l := newLedger(t)
	for i := 1; i <= 20; i++ {
		l.task(t, "acme", fmt.Sprintf("task-%02d", i*2), "s")
	}
	h := open(t, config(l), 80, 12) // 7 rows a page
	h.keys("s")
	h.contains("sorted key A→Z")
	for range 9 {
		h.keys("j")
	}
	if got := h.selected(); got != "acme/task-20" {
		t.Fatalf("cursor on %s\n%s", got, h.view())
	}
	h.contains("8–14 of 20")
	other := l.second(t)
	for _, k := range []string{"task-01", "task-03", "task-99"} { // two above the page, one below
		if _, err := other.Call(context.Background(), model.Request{Tenant: "acme", Key: k,
			Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{"subject":"s"}`)}, reconcile.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.tick()
	if got := h.selected(); got != "acme/task-20" {
		t.Fatalf("cursor moved to %s\n%s", got, h.view())
	}
	h.contains("10–16 of 23")
}
