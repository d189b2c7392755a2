package reconcile

import (
	"context"

	"github.com/retrysafe/retrysafe/model"
)

// Before a bulk "not applied": every operation its provider can be asked
// about is asked (or its recorded fresh finding is used), so that the rule
// decideTx applies to each row — a decision against the latest recorded
// finding is refused without Override — has a finding to apply. A row whose
// provider has the effect is then refused per row, naming the finding; a
// row the provider cannot tell about stays the operator's decision, on
// the evidence typed for all of them.

// NeedsLook reports whether op should be looked up before action is
// decided on it: "not applied" on an operation that allows it, sent to a
// provider, whose latest finding is not a fresh conclusive one (never
// checked, cannot tell, or stale), or is a "has nothing" this process did
// not ask for itself (askedHere: the ledger may be a restored backup or a
// copy). A provider this service's config does
// not name is asked too: its lookup is "cannot tell" ("no provider … is
// configured"), recorded on the row — not a row written on the typed
// evidence with nothing said (a bulk run without the agents' --config).
func (s *Service) NeedsLook(action model.Action, op model.Operation) bool {
	if !asksFirst(action, op) || !(AllowedFor(op, action) || s.unheldNow(op) && AllowedAt(op, action, s.Store.Now())) || op.Provider == "" || op.DownstreamKey == "" {
		return false
	}
	return !op.Finding.Conclusive() || !s.askedItself(op)
}

// askedItself reports whether op's latest finding, a "has nothing", is
// one this process recorded; a "has it" binds whoever asked (a provider
// never takes a delivery back), so it is true for one.
func (s *Service) askedItself(op model.Operation) bool {
	f := op.Finding
	return f == nil || f.Kind != model.FindingHasNothing || s.asked.has(op.ID, f.Seq)
}

// LookFirst asks the provider about every op that NeedsLook (at most
// DefaultTriageConcurrency at once, each provider's LookupRate a
// second), records each finding as `by` (Look), and returns ops in the
// same order with their findings as recorded. A lookup that could not be
// made is "cannot tell" on its row, never an error; the error is the
// ledger's (a finding that could not be recorded) or ctx's.
func (s *Service) LookFirst(ctx context.Context, action model.Action, ops []model.Operation, by string) ([]model.Operation, error) {
	out := make([]model.Operation, len(ops))
	copy(out, ops)
	var todo []int
	var asked []model.Operation
	for i, op := range out {
		if s.NeedsLook(action, op) {
			todo = append(todo, i)
			asked = append(asked, op)
		}
	}
	limiters := s.lookupLimiters(asked, 0)
	if len(todo) == 0 {
		return out, nil
	}
	var first error
	s.lookEach(ctx, asked, DefaultTriageConcurrency, limiters, by, nil, func(j int, _ model.Operation, l Looked, err error) {
		switch {
		case err != nil && first == nil:
			first = err
		case err == nil:
			f := l.Finding
			op := &out[todo[j]]
			op.Finding = &f
			// The new lookup binds unless an earlier "has it" still does
			// (a provider never takes a delivery back): the list's binding
			// finding goes when this one says as much.
			if bf := op.BindingFinding; bf != nil && (f.Kind == model.FindingHasIt || (f.Kind == model.FindingHasNothing && bf.Kind == model.FindingHasNothing)) {
				op.BindingFinding = nil
			}
		}
	})
	if first == nil {
		first = ctx.Err()
	}
	return out, first
}

// AgainstFinding reports whether deciding action on op (as listed, with
// its findings) goes against the finding that binds it — an earlier "has
// it" before a later "cannot tell" too (op.Binding) — and names it: the
// same rule the write applies (Against over EvidenceOf of
// LatestConclusiveFinding, then AppliedEvidence), for a review to show
// before anything is written.
func AgainstFinding(action model.Action, op model.Operation) (bool, string) {
	ev := EvidenceOf(op.Binding())
	if op.State == model.StateAuthorized {
		// A new key not yet used was never sent: its own lookups say
		// nothing about the effect (bindingFindingTx). The replaced key's
		// finding binds it, and the write checks that one.
		ev = nil
	}
	if !Against(action, ev) {
		// An applied operation's own receipt counts too (decideTx).
		if ev = AppliedEvidence(op); !Against(action, ev) {
			return false, ""
		}
	}
	return true, FindingText(ev)
}
