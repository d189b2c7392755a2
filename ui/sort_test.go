package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// s cycles the order the store reads the list in; :sort sets it, reverse
// turns it round; moving down page after page in a sorted list meets every
// operation once, in that order.
func TestSortByColumn(t *testing.T) {
	l := fixture(t)
	for i := 0; i < 12; i++ {
		l.task(t, []string{"acme", "globex", "initech"}[i%3], fmt.Sprintf("bulk-%02d", (i*7)%12), "subject")
	}
	h := open(t, config(l), 120, 12) // a page of a few rows: moving down pages
	h.keys("8")
	keysDown := func() []string {
		t.Helper()
		h.keys("g")
		var got []string
		for i := 0; i < 60; i++ {
			op, ok := h.m.list.selected()
			if !ok {
				break
			}
			if n := len(got); n > 0 && got[n-1] == op.Tenant+"/"+op.Key {
				break // the last row: down stays
			}
			got = append(got, op.Tenant+"/"+op.Key)
			h.keys("j")
		}
		return got
	}
	byID := keysDown()
	if len(byID) != 24 {
		t.Fatalf("newest first read %d operations: %v", len(byID), byID)
	}
	h.keys("s")
	h.contains("sorted key A→Z (s cycles)", "KEY↓")
	byKey := keysDown()
	want := slices.Clone(byID)
	slices.Sort(want) // tenant, then key
	if strings.Join(byKey, " ") != strings.Join(want, " ") {
		t.Fatalf("by key read\n %v\nwant\n %v", byKey, want)
	}
	h.keys(":")
	h.typeText("sort key reverse")
	h.keys("enter")
	h.contains("sorted key Z→A", "KEY↑")
	rev := keysDown()
	slices.Reverse(want)
	if strings.Join(rev, " ") != strings.Join(want, " ") {
		t.Fatalf("by key reversed read\n %v\nwant\n %v", rev, want)
	}
	// G reads the last page of the order: its last row is the first key.
	h.keys("G")
	if op, _ := h.m.list.selected(); op.Tenant+"/"+op.Key != want[len(want)-1] {
		t.Errorf("G ends on %s/%s; want %s", op.Tenant, op.Key, want[len(want)-1])
	}
	h.keys("s") // the next column after key: state
	h.contains("sorted state A→Z", "STATE↓")
	if h.m.list.sort != model.SortState || h.m.list.reverse {
		t.Errorf("s after key: %q reverse=%v", h.m.list.sort, h.m.list.reverse)
	}
	h.keys(":")
	h.typeText("sort nonsense")
	h.keys("enter")
	h.contains(`unknown sort column "nonsense"`)
	h.keys(":")
	h.typeText("sort")
	h.keys("enter")
	h.lacks("sorted", "s cycles")
	if got := keysDown(); strings.Join(got, " ") != strings.Join(byID, " ") {
		t.Errorf(":sort alone is newest first again: %v", got)
	}
}

// Moving down a sorted list meets every operation once even when the row
// the next page starts after moves meanwhile: another operator decides on
// the last row of the page (its state and changed time move, and it leaves
// the unknown tab) just before the console reads the next page. A page
// anchored on that row's id read it again where it had gone — the end of
// the order — and showed the last page, skipping every row in between.
func TestSortedPagingWhenTheAnchorRowMoves(t *testing.T) { walkSortedWhileTheAnchorMoves(t, false) }

