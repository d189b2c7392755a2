package ui

import (
	"testing"

	"github.com/retrysafe/retrysafe/reconcile"
)

// The sweep's banner counts the claims nobody held that it made unknown
// (released claims among them, not only leases whose worker is gone) and
// says how many wait for their provider's Retry-After.
func TestTheSweepBannerSaysWhatItDid(t *testing.T) {
	tests := []struct {
		name   string
		report reconcile.SweepReport
		want   []string
		lacks  []string
	}{
		{"unknown only", reconcile.SweepReport{Unknown: 2}, []string{"Swept: 2 claims nobody held → unknown, 0 re-sent under the same key, 0 receipts compacted."}, []string{"waiting", "lease ended"}},
		{"waiting", reconcile.SweepReport{Unknown: 1, Redispatched: 1, Waiting: 3}, []string{"Swept: 1 claim nobody held → unknown, 1 re-sent under the same key, 3 waiting for their provider's Retry-After"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t, config(fixture(t)), 200, 30)
			h.send(sweepMsg{Report: tc.report})
			h.contains(tc.want...)
			h.lacks(tc.lacks...)
		})
	}
}
