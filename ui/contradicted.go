package ui

import (
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// lateApplied is the provider's own late answer on a not_applied or failed
// operation it contradicts — it said "applied", after a person had marked
// it not applied or another attempt was refused — as a finding that found the effect: as strong as a lookup's
// "has it" (a provider never takes a delivery back), so a new key is
// against it (the typed override; its first call sends the e-mail or
// payment a second time) and "applied" starts from its reference. atts
// are the operation's attempts (the detail's), for the reference; nil
// for none. nil unless op is a contradicted not_applied or failed
// operation (reconcile's contradiction: the provider said applied).
func lateApplied(op model.Operation, atts []model.Attempt) *provider.Evidence {
	if op.State != model.StateNotApplied && op.State != model.StateFailed || !op.Contradicted {
		return nil
	}
	ev := &provider.Evidence{Provider: op.Provider, DownstreamKey: op.DownstreamKey, Found: true,
		Detail: "its late result said applied"}
	for _, a := range atts {
		if a.Outcome == model.OutcomeLateResult && a.OperationID == op.ID && a.ProviderRef != "" {
			ev.Ref, ev.At = textsafe.Visible(a.ProviderRef), a.StartedAt
		}
	}
	return ev
}
