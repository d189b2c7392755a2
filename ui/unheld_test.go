package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// released leaves tenant/key in_progress with its claim released: the
// provider (honouring keys) was sent it and the reply was lost.
func (l *ledger) released(t testing.TB, tenant, key, to string) {
	t.Helper()
	res, err := l.svc.Call(context.Background(), model.Request{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":` + quote(to) + `,"body":"disk full"}`), TraceID: "trace-" + key, WorkerID: "worker-1"},
		reconcile.CallOptions{Provider: "sandbox-idem", Faults: provider.Faults{LoseReply: true}})
	if err != nil || res.Class != model.ClassInProgress {
		t.Fatalf("%s/%s: %s %v; want in_progress, released", tenant, key, res.Class, err)
	}
	l.clock.Advance(time.Second)
}

// R6 D3: an in_progress operation nobody holds — its claim released, or
// its lease ended — offers the keys an unknown one does, in the detail and
// on the list's help line, and they open the same forms and reviews; one
// whose lease is live offers none, and a / n / s on it say why in the
// banner (a worker may be sending it), writing nothing.
func TestTheConsoleDecidesAnInProgressNobodyHolds(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, l *ledger)
		live bool
		says string // the detail
	}{
		{"released", func(t *testing.T, l *ledger) { l.released(t, "acme", "k", "ops@acme.example") }, false, "Its claim was released"},
		{"lease ended", func(t *testing.T, l *ledger) {
			l.inFlight(t, "acme", "k", "ops@acme.example")
			l.clock.Advance(2 * time.Hour)
		}, false, "The lease ended"},
		{"lease live", func(t *testing.T, l *ledger) { l.inFlight(t, "acme", "k", "ops@acme.example") }, true, "A worker holds the claim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			l.task(t, "acme", "other", "a local task") // another row, so the cursor has a choice
			c.make(t, l)
			h := open(t, config(l), 120, 40)
			selectOp(t, h, "acme/k")
			help := h.view()
			help = help[strings.LastIndex(strings.TrimRight(help, "\n"), "\n")+1:]
			if got := strings.Contains(help, "not applied"); got == c.live {
				t.Errorf("list help line offers not applied: %v, want %v: %q", got, !c.live, help)
			}
			h.keys("enter")
			containsText(t, h, c.says)
			v := h.view()
			help = v[strings.LastIndex(strings.TrimRight(v, "\n"), "\n")+1:]
			for _, w := range []string{"applied", "not applied", "new key"} {
				if got := strings.Contains(help, w); got == c.live {
					t.Errorf("detail help line offers %q: %v, want %v: %q", w, got, !c.live, help)
				}
			}
			before := l.get(t, "acme", "k").Operation
			if c.live {
				containsText(t, h, "No decision while its lease is live")
				for _, k := range []string{"a", "n", "s"} {
					h.keys(k)
					containsText(t, h, "a worker holds its claim")
					if h.m.action.stage == stageConfirm || (h.m.action.fields != nil && !h.m.action.closed) {
						t.Fatalf("%s opened a form on a live lease", k)
					}
				}
				if got := l.get(t, "acme", "k").Operation; got.Version != before.Version {
					t.Errorf("the ledger moved: v%d → v%d", before.Version, got.Version)
				}
				return
			}
			containsText(t, h, "you may settle it as an unknown one")
			h.confirmMarkApplied("sbx_1", "provider console shows it")
			containsText(t, h, "in_progress", "applied")
			h.keys("y")
			if got := l.get(t, "acme", "k").Operation; got.State != model.StateApplied || got.Version != before.Version+1 {
				t.Errorf("after y: %s v%d; want applied v%d", got.State, got.Version, before.Version+1)
			}
		})
	}
}

// Left to itself (no Config.Now), the console judges leases by the
// ledger's clock — on PostgreSQL the database server's — not the host's:
// a lease the ledger calls live offers no decision even where the host's
// clock (here, years later than the ledger's) would call it ended.
func TestTheConsoleJudgesLeasesByTheLedgersClock(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "k", "ops@acme.example")
	cfg := config(l)
	cfg.Now = nil
	h := open(t, cfg, 120, 40)
	selectOp(t, h, "acme/k")
	h.keys("enter")
	containsText(t, h, "A worker holds the claim")
	v := h.view()
	if help := v[strings.LastIndex(strings.TrimRight(v, "\n"), "\n")+1:]; strings.Contains(help, "not applied") {
		t.Errorf("a live lease (by the ledger's clock) offers not applied: %q", help)
	}
}
