package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// s (a new key) on one operation nobody checked asks its provider first,
// as n does: a provider that has the effect makes the review take the
// typed override — y writes nothing, and no new key exists to send it a
// second time; one that cannot tell leaves the new key to the operator,
// the review saying so. Without the look the review offered a plain
// "y write it" and the new key's first call delivered it again.
func TestNewKeyOnOneOperationAsksTheProviderFirst(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {40, 10}} {
		for _, c := range []struct {
			name      string
			gone      bool
			see       []string
			wantState model.State
			sends     int
		}{
			{name: "has it", see: []string{"Type override"}, wantState: model.StateUnknown, sends: 1},
			{name: "cannot tell", gone: true, see: []string{"cannot tell", "y write it"}, wantState: model.StateSuperseded, sends: 2},
		} {
			t.Run(fmt.Sprintf("%s %dx%d", c.name, size[0], size[1]), func(t *testing.T) {
				l := newLedger(t)
				l.unknown(t, "acme", "notify-1", "oncall@acme.example")
				cfg := config(l)
				if c.gone {
					noGrace(l) // cannot tell after the grace (grace_test.go: within it)
					cfg.Service = cannotAsk(t, l)
				}
				h := open(t, cfg, size[0], size[1])
				h.keys("enter", "s")
				h.typeText("customer asked again")
				h.keys("tab")
				h.typeText("notify-1b")
				h.keys("enter")
				review := h.view()
				for _, w := range c.see {
					if !strings.Contains(review, w) {
						t.Fatalf("the review lacks %q:\n%s", w, review)
					}
				}
				h.keys("y")
				d := l.get(t, "acme", "notify-1")
				if d.Operation.State != c.wantState {
					t.Fatalf("after y: %s, want %s\n%s", d.Operation.State, c.wantState, h.view())
				}
				if d.Operation.Finding == nil {
					t.Fatalf("the lookup was not recorded: %+v", d.Attempts)
				}
				if c.wantState == model.StateSuperseded {
					l.notify(t, "acme", "notify-1b", "oncall@acme.example", provider.Faults{})
				}
				n, err := l.sb.Deliveries(context.Background(), "")
				if err != nil {
					t.Fatal(err)
				}
				if n != c.sends {
					t.Fatalf("%d deliveries, want %d", n, c.sends)
				}
				if c.wantState == model.StateUnknown {
					// The typed override writes the new key, on purpose.
					h.keys("backspace") // the y went into the override field
					h.typeText("override")
					h.keys("enter")
					if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateSuperseded {
						t.Fatalf("after the typed override: %s, want superseded\n%s", d.Operation.State, h.view())
					}
				}
			})
		}
	}
}
