package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
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
