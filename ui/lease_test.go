package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A claim whose lease ended is shown as such — counted in the header,
// "lease ended" in its row, and never "a worker holds the claim" — and S
// sweeps it after a confirmation.
func TestExpiredLeasesAreShownCountedAndSwept(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "gone", "ops@acme.example")
	l.inFlight(t, "acme", "busy", "ops@acme.example")
	l.clock.Advance(30 * time.Minute)
	l.inFlight(t, "acme", "fresh", "ops@acme.example") // its lease runs for another hour
	l.clock.Advance(31 * time.Minute)                  // gone and busy: leases of one hour, ended
	cfg := config(l)
	h := open(t, cfg, 120, 40)
	h.contains("2 leases ended", "lease ended")
	h.keys("2", "G") // in_progress; the oldest
	h.keys("enter")
	h.contains("acme / gone", "The lease ended 1m ago", "the worker is gone")
	h.lacks("A worker holds the claim")
	h.keys("esc", "g", "enter")
	h.contains("acme / fresh", "A worker holds the claim")
	h.keys("esc", "S")
	h.contains("Sweep expired leases?", "2 operations in progress have a lease that ended")
	h.keys("enter") // not the key
	h.contains("Sweep expired leases?")
	if d := l.get(t, "acme", "gone"); d.Operation.State != model.StateInProgress {
		t.Fatal("enter swept")
	}
	h.keys("y")
	h.contains("Swept: 2 claims nobody held → unknown")
	if header := strings.SplitN(h.view(), "\n", 2)[0]; strings.Contains(header, "ended") || h.m.counts.ExpiredLeases != 0 {
		t.Fatalf("the header still counts ended leases: %q", header)
	}
	for key, want := range map[string]model.State{"gone": model.StateUnknown, "busy": model.StateUnknown, "fresh": model.StateInProgress} {
		if d := l.get(t, "acme", key); d.Operation.State != want {
			t.Errorf("%s: %s, want %s", key, d.Operation.State, want)
		}
	}
	cfg.ReadOnly = true
	ro := open(t, cfg, 120, 40)
	ro.keys("S")
	ro.contains("Read-only console: a sweep writes to the ledger")
}

// A trace id longer than its column is written out in full, never cut.
func TestLongTraceIDsAreShownInFull(t *testing.T) {
	l := newLedger(t)
	long := "toolu_01ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij"
	if _, err := l.svc.Call(context.Background(), model.Request{Tenant: "acme", Key: "t1", Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{"subject":"s"}`), TraceID: long, WorkerID: "w"}, reconcile.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 80, 40)
	h.keys("enter")
	h.contains("acme / t1", long)
}

// The contradicted filter is cleared by switching tabs, and says how to
// leave it.
func TestContradictedFilterDoesNotFollowToAnotherTab(t *testing.T) {
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("8", "!")
	h.contains("! contradicted only (! shows all)", "notify-contra")
	h.keys("3")
	h.lacks("contradicted only")
	if h.m.list.contraOnly {
		t.Fatal("the contradicted filter followed to another tab")
	}
}

// c on an operation whose claim is live (its lease held: the request may
// still be on its way) recorded "has nothing" and said so, as if nothing
// could still arrive. It says cannot tell, and why.
func TestACheckDuringALiveClaimCannotTell(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "fresh", "ops@acme.example")
	h := open(t, config(l), 160, 60)
	h.keys("2", "g", "enter")
	h.contains("acme / fresh", "A worker holds the claim")
	h.keys("c")
	containsText(t, h, "on its way")
	h.contains("Cannot tell")
	h.lacks("holds no delivery", "If nothing can still arrive")
	if f := l.get(t, "acme", "fresh").Operation.Finding; f == nil || f.Kind != model.FindingCannotTell {
		t.Fatalf("recorded finding %+v; want cannot tell", f)
	}
}
