package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// cannotSendHere is a provider that honours downstream keys but cannot
// dispatch from this process (provider.Checker): a ${NAME} unset here.
type cannotSendHere struct{ saysHonoursKeys }

func (cannotSendHere) CanDispatch() error {
	return errors.New("${SANDBOX_TOKEN} is not set")
}

// notSentLedger is one claim made where sandbox did not honour downstream
// keys (held back: NotResent) and two made where it did, their leases
// ended, and a console whose config says sandbox honours keys but cannot
// dispatch from this process: its sweep leaves those two in progress
// (NotSent).
func notSentLedger(t *testing.T) (*ledger, Config) {
	t.Helper()
	l := newLedger(t)
	l.inFlight(t, "acme", "gone-1", "ops@acme.example")
	reg := provider.Registry{}
	for k, v := range l.svc.Providers {
		reg[k] = v
	}
	reg["sandbox"] = saysHonoursKeys{l.svc.Providers["sandbox"]}
	l.svc.Providers = reg
	l.inFlight(t, "acme", "keyed-1", "ops@acme.example")
	l.inFlight(t, "acme", "keyed-2", "ops@acme.example")
	l.clock.Advance(2 * time.Hour)
	here := provider.Registry{}
	for k, v := range reg {
		here[k] = v
	}
	here["sandbox"] = cannotSendHere{saysHonoursKeys{reg["sandbox"].(saysHonoursKeys).Provider}}
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, toolconfig.Default().Tools, here)
	return l, cfg
}

// A sweep that sent nothing for claims it would have re-sent (the
// provider cannot dispatch from this process) says how many in its banner
// and why in its box, beside those it held back; at 40×10 the box scrolls.
func TestASweepSaysWhichClaimsItCouldNotSendAndWhy(t *testing.T) {
	why := "provider sandbox cannot dispatch from this process: ${SANDBOX_TOKEN} is not set"
	for _, size := range []struct{ w, h int }{{120, 35}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			name := func(what string) string { return fmt.Sprintf("%s_%dx%d", what, size.w, size.h) }
			l, cfg := notSentLedger(t)
			h := open(t, cfg, size.w, size.h)
			h.keys("S", "y")
			if d := l.get(t, "acme", "gone-1"); d.Operation.State != model.StateUnknown {
				t.Fatalf("gone-1: %s after the sweep, want unknown", d.Operation.State)
			}
			for _, k := range []string{"keyed-1", "keyed-2"} {
				if d := l.get(t, "acme", k); d.Operation.State != model.StateInProgress {
					t.Fatalf("%s: %s after the sweep, want in_progress", k, d.Operation.State)
				}
			}
			h.contains("Swept: 1 not re-sent, 2 not sent")
			golden(t, name("sweep_not_sent"), h.view())
			checkFrame(t, "sweep result", h, size.w, size.h)
			if size.w >= 120 {
				containsText(t, h, "Not sent: 2, not counted above, left in progress", why, "Not re-sent: 1 of those")
				h.lacks("↑↓")
			} else {
				h.contains("↑↓ 1–")
				seen := boxText(h.view())
				for range 40 {
					h.keys("down")
					seen += " " + boxText(h.view())
				}
				for _, w := range append(strings.Fields(why), "left", "progress") {
					if !strings.Contains(seen, w) {
						t.Errorf("scrolling never shows %q:\n%s", w, seen)
					}
				}
			}
			h.keys("enter")
			h.lacks("Swept: 1 not re-sent")
			if size.h >= 35 {
				h.contains("2 not sent (left in progress: this process cannot send them)")
			}
		})
	}
}

// Only claims not sent: the box says so, and nothing of "not re-sent".
func TestASweepThatOnlyCouldNotSendSaysSo(t *testing.T) {
	l, cfg := notSentLedger(t)
	// gone-1 settled beforehand: only the keyed claims are left.
	if _, err := l.svc.SweepKeys(t.Context(), "acme", []string{"gone-1"}); err != nil {
		t.Fatal(err)
	}
	h := open(t, cfg, 120, 35)
	h.keys("S", "y")
	h.contains("Swept: 2 not sent")
	h.lacks("not re-sent", "Reconcile them on the unknown tab")
	containsText(t, h, "in_progress tab")
}
