package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
)

// n on one operation nobody checked asks its provider first, as the bulk
// review does (reconcile.LookFirst), and the review shows what it said: a
// provider that has the effect needs the typed override — y writes
// nothing, and the next call replays no second delivery; one that cannot
// tell leaves the decision to the typed evidence. Without the look, y
// wrote "not applied" and the next call sent the notification again.
func TestNotAppliedOnOneOperationAsksTheProviderFirst(t *testing.T) {
	for _, c := range []struct {
		name      string
		gone      bool // the provider cannot be asked
		see       []string
		wantState model.State
		sends     int
	}{
		{name: "has it", see: []string{"Write this decision", "check", "sandbox delivered sbx_", "Against the last check: the provider check found the effect", "Type override"},
			wantState: model.StateUnknown, sends: 1},
		{name: "cannot tell", gone: true, see: []string{"Write this decision", "The provider cannot tell"}, wantState: model.StateNotApplied, sends: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			l.unknown(t, "acme", "notify-1", "oncall@acme.example")
			cfg := config(l)
			if c.gone {
				noGrace(l) // cannot tell after the grace (grace_test.go: within it)
				cfg.Service = cannotAsk(t, l)
			}
			h := open(t, cfg, 120, 50)
			h.keys("enter", "n")
			h.typeText("customer says nothing arrived")
			h.keys("tab")
			h.typeText("ticket 5521")
			h.keys("enter")
			review := h.view()
			h.keys("y")
			d := l.get(t, "acme", "notify-1")
			if d.Operation.State != c.wantState {
				t.Fatalf("after y: %s, want %s", d.Operation.State, c.wantState)
			}
			if d.Operation.Finding == nil && len(d.Attempts) < 2 {
				t.Fatalf("the lookup was not recorded: %+v", d.Attempts)
			}
			l.notify(t, "acme", "notify-1", "oncall@acme.example", provider.Faults{})
			lid, err := l.st.LedgerID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n, err := l.sb.Deliveries(context.Background(), reconcile.DownstreamKey(lid, "acme", "notify-1"))
			if err != nil {
				t.Fatal(err)
			}
			if n != c.sends {
				t.Fatalf("%d deliveries after the next call, want %d", n, c.sends)
			}
			for _, w := range c.see {
				if !strings.Contains(review, w) {
					t.Fatalf("the review lacks %q:\n%s", w, review)
				}
			}
		})
	}
}

// cannotAsk is a service on l's ledger whose sandbox provider cannot be
// asked (its file is closed): every lookup is "cannot tell".
func cannotAsk(t *testing.T, l *ledger) *reconcile.Service {
	t.Helper()
	gone, err := sandbox.Open(filepath.Join(t.TempDir(), "gone.provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	svc := reconcile.New(l.st, toolconfig.Default().Tools, gone.Providers())
	svc.Grace = l.svc.Grace
	return svc
}
