package reconcile

import (
	"context"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// SweepReport says what one sweep did.
type SweepReport struct {
	Unknown      int `json:"to_unknown"`   // leases that ended with no result
	Redispatched int `json:"redispatched"` // re-sent under the same downstream key
	Compacted    int `json:"compacted"`    // receipts past the replay window → tombstones
	Forgotten    int `json:"forgotten"`    // tombstones past their own window
}

// Sweep moves in_progress operations whose lease ended to unknown — or,
// where the provider honours downstream keys, re-dispatches them under the
// same key — and compacts receipts past the replay window to tombstones.
// Nothing ever leaves unknown here.
func (s *Service) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	for {
		var claims []*claim
		batch, unknown := 0, 0
		// WithTx may run the function more than once: count per run.
		err := s.Store.WithTx(ctx, func(tx store.Tx) error {
			claims, batch, unknown = nil, 0, 0
			ops, err := tx.ExpiredLeases(200)
			if err != nil {
				return err
			}
			batch = len(ops)
			for _, op := range ops {
				prov, perr := s.Providers.Get(op.Provider)
				if perr != nil || !prov.HonoursKeys() {
					if _, err := s.expireLease(tx, op, "sweep", ""); err != nil {
						return err
					}
					unknown++
					continue
				}
				from, ver := op.State, op.Version
				op.ClaimNo++
				op.LeaseOwner, op.LeaseUntil = "sweep", tx.Now().Add(s.Lease)
				if err := tx.UpdateOperation(op, from, ver); err != nil {
					return err
				}
				cl, err := s.recordClaim(tx, op, nil, tx.Now(), model.OutcomeRedispatched)
				if err != nil {
					return err
				}
				claims = append(claims, cl)
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Unknown += unknown
		for _, cl := range claims {
			if _, err := s.dispatch(ctx, cl, provider.Faults{}, s.Store.Now()); err != nil {
				return rep, err
			}
			rep.Redispatched++
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
