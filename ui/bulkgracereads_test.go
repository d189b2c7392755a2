package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/store/storetest"
)

// The bulk review reads the marked rows' graces for its warning in one
// batched read, not one operation's detail per row, and so does the
// write after y (one chunk); what it says is unchanged
// (TestBulkReviewSaysWhichRowsTheGraceSkipsBeforeTheWrite).
func TestBulkReviewReadsTheGracesInOneRead(t *testing.T) {
	l := graceLedger(t)
	rc := &storetest.ReadCounter{Ledger: l.svc.Store}
	l.svc.Store = rc
	h := open(t, config(l), 140, 40)
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.contains("1 of them is within the grace")
	if d, b := rc.Details.Load(), rc.Batches.Load(); d != 0 || b != 1 {
		t.Errorf("the review read %d details and made %d batched reads for 2 rows; want 0 and 1", d, b)
	}
	h.keys("y")
	h.contains("1 written · 1 skipped: within the grace")
	if d, b := rc.Details.Load(), rc.Batches.Load(); d != 0 || b != 2 {
		t.Errorf("review and write read %d details and made %d batched reads; want 0 and 2", d, b)
	}
}
