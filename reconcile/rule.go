package reconcile

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// The one rule for what an operator decision needs, shared by the command
// line (ops resolve) and the console's forms: both call Problems, so a
// decision the console lets through is one the CLI would accept and the
// other way round.

// Field names a decision's field, so a form can show a problem beside it.
type Field string

const (
	FieldOperator Field = "operator"
	FieldReason   Field = "reason"
	FieldEvidence Field = "evidence"
	FieldNewKey   Field = "new_key"
	// FieldFinding is the confirmation a decision against the last
	// provider check needs (Decision.Override).
	FieldFinding Field = "finding"
)

// Problem is one thing wrong with a decision, tied to its field.
type Problem struct {
	Field   Field
	Message string
}

// Against reports whether deciding action contradicts what a provider
// check found: "not applied" when it found the effect, "applied" when it
// found nothing, and a new key when it found the effect — the new key's
// first call would make the effect a second time. A check that could not
// be made is no finding at all (nil): "cannot tell" is never evidence,
// either way.
func Against(action model.Action, f *provider.Evidence) bool {
	if f == nil {
		return false
	}
	switch action {
	case model.ActionMarkNotApplied, model.ActionAuthorizeKey:
		return f.Found
	case model.ActionMarkApplied:
		return !f.Found
	}
	return false
}

// FindingText names a finding in one line, for the confirmation that
// decides against it.
func FindingText(f *provider.Evidence) string {
	if f == nil {
		return ""
	}
	if f.Status == StatusReceipt {
		return fmt.Sprintf("its receipt says applied (%s), and only a late provider answer disagrees", or(f.Ref, "no reference"))
	}
	if f.Found && f.Status == StatusLate {
		return fmt.Sprintf("the provider's late answer said it applied it (%s)", or(f.Ref, f.Detail))
	}
	if f.Found {
		return fmt.Sprintf("the provider check found the effect (%s)", or(f.Ref, f.Detail))
	}
	return fmt.Sprintf("the provider check found nothing (%s)", f.Detail)
}

// StatusLate marks Evidence from the provider's late answer (a late result
// the ledger recorded as a "has it" by LateResultBy, or one the console
// reads off an older ledger): FindingText does not call it a check.
const StatusLate = "late_result"

// LateResultBy is who a late result's "has it" lookup is recorded as.
const LateResultBy = "late result"

// LookupEvidence is the evidence text a provider lookup that found nothing
// gives a "not applied" decision.
func LookupEvidence(f *provider.Evidence) string {
	if f == nil || f.Found {
		return ""
	}
	return "provider lookup: " + f.Detail
}

// Problems lists what keeps d from being a valid decision of kind action,
// in form order. None means it may be written (the state and version are
// checked when it is).
//
//   - every decision: an operator and a reason;
//   - mark applied: evidence (the provider reference, or where it was seen);
//   - mark not applied: evidence — a provider lookup that found nothing, or
//     a typed reason why a timeout is not the only evidence;
//   - a decision against the last provider check's finding: Override, the
//     explicit second confirmation.
func (d Decision) Problems(action model.Action) []Problem {
	var ps []Problem
	add := func(f Field, format string, args ...any) {
		ps = append(ps, Problem{Field: f, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case strings.TrimSpace(d.Operator) == "":
		add(FieldOperator, "an operator name is required (set --operator or $USER)")
	default:
		if err := model.ValidateText("operator name", d.Operator, MaxOperatorLen); err != nil {
			add(FieldOperator, "%s", err.Error())
		}
	}
	text := func(f Field, v, what string, required bool) {
		switch {
		case strings.TrimSpace(v) == "" && required:
			add(f, "%s", what)
		default:
			if err := model.ValidateText(string(f), v, MaxReasonLen); err != nil {
				add(f, "%s", err.Error())
			}
		}
	}
	text(FieldReason, d.Reason, "a reason is required: say why, for the next person who reads this", true)
	switch action {
	case model.ActionMarkApplied:
		text(FieldEvidence, d.Evidence, "marking applied needs evidence: the provider reference, or where you saw it applied", true)
	case model.ActionMarkNotApplied:
		needs := LookupEvidence(d.Finding) == ""
		text(FieldEvidence, d.Evidence, "marking not applied needs evidence: a provider lookup that found nothing, or why a timeout is not the only evidence (a ticket, the provider's console)", needs)
	default:
		text(FieldEvidence, d.Evidence, "", false)
	}
	if d.NewKey != "" {
		if err := model.ValidateIdentity(d.Tenant, d.NewKey); err != nil {
			add(FieldNewKey, "%s", err.Error())
		} else if d.NewKey == d.Key {
			add(FieldNewKey, "the new key must differ from %q", d.Key)
		}
	}
	if Against(action, d.Finding) && !d.Override {
		add(FieldFinding, "%s: deciding against it needs an explicit second confirmation", FindingText(d.Finding))
	}
	return ps
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
