package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// checkedThenSentAgain opens acme/wn-2 (nothing delivered) in the
// console, checks it ("has nothing"), and then — elsewhere — another
// operator marks it not applied on a ticket and the agent sends it again,
// its reply lost: the provider holds the delivery now, and the detail
// reloads at the new version (R5 #1).
func checkedThenSentAgain(t *testing.T) (*ledger, *harness) {
	t.Helper()
	l := newLedger(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	l.nothingThere(t, "acme", "wn-2", "w2@n.example")
	h := open(t, config(l), 120, 50)
	selectOp(t, h, "acme/wn-2")
	h.keys("enter", "c")
	h.contains("that is evidence to mark it not applied (n)")
	if _, err := l.second(t).MarkNotApplied(context.Background(), reconcile.Decision{Tenant: "acme", Key: "wn-2", Operator: "bob", WithinGrace: true,
		Reason: "x", Evidence: "INC-78"}); err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(1e9)
	if res := l.notify(t, "acme", "wn-2", "w2@n.example", provider.Faults{LoseReply: true}); res.Class != model.ClassUnknown {
		t.Fatalf("set-up: the retry %s; want unknown", res.Class)
	}
	h.tick()
	if v := h.m.detail.d.Operation.Version; v != l.get(t, "acme", "wn-2").Operation.Version {
		t.Fatalf("the detail did not reload: v%d", v)
	}
	return l, h
}

// The check made before the retry is no evidence any more: the detail says
// so instead of offering it for "not applied", and n and s ask the
// provider first — which has the delivery: the review asks for the typed
// override, y writes nothing, and the next call sends nothing a second
// time. It used to keep the old check, write not_applied "provider
// lookup: sandbox holds no delivery", and the next call delivered again.
func TestACheckFromBeforeALaterAttemptIsNotTheDecisionsEvidence(t *testing.T) {
	for _, c := range []struct {
		key  string
		form func(h *harness)
	}{
		{"n", func(h *harness) {
			h.typeText("customer says nothing arrived")
			h.keys("tab")
			h.typeText("INC-79")
		}},
		{"s", func(h *harness) {
			h.typeText("send it again")
			h.keys("tab") // the new key: generated
		}},
	} {
		t.Run(c.key, func(t *testing.T) {
			l, h := checkedThenSentAgain(t)
			h.lacks("that is evidence to mark it not applied (n)")
			flatContains(t, h, "is out of date: an attempt that may have reached the provider was recorded after it", "no evidence now — check again (c)")
			before := len(l.get(t, "acme", "wn-2").Attempts)
			h.keys(c.key)
			c.form(h)
			h.keys("enter")
			review := h.view()
			if n := len(l.get(t, "acme", "wn-2").Attempts); n != before+1 {
				t.Fatalf("%s did not ask the provider first: %d attempts, %d before", c.key, n, before)
			}
			for _, w := range []string{"the provider check found the effect", "Type override"} {
				if !strings.Contains(review, w) {
					t.Fatalf("the review lacks %q:\n%s", w, review)
				}
			}
			if strings.Contains(review, "holds no delivery") {
				t.Fatalf("the review still shows the old check:\n%s", review)
			}
			h.keys("y")
			if d := l.get(t, "acme", "wn-2"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 1 {
				t.Fatalf("after y: %s with %d decisions; want unknown, only bob's", d.Operation.State, len(d.Decisions))
			}
		})
	}
}

// A claim whose lease ended was checked ("has nothing"); a sweep then made
// it unknown: the check is from before the sweep's attempt (ops list says
// "stale: has nothing"), and n asks the provider again.
func TestACheckFromBeforeASweepIsNotTheDecisionsEvidence(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "wn-3", "w3@n.example")
	l.svc.Grace = -1
	l.clock.Advance(2 * 3600e9)
	h := open(t, config(l), 120, 50)
	selectOp(t, h, "acme/wn-3")
	h.keys("enter", "c")
	h.contains("holds no delivery")
	if _, err := l.second(t).Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.tick()
	op := h.m.detail.d.Operation
	if op.State != model.StateUnknown && op.State != model.StateApplied {
		t.Fatalf("after the sweep the detail shows %s", op.State)
	}
	if op.State != model.StateUnknown {
		t.Skipf("the sweep settled it %s", op.State)
	}
	h.lacks("that is evidence to mark it not applied (n)")
	flatContains(t, h, "is out of date: an attempt that may have reached the provider was recorded after it")
	before := len(l.get(t, "acme", "wn-3").Attempts)
	h.keys("n")
	h.typeText("nothing arrived")
	h.keys("tab")
	h.typeText("INC-80")
	h.keys("enter")
	if n := len(l.get(t, "acme", "wn-3").Attempts); n != before+1 {
		t.Fatalf("n did not ask the provider first: %d attempts, %d before\n%s", n, before, h.view())
	}
}

// flatContains is contains with the screen's lines and blanks joined: a
// sentence the detail wrapped is found whole.
func flatContains(t *testing.T, h *harness, want ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(h.view()), " ")
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Fatalf("screen lacks %q:\n%s", w, h.view())
		}
	}
}

// The review is open on a fresh check ("has nothing") when another
// console's lookup could not tell: an attempt may lie between the two, so
// the check is no evidence any more — the ledger refuses y, writes
// nothing, and the form says to check again.
func TestAReviewOnACheckOutdatedSinceIsRefused(t *testing.T) {
	l := newLedger(t)
	l.nothingThere(t, "acme", "wn-4", "w4@n.example")
	h := open(t, config(l), 120, 50)
	selectOp(t, h, "acme/wn-4")
	h.keys("enter", "c")
	h.contains("that is evidence to mark it not applied (n)")
	h.keys("n")
	h.typeText("nothing arrived")
	h.keys("enter", "enter")
	h.contains("Write this decision")
	l.clock.Advance(1e9)
	if _, err := cannotAsk(t, l).Look(context.Background(), &l.get(t, "acme", "wn-4").Operation, "triage by bob"); err != nil {
		t.Fatal(err)
	}
	h.keys("y")
	if d := l.get(t, "acme", "wn-4"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatalf("after y: %s with %d decisions; want unknown, none", d.Operation.State, len(d.Decisions))
	}
	flatContains(t, h, "Not written: the provider check this rested on is out of date")
}
