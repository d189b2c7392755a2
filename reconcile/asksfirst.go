package reconcile

import "github.com/retrysafe/retrysafe/model"

// asksFirst reports whether action is one NeedsLook asks the provider
// before: "not applied", and a new key (authorize) for an operation the
// ledger does not hold as applied — a new key for an operation whose
// provider already made the effect makes it a second time, so the
// provider is asked (and its "has it" binds the write) before the key is
// authorized. An applied operation's own receipt binds its new key
// already (AppliedEvidence).
func asksFirst(action model.Action, op model.Operation) bool {
	switch action {
	case model.ActionMarkNotApplied:
		return true
	case model.ActionAuthorizeKey:
		return op.State != model.StateApplied
	}
	return false
}
