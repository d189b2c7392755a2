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

// An operation marked applied whose provider a later check finds nothing
// of is flagged contradicted (reconcile.Look): the list draws it with
// "!", and the detail says what contradicts it — the lookup that found
// nothing, who asked and when — not a late answer it does not have.
func TestTheConsoleShowsALookupThatFoundNothingOfAnAppliedOperation(t *testing.T) {
	l := newLedger(t)
	l.svc.DispatchTimeout = 20 * time.Millisecond
	if res := l.notify(t, "acme", "k", "ops@acme.example", provider.Faults{Delay: 2 * time.Second}); res.Class != model.ClassUnknown {
		t.Fatalf("set-up: %s; want unknown", res.Class)
	}
	l.decide(t, model.ActionMarkApplied, "acme", "k")
	l.clock.Advance(l.svc.Lease + reconcile.DefaultDispatchGrace)
	if _, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "console by carol"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
		t.Fatalf("check: %+v %v; want has nothing", looked.Finding, err)
	}
	if op := l.get(t, "acme", "k").Operation; op.State != model.StateApplied || !op.Contradicted {
		t.Fatalf("after the check: %s contradicted=%v; want applied, contradicted", op.State, op.Contradicted)
	}
	h := open(t, config(l), 140, 50)
	var row string
	for _, line := range strings.Split(h.view(), "\n") {
		if strings.Contains(line, " k ") {
			row = line
		}
	}
	if !strings.Contains(row, "!") || !strings.Contains(row, "applied") || !strings.Contains(row, "has nothing") {
		t.Errorf("the list row: %q; want ! applied … has nothing", row)
	}
	selectOp(t, h, "acme/k")
	h.keys("enter")
	containsText(t, h, "Recorded as applied, but a later provider answer says it was not",
		"! Contradicted: a provider lookup found nothing of it after it was recorded applied (console by carol")
	h.lacks("arrived after the operation was settled")
}
