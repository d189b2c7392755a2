package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// saysHonoursKeys is the sandbox provider under a config that says it
// honours downstream keys, where the worker that claimed said it did not.
type saysHonoursKeys struct{ provider.Provider }

func (saysHonoursKeys) HonoursKeys() bool { return true }

// heldBackLedger is two claims made where provider sandbox was said to
// ignore downstream keys, their leases ended, and a console whose config
// says sandbox honours them: its sweep holds both back (NotResent).
func heldBackLedger(t *testing.T) (*ledger, Config) {
	t.Helper()
	l := newLedger(t)
	l.inFlight(t, "acme", "gone-1", "ops@acme.example")
	l.inFlight(t, "acme", "gone-2", "ops@acme.example")
	l.clock.Advance(2 * time.Hour)
	reg := provider.Registry{}
	for k, v := range l.svc.Providers {
		reg[k] = v
	}
	reg["sandbox"] = saysHonoursKeys{l.svc.Providers["sandbox"]}
	cfg := config(l)
	cfg.Service = reconcile.New(l.st, toolconfig.Default().Tools, reg)
	return l, cfg
}

// The sweep's confirmation says a claim whose record does not say its
// provider honoured keys is not re-sent; its result says how many were
// held back and why, at 120×35 in full and at 40×10 a window that ↑↓ move.
func TestASweepSaysWhichClaimsItDidNotResendAndWhy(t *testing.T) {
	why := "the claim was made by a config where provider sandbox does not honour downstream keys"
	for _, size := range []struct{ w, h int }{{120, 35}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			name := func(what string) string { return fmt.Sprintf("%s_%dx%d", what, size.w, size.h) }
			l, cfg := heldBackLedger(t)
			h := open(t, cfg, size.w, size.h)
			h.keys("S")
			if size.w >= 120 {
				containsText(t, h, "both in this config and in the one that made the claim", "whose own record does not say its provider honoured keys is not re-sent")
			} else {
				containsText(t, h, "2 leases ended")
			}
			golden(t, name("sweep_confirm"), h.view())
			checkFrame(t, "sweep confirmation", h, size.w, size.h)
			h.keys("y")
			for _, k := range []string{"gone-1", "gone-2"} {
				if d := l.get(t, "acme", k); d.Operation.State != model.StateUnknown {
					t.Fatalf("%s: %s after the sweep, want unknown", k, d.Operation.State)
				}
			}
			h.contains("Swept: 2 not re-sent")
			golden(t, name("sweep_not_resent"), h.view())
			checkFrame(t, "sweep result", h, size.w, size.h)
			// Every word of why is on screen: in full, or by scrolling.
			if size.w >= 120 {
				containsText(t, h, "Not re-sent: 2 of those, made unknown instead", why+" (this one says it does)", "2 claims nobody held → unknown, 0 re-sent")
				h.lacks("↑↓") // all of it fits
			} else {
				h.contains("↑↓ 1–")
				seen := boxText(h.view())
				for range 30 {
					h.keys("down")
					seen += " " + boxText(h.view())
				}
				for _, w := range strings.Fields(why) {
					if !strings.Contains(seen, w) {
						t.Errorf("scrolling never shows %q:\n%s", w, seen)
					}
				}
				h.keys("k")
				golden(t, name("sweep_not_resent_scrolled"), h.view())
			}
			h.keys("enter")
			h.lacks("Swept: 2 not re-sent")
			if size.h >= 35 {
				h.contains("2 not re-sent: the claim's record does not say its provider honoured keys")
			}
		})
	}
}

// The sweep's result box fits every terminal, through a resize storm,
// and scrolling past either end stays within its lines.
func TestTheSweepResultFitsEverySize(t *testing.T) {
	_, cfg := heldBackLedger(t)
	h := open(t, cfg, 80, 24)
	h.keys("S", "y")
	h.contains("Swept: 2 not re-sent")
	for _, s := range [][2]int{{1, 1}, {20, 5}, {30, 8}, {40, 10}, {60, 20}, {200, 60}, {40, 10}} {
		h.send(tea.WindowSizeMsg{Width: s[0], Height: s[1]})
		checkFrame(t, fmt.Sprintf("sweep result at %dx%d", s[0], s[1]), h, s[0], s[1])
		for _, k := range []string{"G", "down", "pgdown", "g", "up", "pgup"} {
			h.keys(k)
			checkFrame(t, fmt.Sprintf("sweep result at %dx%d after %s", s[0], s[1], k), h, s[0], s[1])
		}
	}
	h.keys("G")
	h.contains("↑↓ 13–15 of 15")
	h.keys("up")
	h.contains("↑↓ 12–14 of 15")
	h.keys("esc")
	h.lacks("Swept: 2 not re-sent")
}
