package ui

import (
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// lateApplied is the provider's own late answer that it applied, as a
// finding that found the effect — as strong as a lookup's "has it" (a
// provider never takes a delivery back): a "not applied" or a new key is
// against it (the typed override; the next call sends the e-mail or
// payment a second time), and "applied" (legal for both, reconcile.LegalFor)
// starts from its reference. Two
// operations carry one:
//   - unknown with a provider reference: the answer came after the call
//     had given up on it (a sweep made it unknown), and put its reference
//     on the operation (reconcile's lateResult), which stays unknown;
//   - not_applied or failed and contradicted: it said "applied" after a
//     person marked it not applied or another attempt was refused
//     (reconcile's contradiction); its reference is on the late_result
//     attempt — atts, the detail's attempts (nil: none known).
//
// nil for any other operation. Since the ledger records such an answer as
// a "has it" lookup (reconcile's lateResult), which binds every decision,
// this covers operations written before it did: for them the console
// alone asks for the override.
func lateApplied(op model.Operation, atts []model.Attempt) *provider.Evidence {
	ev := &provider.Evidence{Provider: op.Provider, DownstreamKey: op.DownstreamKey, Found: true,
		Status: reconcile.StatusLate, Detail: "its late result said applied"}
	switch {
	case op.State == model.StateUnknown && op.ProviderRef != "":
		ev.Ref = textsafe.Visible(op.ProviderRef)
		return ev
	case (op.State == model.StateNotApplied || op.State == model.StateFailed) && op.Contradicted:
		for _, a := range atts {
			if a.Outcome == model.OutcomeLateResult && a.OperationID == op.ID && a.ProviderRef != "" {
				ev.Ref, ev.At = textsafe.Visible(a.ProviderRef), a.StartedAt
			}
		}
		return ev
	}
	return nil
}
