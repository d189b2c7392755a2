package reconcile

import (
	"context"
	"fmt"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Decisions on many operations at once (the console's marked rows, `ops
// resolve` with several keys or a filter). Each operation gets its own
// compare-and-set decision, with the state and version the operator saw
// for it: one that moved on is refused as stale, one whose state does not
// allow the action is refused as illegal, and neither stops the others.

// Target is one operation of a bulk decision, as the operator saw it.
type Target struct {
	Tenant, Key   string
	ExpectState   model.State
	ExpectVersion int64 // 0: whatever it is now
}

// TargetOf is the target an operation on screen makes.
func TargetOf(op model.Operation) Target {
	return Target{Tenant: op.Tenant, Key: op.Key, ExpectState: op.State, ExpectVersion: op.Version}
}

// Verdict is what happened to one target.
type Verdict string

const (
	VerdictWritten Verdict = "written"
	VerdictStale   Verdict = "stale"   // it moved on since it was seen: nothing written
	VerdictIllegal Verdict = "illegal" // its state does not allow the action: nothing written
	VerdictFailed  Verdict = "failed"  // not found, a conflict, or the write failed
)

// Outcome is one target's result.
type Outcome struct {
	Target
	Verdict Verdict     `json:"result"`
	State   model.State `json:"state,omitempty"`   // after the decision, or as found when refused
	Version int64       `json:"version,omitempty"` // likewise
	NewKey  string      `json:"new_key,omitempty"` // authorize: the new key
	Err     error       `json:"-"`
}

// MaxBulk bounds one bulk decision.
const MaxBulk = 5000

// chunk is how many decisions share one transaction (one fsync): each is
// still its own compare-and-set, and a refusal rolls back nothing else.
const chunk = 500

// DecideMany makes decision d (operator, reason, evidence; its tenant, key
// and expectations are ignored) on every target, each as its own
// compare-and-set with the target's expected state and version. The
// returned outcomes are in the order of targets. An error is returned only
// when the decision itself is invalid (nothing is written) or the ledger
// failed; refusals are outcomes.
func (s *Service) DecideMany(ctx context.Context, action model.Action, d Decision, targets []Target) ([]Outcome, error) {
	if !action.Valid() {
		return nil, model.Errorf(model.CodeInvalid, "unknown action %q", action)
	}
	if len(targets) == 0 {
		return nil, model.Errorf(model.CodeInvalid, "no operations to decide on")
	}
	if len(targets) > MaxBulk {
		return nil, model.Errorf(model.CodeInvalid, "%d operations at once is over the limit of %d", len(targets), MaxBulk)
	}
	if action == model.ActionAuthorizeKey && d.NewKey != "" {
		return nil, model.Errorf(model.CodeInvalid, "a bulk new key cannot be named: each operation gets its own")
	}
	for _, t := range targets {
		one := d
		one.Tenant, one.Key = t.Tenant, t.Key
		if err := one.Validate(action); err != nil {
			return nil, err
		}
	}
	out := make([]Outcome, len(targets))
	for start := 0; start < len(targets); start += chunk {
		end := min(start+chunk, len(targets))
		err := s.Store.WithTx(ctx, func(tx store.Tx) error {
			for i := start; i < end; i++ {
				o, err := s.decideOne(tx, action, d, targets[i])
				if err != nil {
					return err
				}
				out[i] = o
			}
			return nil
		})
		if err != nil {
			return out[:start], err
		}
	}
	return out, nil
}

// decideOne is one target's decision inside tx. A refusal is an outcome; an
// error is returned only when the transaction itself must not commit.
func (s *Service) decideOne(tx store.Tx, action model.Action, d Decision, t Target) (Outcome, error) {
	d.Tenant, d.Key, d.ExpectState, d.ExpectVersion = t.Tenant, t.Key, t.ExpectState, t.ExpectVersion
	var newOp *model.Operation
	var apply applyFunc
	switch action {
	case model.ActionMarkApplied:
		apply = s.markApplied(d)
	case model.ActionMarkNotApplied:
		apply = markNotApplied
	case model.ActionAuthorizeKey:
		d.NewKey = NewKeyFor(d.Key)
		apply = authorize(d, &newOp)
	}
	o := Outcome{Target: t}
	op, err := decideTx(tx, d, action, apply)
	if op != nil {
		o.State, o.Version = op.State, op.Version
	}
	switch model.CodeOf(err) {
	case "":
		o.Verdict = VerdictWritten
		if newOp != nil {
			o.NewKey = newOp.Key
		}
		return o, nil
	case model.CodeStale:
		o.Verdict, o.Err = VerdictStale, err
	case model.CodeIllegal:
		o.Verdict, o.Err = VerdictIllegal, err
	case model.CodeNotFound, model.CodeConflict:
		o.Verdict, o.Err = VerdictFailed, err
	default:
		// The ledger failed mid-transaction: nothing of this chunk may
		// commit half-decided.
		return o, fmt.Errorf("%s/%s: %w", t.Tenant, t.Key, err)
	}
	return o, nil
}
