package ui

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// readCounter is a real ledger that counts its reads of operations'
// histories: one operation's (Detail, DetailByID) and many at once
// (RequestHistories).
type readCounter struct {
	store.Ledger
	details, batches atomic.Int64
}

func (c *readCounter) Detail(ctx context.Context, tenant, key string) (*model.Detail, error) {
	c.details.Add(1)
	return c.Ledger.Detail(ctx, tenant, key)
}

func (c *readCounter) DetailByID(ctx context.Context, id int64) (*model.Detail, error) {
	c.details.Add(1)
	return c.Ledger.DetailByID(ctx, id)
}

func (c *readCounter) RequestHistories(ctx context.Context, keys []store.OpKey, outcomes []model.Outcome) (map[store.OpKey]store.RequestHistory, error) {
	c.batches.Add(1)
	return c.Ledger.RequestHistories(ctx, keys, outcomes)
}

// The bulk review reads the marked rows' graces for its warning in one
// batched read, not one operation's detail per row, and so does the
// write after y (one chunk); what it says is unchanged
// (TestBulkReviewSaysWhichRowsTheGraceSkipsBeforeTheWrite).
func TestBulkReviewReadsTheGracesInOneRead(t *testing.T) {
	l := graceLedger(t)
	rc := &readCounter{Ledger: l.svc.Store}
	l.svc.Store = rc
	h := open(t, config(l), 140, 40)
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	h.contains("1 of them is within the grace")
	if d, b := rc.details.Load(), rc.batches.Load(); d != 0 || b != 1 {
		t.Errorf("the review read %d details and made %d batched reads for 2 rows; want 0 and 1", d, b)
	}
	h.keys("y")
	h.contains("1 written · 1 skipped: within the grace")
	if d, b := rc.details.Load(), rc.batches.Load(); d != 0 || b != 2 {
		t.Errorf("review and write read %d details and made %d batched reads; want 0 and 2", d, b)
	}
}
