package reconcile

import (
	"context"
	"sort"
	"strings"
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
	// Waiting: leases ended that this sweep would have re-dispatched but
	// left in progress, released, because their provider answered busy
	// with a Retry-After that has not passed (RetryNotBefore): a later
	// sweep or call sends them. Not counted in NotSent.
	Waiting int `json:"waiting,omitempty"`
	// OtherRequest: leases ended (counted in Unknown) held back from
	// being sent again because the latest lookup of their downstream key
	// found a different request there (model.FindingHasOther): the
	// provider would answer with that request's result. Each one's
	// lease_expired attempt says so; a new key is the way to send it.
	OtherRequest int `json:"other_request,omitempty"`
}

// CompactBatch is how many receipts one transaction of a sweep compacts.
// The transaction holds the ledger's writer (on SQLite every call waits
// for it): small enough that it is over in a few tens of milliseconds
// (BenchmarkCompactExpired in store/sqlite: about 150 µs of CPU a
// receipt), large enough that a sweep of many is not mostly commits.
const CompactBatch = 200

// CompactPause is how long a sweep leaves the writer free after a full
// batch, before the next. Another process waiting for a SQLite ledger
// tries again every 100 ms at most (SQLite's busy handler) and found it
// taken each time when the sweep began its next batch at once: calls
// waited seconds while a long sweep ran. A pause as long as that retry
// lets every waiting call in between two batches.
const CompactPause = 100 * time.Millisecond

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
	// An operation this sweep has settled or left (its provider cannot
	// dispatch here, or it answered "busy" and was released again) is not
	// taken twice: a batch with nothing new ends the loop.
	seen := map[int64]bool{}
	for {
		batch, fresh, err := s.settleLeases(ctx, &rep, seen, func(tx store.Tx) ([]*model.Operation, error) {
			return tx.ExpiredLeases(200)
		})
		if err != nil {
			return rep, err
		}
		if batch < 200 || fresh == 0 {
			break
		}
	}
	for {
		var n, f int
		err := s.Store.WithTx(ctx, func(tx store.Tx) error {
			var err error
			n, f, err = tx.CompactExpired(s.TombstoneWindow, CompactBatch)
			return err
		})
		if err != nil {
			return rep, err
		}
		rep.Compacted += n
		rep.Forgotten += f
		if n < CompactBatch {
			break
		}
		select {
		case <-ctx.Done(): // the next transaction says so, as any does
		case <-time.After(CompactPause):
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
	from, ver := op.State, op.Version
	op.ClaimNo++
	op.LeaseOwner, op.LeaseUntil = "sweep", tx.Now().Add(s.Lease)
	s.stampClaim(op, prov)
	if err := tx.UpdateOperation(op, from, ver); err != nil {
		return nil, err
	}
	return s.recordClaim(tx, op, nil, tx.Now(), model.OutcomeRedispatched)
}

// redispatch sends the sweep's claims, one after another. Each is taken
// from in_progress, so an earlier request may be unanswered (claim.resend).
// Only a request that left this process counts as re-dispatched; the
// others are reported not sent, with why.
func (s *Service) redispatch(ctx context.Context, claims []*claim, rep *SweepReport) error {
	notSent := map[string]int{}
	defer addNotSent(rep, notSent)
	for _, cl := range claims {
		cl.resend = true
		if _, err := s.dispatch(ctx, cl, provider.Faults{}, s.Store.Now()); err != nil {
			return err
		}
		if cl.sentNothing != "" {
			notSent[cl.sentNothing]++
			continue
		}
		rep.Redispatched++
	}
	return nil
}

// maxNotSentWhy bounds the reasons a report lists (each distinct one is
// kept once; a provider's is usually the same for every claim).
const maxNotSentWhy = 8

// addNotSent adds the claims of one batch that sent nothing, by reason, to
// rep: the count, and each reason once, in order, joined by "; ".
func addNotSent(rep *SweepReport, by map[string]int) {
	if len(by) == 0 {
		return
	}
	var all []string
	if rep.NotSentWhy != "" {
		all = strings.Split(rep.NotSentWhy, "; ")
	}
	known := map[string]bool{}
	for _, r := range all {
		known[r] = true
	}
	for r, n := range by {
		rep.NotSent += n
		if !known[r] && len(all) < maxNotSentWhy {
			known[r] = true
			all = append(all, r)
		}
	}
	sort.Strings(all)
	rep.NotSentWhy = strings.Join(all, "; ")
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
	_, _, err := s.settleLeases(ctx, &rep, map[int64]bool{}, func(tx store.Tx) ([]*model.Operation, error) {
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
// those claimed again; it returns how many read picked, and how many of
// them seen did not hold yet (they are added to it). One that would be
// re-dispatched through a provider that cannot dispatch from this process
// (provider.Checker) is left as it is — nothing written — and reported
// not sent.
func (s *Service) settleLeases(ctx context.Context, rep *SweepReport, seen map[int64]bool, read func(tx store.Tx) ([]*model.Operation, error)) (int, int, error) {
	var claims []*claim
	picked, unknown, waiting, other := 0, 0, 0, 0
	var held, refused map[string]int
	var fresh []int64
	// WithTx may run the function more than once: count per run.
	err := s.Store.WithTx(ctx, func(tx store.Tx) error {
		claims, picked, unknown, waiting, other, held, refused, fresh = nil, 0, 0, 0, 0, map[string]int{}, map[string]int{}, nil
		ops, err := read(tx)
		if err != nil {
			return err
		}
		picked = len(ops)
		for _, op := range ops {
			if seen[op.ID] {
				continue
			}
			fresh = append(fresh, op.ID)
			// Another request under its key (the latest lookup's): never
			// sent again under it, whatever the provider — unknown now,
			// with why (waiting out a Retry-After would change nothing).
			why, err := otherRequestHeld(tx, op)
			if err != nil {
				return err
			}
			if why != "" {
				if _, err := s.expireLease(tx, op, "sweep", "", why); err != nil {
					return err
				}
				unknown++
				other++
				continue
			}
			if why, _ := s.notResendable(op); why == "" {
				if why := s.cannotDispatch(op.Provider); why != "" {
					refused[why]++
					continue
				}
				if waitLeft(op, tx.Now()) > 0 {
					// A busy provider's Retry-After has not passed:
					// left released for a later sweep or call.
					waiting++
					continue
				}
			}
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
		return 0, 0, err
	}
	for _, id := range fresh {
		seen[id] = true
	}
	rep.Unknown += unknown
	rep.Waiting += waiting
	rep.OtherRequest += other
	addNotResent(rep, held)
	addNotSent(rep, refused)
	return picked, len(fresh), s.redispatch(ctx, claims, rep)
}
