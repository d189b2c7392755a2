package reconcile

import (
	"context"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// ValidateRetention checks a replay window and a tombstone window before
// a sweep uses them. Both must be positive, and a tombstone must outlive a
// full replay window: a runner retries a key for as long as its receipt
// could replay, so a retry may arrive up to a replay window after the
// receipt was compacted, and must still hear "expired" — a tombstone
// already forgotten would let it create the effect a second time (a zero
// window forgot it in the very sweep that made it).
func ValidateRetention(replay, tombstone time.Duration) error {
	switch {
	case replay <= 0:
		return model.Errorf(model.CodeInvalid, "the replay window must be positive, got %v", replay)
	case tombstone <= 0:
		return model.Errorf(model.CodeInvalid, "the tombstone window must be positive, got %v", tombstone)
	case tombstone < replay:
		return model.Errorf(model.CodeInvalid, "the tombstone window (%v) must be at least the replay window (%v): a retry may come a full replay window after its receipt was compacted, and must still be told \"expired\"", tombstone, replay)
	}
	return nil
}

// SweepReport says what one sweep did.
type SweepReport struct {
	Unknown      int `json:"to_unknown"`   // leases that ended with no result
	Redispatched int `json:"redispatched"` // re-sent under the same downstream key
	Compacted    int `json:"compacted"`    // receipts past the replay window → tombstones
	Forgotten    int `json:"forgotten"`    // tombstones past their own window
	// NotResent: leases ended (counted in Unknown) that this sweep's
	// config alone would have re-dispatched, held back because the config
	// that made the claim said the provider does not honour keys (or the
	// claim predates that record); NotResentWhy says why, each reason once
	// ("; " between them), as each one's lease_expired attempt does.
	NotResent    int    `json:"not_resent,omitempty"`
	NotResentWhy string `json:"not_resent_why,omitempty"`
	// NotSent: leases ended that this sweep would have re-dispatched but
	// sent nothing for — refused before the claim (the provider cannot
	// dispatch from this process: a ${NAME} unset) or answered "not sent"
	// (a refused connection) — not counted in Redispatched; NotSentWhy
	// says why, each reason once ("; " between them).
	NotSent    int    `json:"not_sent,omitempty"`
	NotSentWhy string `json:"not_sent_why,omitempty"`
}

// Sweep moves in_progress operations whose lease ended to unknown — or,
// where the provider honours downstream keys both in this config and in
// the one that made the claim (notResendable), re-dispatches them under
// the same key — and compacts receipts past the replay window to
// tombstones.
// Nothing ever leaves unknown here.
func (s *Service) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	if err := ValidateRetention(s.ReplayWindow, s.TombstoneWindow); err != nil {
		return rep, err
	}
	// The window that counts is the one each operation recorded when it
	// settled, not what this sweep was told: checked before anything is
	// written, so a refused sweep changes nothing.
	var recorded time.Duration
	if err := s.Store.WithTx(ctx, func(tx store.Tx) error {
		var err error
		recorded, err = tx.LongestReplayWindow()
		return err
	}); err != nil {
		return rep, err
	}
	if s.TombstoneWindow < recorded {
		return rep, model.Errorf(model.CodeInvalid, "the tombstone window (%v) is shorter than the replay window an operation to compact recorded when it settled (%v): a retry may come that long after its receipt was compacted, and must still be told \"expired\"; nothing was changed", s.TombstoneWindow, recorded)
	}
	for {
		batch, err := s.settleLeases(ctx, &rep, func(tx store.Tx) ([]*model.Operation, error) {
			return tx.ExpiredLeases(200)
		})
		if err != nil {
			return rep, err
		}
		if batch < 200 {
			break
		}
	}
	for {
		var n, f int
		err := s.Store.WithTx(ctx, func(tx store.Tx) error {
			var err error
			n, f, err = tx.CompactExpired(s.TombstoneWindow, 500)
			return err
		})
		if err != nil {
			return rep, err
		}
		rep.Compacted += n
		rep.Forgotten += f
		if n < 500 {
			break
		}
	}
	return rep, nil
}

