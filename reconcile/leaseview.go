package reconcile

import (
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// LeaseEnded reports whether op is in_progress and its lease ended at now
// (the ledger's clock): no worker holds its claim — the worker died, or the
// claim was released to be sent again (ClaimReleased says which); a sweep
// or the next call of its key settles it. It is lease_ended in ops show
// --json and ops list --json, and in the gateway's operation view: one
// rule, so they agree.
func LeaseEnded(op model.Operation, now time.Time) bool {
	return op.State == model.StateInProgress && !op.LeaseUntil.IsZero() && !now.Before(op.LeaseUntil)
}

// ClaimReleased reports whether op's lease ended (LeaseEnded) because its
// claim was released to be sent again (LeaseReleased: a lost reply, a
// re-send answered busy, not sent or nothing applied), not because a
// worker died holding it.
func ClaimReleased(op model.Operation, now time.Time) bool {
	return LeaseEnded(op, now) && op.LeaseOwner == LeaseReleased
}
