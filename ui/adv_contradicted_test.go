package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// A not_applied operation the provider's late result contradicts: the
// provider answered "applied" (sbx_…) after a person marked it not
// applied. Authorizing a new key for it sends the e-mail or payment a
// second time — as surely as after a lookup that found it, where the
// console asks for the typed override. Before, the new-key form and its
// review said nothing of the provider's answer and y wrote it; "a" did not
// start from the provider's reference either.
func TestAdvANewKeyAgainstTheProvidersLateAppliedNeedsTheOverride(t *testing.T) {
	l := fixture(t)
	d := l.get(t, "acme", "notify-contra")
	ref := ""
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeLateResult {
			ref = a.ProviderRef
		}
	}
	if ref == "" || !d.Operation.Contradicted || d.Operation.State != model.StateNotApplied {
		t.Fatalf("fixture: want a contradicted not_applied with a late ref, got %+v", d.Operation)
	}
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "acme/notify-contra")
	h.keys("enter", "s")
	containsText(t, h, "! Against", ref)
	h.typeText("resend it")
	h.keys("enter", "enter")
	containsText(t, h, ref, "override")
	h.keys("y")
	if got := l.get(t, "acme", "notify-contra").Operation.State; got != model.StateNotApplied {
		t.Fatalf("a new key was authorized without the override: %s", got)
	}
	h.keys("esc", "esc")
	h.keys("a")
	if v := h.view(); !strings.Contains(v, "› "+ref) {
		t.Fatalf("mark applied does not start from the provider's reference %s:\n%s", ref, v)
	}
}

// The same for a failed operation a late "applied" contradicts (an
// earlier attempt's answer arriving after a later one was refused): its
// one decision, a new key, sends it a second time.
func TestAdvANewKeyForAFailedOperationTheProviderSaysItAppliedNeedsTheOverride(t *testing.T) {
	l := fixture(t)
	l.contradictLate(t, "initech", "notify-rejected", "sbx_late", "provider said applied after the operation had moved to failed")
	h := open(t, config(l), 120, 40)
	h.keys("8")
	selectOp(t, h, "initech/notify-rejected")
	h.keys("enter", "s")
	containsText(t, h, "! Against", "sbx_late")
	h.typeText("resend it")
	h.keys("enter", "enter", "y")
	if got := l.get(t, "initech", "notify-rejected").Operation.State; got != model.StateFailed {
		t.Fatalf("a new key was authorized without the override: %s", got)
	}
}
