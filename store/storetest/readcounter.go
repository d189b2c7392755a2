package storetest

import (
	"context"
	"sync/atomic"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// ReadCounter is a real ledger that counts its reads of operations'
// histories: one operation's (Detail, DetailByID) and many at once
// (RequestHistories) — for tests that a bulk path reads in batches.
type ReadCounter struct {
	store.Ledger
	Details, Batches atomic.Int64
}

func (c *ReadCounter) Detail(ctx context.Context, tenant, key string) (*model.Detail, error) {
	c.Details.Add(1)
	return c.Ledger.Detail(ctx, tenant, key)
}

func (c *ReadCounter) DetailByID(ctx context.Context, id int64) (*model.Detail, error) {
	c.Details.Add(1)
	return c.Ledger.DetailByID(ctx, id)
}

func (c *ReadCounter) RequestHistories(ctx context.Context, keys []store.OpKey, outcomes []model.Outcome) (map[store.OpKey]store.RequestHistory, error) {
	c.Batches.Add(1)
	return c.Ledger.RequestHistories(ctx, keys, outcomes)
}
