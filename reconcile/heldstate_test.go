package reconcile_test

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A hold is said only of an operation a call may send again (a released
// claim, a not-applied one): a settled one keeps the time its provider
// last asked for, which holds nothing — ops list said "applied (held
// until …)" and ops show "a call or sweep before then sends nothing" of an
// operation whose calls replay its receipt.
func TestOnlyAnOperationThatMayBeSentAgainIsHeld(t *testing.T) {
	now := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		state model.State
		held  bool
	}{
		{model.StateInProgress, true},
		{model.StateNotApplied, true},
		{model.StateApplied, false},
		{model.StateUnknown, false},
		{model.StateSuperseded, false},
		{model.StateAuthorized, false},
		{model.StateFailed, false},
	}
	for _, tc := range tests {
		op := model.Operation{State: tc.state, Provider: "mail", RetryNotBefore: now.Add(90 * time.Second)}
		if got := reconcile.HeldFor(op, now) > 0; got != tc.held {
			t.Errorf("%s: held %v, want %v", tc.state, got, tc.held)
		}
		if got := reconcile.HeldWords(op, now) != ""; got != tc.held {
			t.Errorf("%s: words %q, want held %v", tc.state, reconcile.HeldWords(op, now), tc.held)
		}
	}
}