// sweepLease settles one in_progress operation whose lease ended, inside
// tx: unknown (nil), or — where its provider honours downstream keys both
// in this config and in the one that made the claim (notResendable) —
// claimed again by the sweep, to be re-dispatched under the same key after
// tx commits (the claim returned). A claim held back only by its own
// record is counted in held, by reason, for the report.
func (s *Service) sweepLease(tx store.Tx, op *model.Operation, held map[string]int) (*claim, error) {
	if why, disagrees := s.notResendable(op); why != "" {
		_, err := s.expireLease(tx, op, "sweep", "", why)
		if err == nil && disagrees {
			held[why]++
		}
		return nil, err
	}
	prov, _ := s.Providers.Get(op.Provider)
	stampClaim(op, prov)
	from, ver := op.State, op.Version
	op.ClaimNo++
	op.LeaseOwner, op.LeaseUntil = "sweep", tx.Now().Add(s.Lease)
	if err := tx.UpdateOperation(op, from, ver); err != nil {
		return nil, err
	}
	return s.recordClaim(tx, op, nil, tx.Now(), model.OutcomeRedispatched)
}

// redispatch sends the sweep's claims, one after another.
func (s *Service) redispatch(ctx context.Context, claims []*claim, rep *SweepReport) error {
	for _, cl := range claims {
		if _, err := s.dispatch(ctx, cl, provider.Faults{}, s.Store.Now()); err != nil {
			return err
		}
		rep.Redispatched++
	}
	return nil
}

// SweepKeys is Sweep for the named operations of one tenant only: each
// that is in_progress with its lease ended becomes unknown, or is
// re-dispatched under the same downstream key, exactly as Sweep settles
// it; every other operation of the ledger — another tenant's, or this
// tenant's under another key — is left as it is, and nothing is compacted.
// What the lab runs in a ledger it shares with other people's work. A key
// with no operation is skipped.
func (s *Service) SweepKeys(ctx context.Context, tenant string, keys []string) (SweepReport, error) {
	var rep SweepReport
	for _, k := range keys {
		if err := model.ValidateIdentity(tenant, k); err != nil {
			return rep, err
		}
	}
	_, err := s.settleLeases(ctx, &rep, func(tx store.Tx) ([]*model.Operation, error) {
		var ended []*model.Operation
		for _, k := range keys {
			op, err := tx.GetOperation(tenant, k)
			if model.IsCode(err, model.CodeNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			// ExpiredLeases' rule: in_progress, its lease ended before now.
			if op.State == model.StateInProgress && op.LeaseUntil.Before(tx.Now()) {
				ended = append(ended, op)
			}
		}
		return ended, nil
	})
	return rep, err
}

// settleLeases settles, in one transaction, the operations read picks
// (each in_progress with its lease ended: sweepLease), then re-dispatches
// those claimed again; it returns how many read picked.
func (s *Service) settleLeases(ctx context.Context, rep *SweepReport, read func(tx store.Tx) ([]*model.Operation, error)) (int, error) {
	var claims []*claim
	picked, unknown := 0, 0
	var held map[string]int
	// WithTx may run the function more than once: count per run.
	err := s.Store.WithTx(ctx, func(tx store.Tx) error {
		claims, picked, unknown, held = nil, 0, 0, map[string]int{}
		ops, err := read(tx)
		if err != nil {
			return err
		}
		picked = len(ops)
		for _, op := range ops {
			cl, err := s.sweepLease(tx, op, held)
			if err != nil {
				return err
			}
			if cl == nil {
				unknown++
			} else {
				claims = append(claims, cl)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	rep.Unknown += unknown
	addNotResent(rep, held)
	return picked, s.redispatch(ctx, claims, rep)
}
