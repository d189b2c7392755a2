package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// Offer is what the write's rules say of one decision on an operation
// at a moment, before anything is asked or written: whether it is
// allowed at all (AllowedAt), and, when it is, what it needs first — the
// override of the grace after the latest request (GraceCheck) or the
// second confirmation against the finding that binds it
// (AgainstFinding). A screen or a command says this up front, so that it
// never offers what the write refuses nor hides an override the write
// will ask for. The write checks everything again, in its transaction.
type Offer struct {
	Action  model.Action
	Allowed bool
	// HeldUntil: not allowed because a worker's live lease holds the
	// claim until then (in_progress); zero otherwise.
	HeldUntil time.Time
	// Grace: allowed, but refused until Grace.Until unless overridden
	// (Decision.WithinGrace: --within-grace, the console's typed
	// override): the provider may still apply the latest request.
	Grace *GraceRefusal
	// Against: allowed, but against the finding that binds it (Finding
	// names it): only with the second confirmation (Decision.Override:
	// --against-finding, the console's typed override).
	Against bool
	Finding string
	// Other: not allowed because the lookup that binds a decision found a
	// different request under the key (OtherRequestRefuses: "mark
	// applied" and "not applied"; a new key is the way); Finding names
	// what the provider holds.
	Other bool
}

// NeedsOverride reports whether the write takes the decision only with
// an explicit override (the grace, or against the finding).
func (o Offer) NeedsOverride() bool { return o.Allowed && (o.Grace != nil || o.Against) }

// Why is the offer in words, for a person ("" when it is allowed with
// nothing more): why it is not allowed, or what it needs first. Times
// are RFC 3339, in UTC.
func (o Offer) Why(op model.Operation) string {
	switch {
	case !o.Allowed && o.Other:
		return fmt.Sprintf("refused: the provider holds %s under the key, a different request — no evidence either way, and the next call under this key would get its result; authorize a new key to send this one (ops supersede; the console: s)",
			textsafe.Visible(or(o.Finding, "something")))
	case !o.Allowed && !o.HeldUntil.IsZero():
		return fmt.Sprintf("claim %d is held: %s's lease runs until %s and a worker may be sending it now; no decision while it is live (decide after %s, if it is still in_progress then)",
			op.ClaimNo, textsafe.Visible(or(op.LeaseOwner, "a worker")), utc(o.HeldUntil), utc(o.HeldUntil))
	case !o.Allowed:
		return fmt.Sprintf("not allowed from %s (allowed: %s)", op.State, legalText(op))
	}
	var parts []string
	if g := o.Grace; g != nil {
		parts = append(parts, fmt.Sprintf("within the grace: the provider may still apply the request sent at %s — refused until %s unless overridden (--within-grace; the console: the typed override), only if you know the provider dropped it",
			utc(g.Sent), utc(g.Until)))
	}
	if o.Against {
		parts = append(parts, fmt.Sprintf("against the finding that binds it (%s): only with the second confirmation (--against-finding=DIGEST; the console: the typed override)", textsafe.Visible(clipEvidence(o.Finding))))
	}
	if len(parts) == 2 {
		return parts[0] + "; and " + parts[1]
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return ""
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// OfferOf is the Offer of action on op at now; attempts are op's
// recorded attempts (a detail's, or RequestOutcomes' of a batched read),
// which the grace is read from. A nil s says nothing of the grace.
func (s *Service) OfferOf(action model.Action, op model.Operation, attempts []model.Attempt, now time.Time) Offer {
	o := Offer{Action: action, Allowed: AllowedAt(op, action, now)}
	if !o.Allowed {
		if op.State == model.StateInProgress && !now.IsZero() && !Unheld(op, now) {
			o.HeldUntil = op.LeaseUntil
		}
		return o
	}
	if OtherRequestRefuses(action, op) {
		o.Allowed, o.Other, o.Finding = false, true, op.Binding().Ref
		return o
	}
	if s != nil {
		var gr *GraceRefusal
		if errors.As(s.GraceCheck(action, op, attempts, now), &gr) {
			o.Grace = gr
		}
	}
	o.Against, o.Finding = AgainstFinding(action, op)
	return o
}

// Offers is OfferOf for every decision (model.AllActions), in that order.
func (s *Service) Offers(op model.Operation, attempts []model.Attempt, now time.Time) []Offer {
	out := make([]Offer, 0, len(model.AllActions))
	for _, a := range model.AllActions {
		out = append(out, s.OfferOf(a, op, attempts, now))
	}
	return out
}

// RequestOutcomes are the outcomes of the attempts the grace after an
// operation's latest request is read from: what a batched read of many
// operations' requests (store.Ledger.RequestHistories) asks for, so that
// OfferOf and GraceCheck of its attempts agree with the write's.
func RequestOutcomes() []model.Outcome { return slices.Clone(requestOutcomes) }
