package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A provider check that found nothing is the evidence of "not applied"
// (and of a new key) only of what the provider had when it was asked: an
// attempt that may have reached the provider after it — the agent's next
// call, a sweep's — makes it no evidence. The console kept a check made
// on an older version of the operation and handed it to the decision
// after the key had been sent again (reply lost): the ledger wrote
// not_applied on "provider lookup: sandbox holds no delivery" while the
// provider held the delivery, and the next call delivered it a second
// time. The ledger refuses such a decision itself, whoever supplies the
// finding, and writes nothing.
func TestACheckFromBeforeALaterAttemptIsNoEvidence(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		l.svc.Lease = 2 * time.Second
		l.svc.DispatchTimeout = 20 * time.Millisecond
		ctx := context.Background()
		req := notify("acme", "k", "w2@n.example")
		if res := l.call(req, reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}}); res.Op == nil || res.Op.State != model.StateUnknown {
			t.Fatalf("set-up: %s (%s); want unknown", res.Class, res.Message)
		}
		clk.Advance(l.svc.Lease + reconcile.DefaultDispatchGrace + time.Second)
		_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "console by mo")
		if err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Fatalf("check after the grace: %+v %v; want has nothing", looked.Finding, err)
		}
		old := looked.Evidence
		if old.CheckedAt.IsZero() {
			t.Fatal("a recorded check's evidence carries no time it was recorded at")
		}
		// Another operator marks it not applied on a ticket; the agent
		// sends it again and the reply is lost.
		clk.Advance(time.Second)
		d := decision(l.op("acme", "k"))
		d.Evidence = "INC-78"
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		if res := l.call(req, reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); res.Op == nil || res.Op.State != model.StateUnknown {
			t.Fatalf("set-up: the retry %s (%s); want unknown", res.Class, res.Message)
		}
		before := l.snapshot()
		for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionAuthorizeKey} {
			d := decision(l.op("acme", "k")) // the version now: the screen reloaded
			d.Evidence, d.Finding = "", &old
			err := l.decide(action, d)
			if !model.IsCode(err, model.CodeStale) || !errors.Is(err, reconcile.ErrCheckOutdated) ||
				!strings.Contains(err.Error(), "check again") {
				t.Fatalf("%s on the check from before the retry: %v (code %q); want refused as stale, saying check again", action, err, model.CodeOf(err))
			}
			if l.snapshot() != before {
				t.Fatalf("%s: the refused decision changed the ledger", action)
			}
		}
		// A check now finds the delivery.
		_, looked, err = l.svc.CheckAndRecord(ctx, "acme", "k", "console by mo")
		if err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check after the retry: %+v %v; want has it", looked.Finding, err)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("the provider holds %d deliveries; want 1", n)
		}
		l.audit()
	})
}

// The same check, fresh, is the evidence: a positive control.
func TestAFreshCheckIsStillTheEvidenceOfNotApplied(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		l.svc.Lease = 2 * time.Second
		l.svc.DispatchTimeout = 20 * time.Millisecond
		if res := l.call(notify("acme", "k", "w2@n.example"), reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}}); res.Op == nil || res.Op.State != model.StateUnknown {
			t.Fatalf("set-up: %s (%s); want unknown", res.Class, res.Message)
		}
		clk.Advance(l.svc.Lease + reconcile.DefaultDispatchGrace + time.Second)
		_, looked, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "console by mo")
		if err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Fatalf("check after the grace: %+v %v; want has nothing", looked.Finding, err)
		}
		clk.Advance(time.Second)
		d := decision(l.op("acme", "k"))
		d.Evidence, d.Finding = "", &looked.Evidence
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
		det := l.detail("acme", "k")
		if got := det.Decisions[len(det.Decisions)-1].Evidence; !strings.HasPrefix(got, "provider lookup: ") {
			t.Fatalf("evidence %q; want the lookup's", got)
		}
	})
}

// A claim whose lease ended was checked ("has nothing", after the grace);
// then a sweep made it unknown (lease_expired) or sent it again: the check
// is from before that attempt, as `ops list` says ("stale: has nothing"),
// and no decision rests on it.
func TestACheckFromBeforeASweepIsNoEvidence(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		l.svc.Lease = 2 * time.Second
		if died, _ := l.callDying(notify("acme", "k", "w2@n.example"), reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
			t.Fatal("set-up: the call did not stop after its claim")
		}
		clk.Advance(l.svc.Lease + reconcile.DefaultDispatchGrace + time.Second)
		ctx := context.Background()
		_, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "console by mo")
		if err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Fatalf("check of the ended claim: %+v %v; want has nothing", looked.Finding, err)
		}
		old := looked.Evidence
		clk.Advance(time.Second)
		if _, err := l.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		op := l.op("acme", "k")
		if op.Finding == nil || !op.Finding.Stale {
			t.Fatalf("after the sweep the check is %+v; want stale", op.Finding)
		}
		if !reconcile.AllowedFor(*op, model.ActionMarkNotApplied) {
			t.Skipf("the sweep left it %s", op.State)
		}
		before := l.snapshot()
		for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionAuthorizeKey} {
			d := decision(op)
			d.Evidence, d.Finding = "", &old
			if err := l.decide(action, d); !errors.Is(err, reconcile.ErrCheckOutdated) || !model.IsCode(err, model.CodeStale) {
				t.Fatalf("%s on the check from before the sweep: %v; want refused as stale", action, err)
			}
			if l.snapshot() != before {
				t.Fatalf("%s: the refused decision changed the ledger", action)
			}
		}
	})
}

// CheckOutdated is the rule, against the operation's latest recorded
// finding.
func TestCheckOutdated(t *testing.T) {
	at := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	nothing := &provider.Evidence{Provider: "sandbox", Detail: "sandbox holds no delivery", CheckedAt: at}
	for _, c := range []struct {
		name   string
		ev     *provider.Evidence
		latest *model.Finding
		stale  bool
	}{
		{"no finding", nil, &model.Finding{Kind: model.FindingHasNothing, At: at, Stale: true}, false},
		{"this check, fresh", nothing, &model.Finding{Kind: model.FindingHasNothing, At: at}, false},
		{"this check, an attempt since", nothing, &model.Finding{Kind: model.FindingHasNothing, At: at, Stale: true}, true},
		{"asked again since, cannot tell", nothing, &model.Finding{Kind: model.FindingCannotTell, At: at.Add(time.Second)}, true},
		{"asked again since, still nothing", nothing, &model.Finding{Kind: model.FindingHasNothing, At: at.Add(time.Second)}, false},
		{"asked again since, still nothing, an attempt after", nothing, &model.Finding{Kind: model.FindingHasNothing, At: at.Add(time.Second), Stale: true}, true},
		{"a found effect stays found", &provider.Evidence{Found: true, Ref: "sbx_1", CheckedAt: at},
			&model.Finding{Kind: model.FindingHasIt, At: at, Stale: true}, false},
		{"not recorded: no time to compare", &provider.Evidence{Detail: "x"}, &model.Finding{Kind: model.FindingHasNothing, At: at, Stale: true}, false},
		{"nothing recorded for the operation", nothing, nil, false},
		{"read before the check was recorded", nothing, &model.Finding{Kind: model.FindingHasNothing, At: at.Add(-time.Second), Stale: true}, false},
	} {
		if got := reconcile.CheckOutdated(c.ev, c.latest) != ""; got != c.stale {
			t.Errorf("%s: outdated %v; want %v", c.name, got, c.stale)
		}
	}
}