// Changing the order reads the first page of the new order; the cursor
// stays on its operation only when that page holds it. It used to jump to
// a page starting at the operation — here the last of the new order: one
// row, the rest of the screen empty with eleven rows above it unseen, and
// the status line saying "2–2 of 12".
func TestSortChangeShowsAFullPageAndItsTruePosition(t *testing.T) {
	l := newLedger(t)
	for i := 0; i < 12; i++ {
		l.unknown(t, "acme", fmt.Sprintf("lost-%02d", (i*7)%12), "oncall@acme.example")
		l.clock.Advance(time.Minute)
	}
	h := open(t, config(l), 120, 12)
	h.keys(":")
	h.typeText("sort changed")
	h.keys("enter")
	if n := len(h.m.list.rows); n != h.m.list.limit {
		t.Errorf("after :sort changed the page holds %d rows; want a full page of %d:\n%s", n, h.m.list.limit, h.view())
	}
	h.contains(fmt.Sprintf("1–%d of 12", h.m.list.limit))
	if op, _ := h.m.list.selected(); op.Key != "lost-00" {
		t.Errorf("the cursor is on %s; want the first row of the new order, lost-00", op.Key)
	}
}

// Sorted by changed, the STUCK column's heading carries the sort mark
// whole: "STUCK↓" did not fit its five columns and read "STUC…", so no
// heading said what the list was ordered by.
func TestSortByChangedMarksTheStuckHeading(t *testing.T) {
	l := newLedger(t)
	for i := 0; i < 3; i++ {
		l.unknown(t, "acme", fmt.Sprintf("lost-%d", i), "oncall@acme.example")
		l.clock.Advance(time.Minute)
	}
	h := open(t, config(l), 120, 12)
	h.keys(":")
	h.typeText("sort changed")
	h.keys("enter")
	h.contains("STUCK↓")
	h.keys(":")
	h.typeText("sort changed reverse")
	h.keys("enter")
	h.contains("STUCK↑")
}

// Moving up meets every operation once too when the first row of the page
// moves away just before the page above is read.
func TestSortedPagingUpWhenTheAnchorRowMoves(t *testing.T) { walkSortedWhileTheAnchorMoves(t, true) }

// walkSortedWhileTheAnchorMoves walks the list sorted by changed from one
// end to the other (down from the top, or up from the bottom) while
// another operator settles the row at the edge of the first page read,
// and checks it met every operation once, in order.
func walkSortedWhileTheAnchorMoves(t *testing.T, up bool) {
	l := newLedger(t)
	var want []string
	for i := 0; i < 12; i++ {
		key := fmt.Sprintf("lost-%02d", (i*7)%12)
		l.unknown(t, "acme", key, "oncall@acme.example")
		l.clock.Advance(time.Minute)
		if up {
			want = append([]string{"acme/" + key}, want...) // walking up: made last first
		} else {
			want = append(want, "acme/"+key) // longest unchanged first: made first
		}
	}
	start, step, way, edge := "g", "j", "down", "bottom"
	if up {
		start, step, way, edge = "G", "k", "up", "top"
	}
	h := open(t, config(l), 120, 12)
	h.keys(":")
	h.typeText("sort changed")
	h.keys("enter")
	h.keys(start)
	var got []string
	decided := false
	for i := 0; i < 40; i++ {
		op, ok := h.m.list.selected()
		if !ok {
			break
		}
		if n := len(got); n > 0 && got[n-1] == op.Tenant+"/"+op.Key {
			break // the last row reached: the key stays
		}
		got = append(got, op.Tenant+"/"+op.Key)
		atEdge := h.m.list.cursor == len(h.m.list.rows)-1
		if up {
			atEdge = h.m.list.cursor == 0 && !h.m.list.atTop()
		}
		if !decided && atEdge {
			// The edge of the page: someone else settles it.
			decided = true
			if _, err := l.second(t).MarkApplied(context.Background(), reconcile.Decision{Tenant: op.Tenant, Key: op.Key,
				Operator: "bob", Reason: "the provider has it", Evidence: "sbx_1"}); err != nil {
				t.Fatal(err)
			}
			l.clock.Advance(time.Second)
		}
		h.keys(step)
	}
	if !decided {
		t.Fatalf("never reached the %s of a page: %v", edge, got)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("moving %s read\n %v\nwant\n %v", way, got, want)
	}
}
