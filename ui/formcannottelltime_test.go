package ui

import (
	"regexp"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// A decision form on an operation whose provider cannot tell — within the
// grace, its reason names the request's times — says those times in the
// console's clock, as the detail does, never as raw RFC 3339.
func TestTheFormsCannotTellTimesAreLocal(t *testing.T) {
	l := newLedger(t)
	l.svc.DispatchTimeout = 20 * time.Millisecond
	if res := l.notify(t, "acme", "k", "oncall@acme.example", provider.Faults{Delay: 2 * time.Second}); res.Class != model.ClassUnknown {
		t.Fatalf("set-up: %s; want unknown", res.Class)
	}
	op, _, err := l.svc.CheckAndRecord(t.Context(), "acme", "k", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if op.Finding == nil || op.Finding.Kind != model.FindingCannotTell {
		t.Fatalf("set-up: finding %+v; want cannot tell within the grace", op.Finding)
	}
	raw := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)
	for _, action := range []string{"a", "n"} {
		h := open(t, config(l), 120, 35)
		selectOp(t, h, "acme/k")
		h.keys(action)
		containsText(t, h, "cannot tell")
		if m := raw.FindString(h.view()); m != "" {
			t.Fatalf("%s form shows a raw time %q:\n%s", action, m, h.view())
		}
	}
}
