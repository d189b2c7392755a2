package reconcile

import (
	"errors"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// A provider check that found nothing says what the provider had when it
// was asked, nothing more: an attempt that may have reached the provider
// after it (the agent's next call, a sweep's re-send or lease_expired)
// makes it no evidence for "not applied" or a new key — the provider may
// hold the effect now. The console, a script or a bulk review may hand a
// decision such a check (Decision.Finding); the ledger compares it with
// what it recorded since, in the decision's transaction.

// ErrCheckOutdated marks a decision refused (model.CodeStale) because the
// provider check it rests on was made before a later attempt, or the
// provider was asked again since: nothing was written.
var ErrCheckOutdated = errors.New("the provider check is out of date")

// CheckOutdated says why ev — a provider check that found nothing, as
// recorded at ev.CheckedAt — is no evidence any more, given the
// operation's latest recorded finding (store.Tx.LatestFinding,
// model.LatestFinding): an attempt that may have reached the provider was
// recorded after it (latest is it, or later, and stale), or the provider
// was asked again since and could not tell (latest is later: an attempt
// may lie between). "" when it still stands — and
// for a check that found the effect (a provider never takes a delivery
// back), one whose recording time is not known, or an operation with no
// recorded finding, or a latest finding read before the check was
// recorded.
func CheckOutdated(ev *provider.Evidence, latest *model.Finding) string {
	if ev == nil || ev.Found || ev.CheckedAt.IsZero() || latest == nil {
		return ""
	}
	asked := ev.CheckedAt.UTC().Truncate(time.Millisecond)
	switch {
	case latest.At.Before(asked):
		// Read before the check was recorded (a screen not yet
		// reloaded), or recorded elsewhere (a new key's check, of the
		// key it replaced): nothing to compare it with.
		return ""
	case latest.Stale:
		return "an attempt that may have reached the provider was recorded after it"
	case latest.At.After(asked) && latest.Kind == model.FindingHasNothing:
		// Asked again, after whatever came between: it still has
		// nothing (and a "has it" before binds the decision anyway).
		return ""
	case latest.At.After(asked):
		return fmt.Sprintf("the provider was asked again since (%s: %s)", latest.At.UTC().Format(time.RFC3339), latest.Kind.Words())
	}
	return ""
}

// checkOutdatedTx refuses a decision on op that rests on a provider check
// that found nothing (d.Finding) — "not applied" or a new key — when the
// check is out of date (CheckOutdated): a stale error wrapping
// ErrCheckOutdated, nil otherwise.
func checkOutdatedTx(tx store.Tx, d Decision, action model.Action, op *model.Operation) error {
	if action != model.ActionMarkNotApplied && action != model.ActionAuthorizeKey {
		return nil
	}
	if d.Finding == nil || d.Finding.Found || d.Finding.CheckedAt.IsZero() {
		return nil
	}
	latest, err := tx.LatestFinding(op.ID)
	if err != nil {
		return err
	}
	why := CheckOutdated(d.Finding, latest)
	if why == "" {
		return nil
	}
	return model.Wrap(model.CodeStale, ErrCheckOutdated, "cannot %s %s/%s on the provider check of %s (%s): %s, so the provider may hold the effect now — it is %s (version %d)%s; nothing was written; check again",
		action.Verb(), d.Tenant, d.Key, d.Finding.CheckedAt.UTC().Format(time.RFC3339), textsafe.Visible(clipEvidence(FindingText(d.Finding))), why,
		op.State, op.Version, lastChange(op))
}
