package reconcile

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// FindingText names where a finding came from: a late result recorded as
// a "has it" is the provider's late answer, not a check anyone made.
func TestFindingTextNamesALateResultAsOne(t *testing.T) {
	for _, c := range []struct {
		name      string
		f         *model.Finding
		want, not string
	}{
		{"a check", &model.Finding{Kind: model.FindingHasIt, Ref: "sbx_1", By: "ops check by bob"}, "the provider check found the effect (sbx_1)", "late"},
		{"a late result", &model.Finding{Kind: model.FindingHasIt, Ref: "sbx_2", By: LateResultBy}, "the provider's late answer said it applied it (sbx_2)", "check"},
		{"nothing", &model.Finding{Kind: model.FindingHasNothing, Detail: "no delivery", By: "triage by al"}, "the provider check found nothing (no delivery)", "late"},
	} {
		got := FindingText(EvidenceOf(c.f))
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%s: %q, want %q (and no %q)", c.name, got, c.want, c.not)
		}
	}
}
