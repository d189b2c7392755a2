package reconcile

import (
	"fmt"
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

// HeldFor is how long op's provider still asks to be left alone at now
// (its Retry-After, op.RetryNotBefore), in whole seconds rounded up; 0
// when it asked for no wait or the wait has passed. A call of the key
// before then sends nothing (409 in_progress), and neither does a sweep.
func HeldFor(op model.Operation, now time.Time) time.Duration {
	// Only an operation a call may send again is held: a settled one
	// (applied, superseded, unknown, …) keeps the time it last recorded,
	// which holds nothing.
	if op.State != model.StateInProgress && op.State != model.StateNotApplied {
		return 0
	}
	return waitLeft(&op, now)
}

// HeldWords says op's hold (HeldFor) for a person, "" when there is none:
// who asked to be left alone, until when, and that nothing is sent
// before then — not "to be sent again by a sweep or the next call".
func HeldWords(op model.Operation, now time.Time) string {
	left := HeldFor(op, now)
	if left <= 0 {
		return ""
	}
	return fmt.Sprintf("held: provider %s asked to be left alone until %s (its Retry-After, in %d s); a call or sweep before then sends nothing",
		op.Provider, op.RetryNotBefore.UTC().Format(time.RFC3339), int(left/time.Second))
}
