package reconcile

import (
	"context"
	"errors"
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
// Its JSON (ops resolve --yes --json) is snake_case like every other.
type Target struct {
	Tenant        string      `json:"tenant"`
	Key           string      `json:"key"`
	ExpectState   model.State `json:"expect_state,omitempty"`
	ExpectVersion int64       `json:"expect_version,omitempty"` // 0: whatever it is now
	// Finding, when set, is the provider finding the operator decided on
	// for this operation (a review by finding): it is the decision's
	// finding, and the decision is refused as stale if another lookup or
	// attempt was recorded since.
	Finding *model.Finding `json:"finding,omitempty"`
	// Evidence, when set, is this operation's own evidence (a "has it"
	// review: the provider's reference), in place of the decision's.
	Evidence string `json:"evidence,omitempty"`
	// Seen, when set, is the number of the latest lookup the operator saw
	// for this operation when confirming (0: none was recorded; SeeLookups).
	// With Override the decision is refused as stale if another lookup was
	// recorded since: the override confirmed the findings on screen, not a
	// "has it" another operator's check recorded after them.
	Seen *int `json:"-"`
}

// SeeLookups sets each target's Seen from the operation it was made from
// (ops[i], with its latest finding as shown).
func SeeLookups(targets []Target, ops []model.Operation) {
	for i := range targets {
		seq := 0
		if f := ops[i].Finding; f != nil {
			seq = f.Seq
		}
		targets[i].Seen = &seq
	}
}

// apply is d for this target: its own finding and evidence, if it has them.
func (t Target) apply(d Decision) Decision {
	d.Tenant, d.Key = t.Tenant, t.Key
	if t.Finding != nil {
		d.Finding = EvidenceOf(t.Finding)
	}
	if t.Evidence != "" {
		d.Evidence = t.Evidence
	}
	return d
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
	// VerdictSkipped: its latest request is within its grace — the
	// provider may still apply it (ErrWithinGrace): nothing written.
	VerdictSkipped Verdict = "skipped"
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
		if err := t.apply(d).Validate(action); err != nil {
			return nil, err
		}
	}
	out := make([]Outcome, len(targets))
	for start := 0; start < len(targets); start += chunk {
		end := min(start+chunk, len(targets))
		// The chunk's graces are read before its transaction, in one
		// batched read, and each row's is checked in it (decideTx), against
		// the claim it was read at.
		graces, err := s.gracesFor(ctx, d, action, targets[start:end])
		if err != nil {
			return out[:start], err
		}
		err = s.Store.WithTx(ctx, func(tx store.Tx) error {
			for i := start; i < end; i++ {
				o, err := s.decideOne(tx, action, d, targets[i], graces[i-start])
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
func (s *Service) decideOne(tx store.Tx, action model.Action, d Decision, t Target, g *RequestGrace) (Outcome, error) {
	d = t.apply(d)
	d.ExpectState, d.ExpectVersion = t.ExpectState, t.ExpectVersion
	o := Outcome{Target: t}
	if t.Finding != nil {
		if stale, err := findingMoved(tx, t); err != nil || stale != nil {
			if stale != nil {
				o.Verdict, o.Err = VerdictStale, stale
			}
			return o, err
		}
	}
	if d.Override && t.Seen != nil {
		if moved, err := lookedUpSince(tx, t); err != nil || moved != nil {
			if moved != nil {
				o.Verdict, o.Err = VerdictStale, moved
			}
			return o, err
		}
	}
	var newOp *model.Operation
	var apply applyFunc
	switch action {
	case model.ActionMarkApplied:
		rd, err := ownReference(tx, d, t)
		if err != nil {
			return o, err
		}
		apply = s.markApplied(rd)
	case model.ActionMarkNotApplied:
		apply = markNotApplied
	case model.ActionAuthorizeKey:
		d.NewKey = NewKeyFor(d.Key)
		apply = authorize(d, &newOp)
	}
	op, err := decideTx(tx, d, action, apply, g)
	if op != nil {
		o.State, o.Version = op.State, op.Version
	}
	if errors.Is(err, ErrWithinGrace) {
		o.Verdict, o.Err = VerdictSkipped, err
		return o, nil
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

// lookedUpSince refuses an overriding decision on t if a lookup was
// recorded after the one the operator saw (t.Seen). A refusal is the
// first result; the second is the ledger's error.
func lookedUpSince(tx store.Tx, t Target) (error, error) {
	op, err := tx.GetOperation(t.Tenant, t.Key)
	if model.IsCode(err, model.CodeNotFound) {
		return nil, nil // decideTx says so
	}
	if err != nil {
		return nil, err
	}
	latest, err := tx.LatestFinding(op.ID)
	if err != nil || latest == nil || latest.Seq == *t.Seen {
		return nil, err
	}
	return model.Errorf(model.CodeStale, "%s/%s was looked up again after you confirmed the override: the provider now says %s — the override was for what you saw; nothing was written, look again",
		t.Tenant, t.Key, latest.Kind.Words()), nil
}

// findingMoved refuses a decision made on a finding that is no longer the
// operation's latest fresh one: another lookup answered since, or another
// attempt made it stale. A refusal is the first result; the second is the
// ledger's error.
func findingMoved(tx store.Tx, t Target) (error, error) {
	op, err := tx.GetOperation(t.Tenant, t.Key)
	if model.IsCode(err, model.CodeNotFound) {
		return nil, nil // decideTx says so
	}
	if err != nil {
		return nil, err
	}
	if t.Finding.Kind == model.FindingHasIt {
		// A "has it" binds for good (a provider never takes a delivery
		// back): a later "cannot tell", "has nothing" or retry moves
		// nothing, only a newer lookup that found it again does.
		b, err := tx.LatestConclusiveFinding(op.ID)
		if err != nil {
			return nil, err
		}
		if b != nil && b.Kind == model.FindingHasIt && b.Seq == t.Finding.Seq {
			return nil, nil
		}
	}
	latest, err := tx.LatestFinding(op.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case latest == nil:
		return model.Errorf(model.CodeStale, "%s/%s has no recorded finding any more — nothing was written; look again", t.Tenant, t.Key), nil
	case latest.Seq != t.Finding.Seq:
		return model.Errorf(model.CodeStale, "%s/%s was looked up again since you saw \"%s\": the provider now says %s — nothing was written; look again",
			t.Tenant, t.Key, t.Finding.Kind.Words(), latest.Kind.Words()), nil
	case latest.Stale:
		return model.Errorf(model.CodeStale, "%s/%s had an attempt that may have reached the provider after the finding you saw, so the provider may know more — nothing was written; check it again",
			t.Tenant, t.Key), nil
	}
	return nil, nil
}

// ownReference is d for the receipt of one row of a bulk "mark applied":
// the evidence typed for every row stays the decision's evidence, but the
// receipt names the reference of the "has it" that binds this row
// (bindingFindingTx: a held new key's is the replaced key's), not another
// operation's reference typed once for all of them. A row with no such
// finding gets no reference from the typed text either — only the one its
// own attempts recorded, if any: one reference typed for several
// operations would have each of them replay it. A row's own evidence
// (t.Evidence: a review by finding, the provider's reference) is its own.
func ownReference(tx store.Tx, d Decision, t Target) (Decision, error) {
	if t.Evidence != "" {
		return d, nil
	}
	d.Evidence = ""
	op, err := tx.GetOperation(d.Tenant, d.Key)
	if model.IsCode(err, model.CodeNotFound) {
		return d, nil // decideTx says so
	}
	if err != nil {
		return d, err
	}
	f, err := bindingFindingTx(tx, op)
	if err != nil {
		return d, err
	}
	if f != nil && f.Kind == model.FindingHasIt && f.Ref != "" {
		d.Evidence = f.Ref
	}
	return d, nil
}
