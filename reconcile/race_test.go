package reconcile_test

// An operator decision racing a late worker result: exactly one of them
// decides the state; the other gets a clear error or is recorded as a
// contradiction; nothing is lost.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The decision lands first (the worker is slow between dispatch and its
// record); the worker's answer then arrives late.
func TestDecisionFirstThenLateWorkerResult(t *testing.T) {
	cases := []struct {
		name         string
		faults       provider.Faults
		decide       model.Action
		contradicted bool
	}{
		{"applied, operator marks applied", provider.Faults{}, model.ActionMarkApplied, false},
		{"applied, operator marks not applied", provider.Faults{}, model.ActionMarkNotApplied, true},
		{"applied, operator authorizes a new key", provider.Faults{}, model.ActionAuthorizeKey, true},
		{"rejected, operator marks not applied", provider.Faults{Reject: true}, model.ActionMarkNotApplied, false},
		{"never applied, operator marks not applied", provider.Faults{FailBefore: true}, model.ActionMarkNotApplied, false},
		{"reply lost, operator marks applied", provider.Faults{LoseReply: true}, model.ActionMarkApplied, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			l := newLedger(t, withClock(clk))
			var decided model.State
			var decideErr error
			l.svc.At = func(p reconcile.Point) {
				if p != reconcile.PointAfterDispatch {
					return
				}
				l.svc.At = nil // the sweep below dispatches nothing, but be sure
				clk.Advance(reconcile.DefaultLease + time.Second)
				if _, err := l.svc.Sweep(context.Background()); err != nil {
					t.Error(err)
				}
				op := l.op("acme", "k")
				d := decision(op)
				d.NewKey = "k-new"
				decideErr = l.decide(c.decide, d)
				decided = l.op("acme", "k").State
			}
			res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: c.faults})
			if decideErr != nil {
				t.Fatalf("the operator's decision on the unknown operation failed: %v", decideErr)
			}
			d := l.detail("acme", "k")
			// The decision stands.
			if d.Operation.State != decided || len(d.Decisions) != 1 {
				t.Errorf("state %s with %d decisions; the decision (→ %s) must stand", d.Operation.State, len(d.Decisions), decided)
			}
			// The worker's answer is kept: its own attempt row becomes a late
			// result naming what the provider said.
			last := d.Attempts[0]
			if last.Outcome != model.OutcomeLateResult || !strings.Contains(last.Error, "after the operation had moved to") {
				t.Errorf("worker's answer recorded as %+v; want its attempt to become a late_result", last)
			}
			if c.faults == (provider.Faults{}) && last.ProviderRef == "" {
				t.Error("the late result lost the provider's reference")
			}
			if d.Operation.Contradicted != c.contradicted {
				t.Errorf("contradicted = %v, want %v", d.Operation.Contradicted, c.contradicted)
			}
			if res.Outcome != model.OutcomeLateResult || (c.contradicted && !strings.Contains(res.Message, "contradicted")) {
				t.Errorf("the worker was told %+v", res)
			}
			if c.contradicted {
				// The console lists contradicted operations: the new key
				// too, whose first call would send it a second time.
				ops, _ := l.st.List(t.Context(), storeContradicted())
				want := []string{"k"}
				if c.decide == model.ActionAuthorizeKey {
					want = []string{"k-new", "k"}
				}
				var got []string
				for _, op := range ops {
					got = append(got, op.Key)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("contradicted list = %v; want %v", got, want)
				}
			}
		})
	}
}

// The worker's record lands first; the operator's decision — made on a
// screen that still showed the claim — is refused with what changed.
func TestLateWorkerResultFirstThenStaleDecision(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	var seen *model.Operation
	l.svc.At = func(p reconcile.Point) {
		if p == reconcile.PointAfterClaim {
			seen = l.op("acme", "k") // the operator's screen: in_progress
		}
	}
	l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
	l.svc.At = nil
	before := l.snapshot()
	for _, action := range model.AllActions {
		d := decision(seen)
		d.ExpectState = model.StateUnknown // what the operator believed
		err := l.decide(action, d)
		if !model.IsCode(err, model.CodeStale) || !strings.Contains(err.Error(), "is now applied") {
			t.Errorf("%s on a stale view: %v; want a stale refusal saying it is now applied", action, err)
		}
		d.ExpectVersion, d.ExpectState = 0, ""
		if err := l.decide(action, d); !model.IsCode(err, model.CodeIllegal) {
			t.Errorf("%s on an applied operation: %v; want illegal", action, err)
		}
	}
	if l.snapshot() != before {
		t.Error("a refused decision changed the ledger")
	}
}

// The worker and the operator run at once, on their own goroutines and
// the same ledger, in each of the orders a race can take — the worker's
// claim paused (through the service's hook, not by timing) before the
// provider delivers, after it delivered, or not at all — with provider
// delays on top. Whatever the order: one of them decides, the other is
// refused or recorded, nothing is lost, a disagreement is flagged, and
// each schedule ends the way it must.
func TestDecisionRacingLateWorkerResult(t *testing.T) {
	type schedule struct {
		name    string
		pauseAt reconcile.Point // "" : the worker runs to its end first
		stale   bool            // the operator decides on the screen from before the worker's answer
		want    string          // the order the outcome must show
		// contradicted: the operator's decision disagrees with what the
		// provider did.
		contradicted bool
		delivered    int // what the provider holds at the end
	}
	schedules := []schedule{
		{"worker records before the sweep", "", false, "worker first", false, 1},
		// The worker, paused between its claim and its request, wakes
		// after its lease ended, a sweep, an empty lookup and "not
		// applied": its request never leaves (it used to, and was
		// delivered against the decision — flagged contradicted, and one
		// retry from a second delivery).
		{"decision while the worker is paused before its request", reconcile.PointAfterClaim, false, "decision first", false, 0},
		{"decision after the delivery, before its record", reconcile.PointAfterDispatch, false, "decision first", false, 1},
		{"decision on a screen from before the record", reconcile.PointAfterDispatch, true, "decision refused", false, 1},
	}
	clk := newClock()
	l := newLedger(t, withClock(clk))
	seen := map[string]int{}
	for i := 0; i < 40; i++ {
		sc := schedules[i%len(schedules)]
		key := fmt.Sprintf("race-%d", i)
		delay := time.Duration(i%3) * 2 * time.Millisecond
		paused, release := make(chan struct{}), make(chan struct{})
		l.svc.At = func(p reconcile.Point) {
			if sc.pauseAt != "" && p == sc.pauseAt {
				close(paused)
				<-release
			}
		}
		var wg sync.WaitGroup
		var workerRes reconcile.Result
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := l.svc.Call(context.Background(), notify("acme", key, "a@example.com"),
				reconcile.CallOptions{Faults: provider.Faults{Delay: delay}})
			if err != nil {
				t.Errorf("%s: worker: %v", key, err)
			}
			workerRes = res
		}()
		if sc.pauseAt == "" {
			wg.Wait()
		} else {
			<-paused
		}
		// The operator: the lease "ends", a sweep runs, and the operator
		// decides on what the provider shows.
		clk.Advance(reconcile.DefaultLease + time.Second)
		if _, err := l.svc.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		op := l.op("acme", key)
		var decideErr error
		if op.State == model.StateUnknown {
			_, ev, err := l.svc.Check(context.Background(), "acme", key)
			if err != nil {
				t.Fatal(err)
			}
			d := decision(op)
			action := model.ActionMarkApplied
			if ev.Found {
				d.Evidence = ev.Ref
			} else {
				// The dangerous case the seeds warn of: an empty lookup is
				// not proof, the delivery may still be in flight.
				action, d.Evidence = model.ActionMarkNotApplied, "provider lookup empty"
			}
			if sc.stale {
				close(release)
				wg.Wait()
			}
			decideErr = l.decide(action, d)
		}
		if sc.pauseAt != "" && !sc.stale {
			close(release)
		}
		wg.Wait()
		l.svc.At = nil

		d := l.detail("acme", key)
		delivered := l.deliveries("acme", key)
		var late *model.Attempt
		for i := range d.Attempts {
			if d.Attempts[i].Outcome == model.OutcomeLateResult {
				late = &d.Attempts[i]
			}
		}
		var order string
		switch {
		case op.State == model.StateApplied:
			// The worker recorded first; no decision was possible.
			order = "worker first"
			if len(d.Decisions) != 0 || late != nil || workerRes.Outcome != model.OutcomeCreated {
				t.Errorf("%s: worker won but decisions %v, late %v, worker told %+v", key, d.Decisions, late, workerRes)
			}
		case decideErr != nil:
			// The operator's decision was refused because the worker's answer
			// changed the operation first; the refusal says so.
			order = "decision refused"
			if !model.IsCode(decideErr, model.CodeStale) || len(d.Decisions) != 0 || late == nil {
				t.Errorf("%s: decision refused with %v; decisions %v, late %v", key, decideErr, d.Decisions, late)
			}
		default:
			order = "decision first"
			if len(d.Decisions) != 1 || late == nil {
				t.Fatalf("%s: decision stands? %v; late result recorded? %v", key, d.Decisions, late)
			}
			if delivered == 1 && late.ProviderRef == "" {
				t.Errorf("%s: the late result lost the provider's reference", key)
			}
			disagree := delivered == 1 && d.Operation.State != model.StateApplied
			if disagree && !d.Operation.Contradicted {
				t.Errorf("%s: the provider applied it, the operator marked %s, and nothing flags it (attempts %+v)", key, d.Operation.State, d.Attempts)
			}
			if !disagree && d.Operation.Contradicted {
				t.Errorf("%s: flagged contradicted without a disagreement", key)
			}
		}
		if order != sc.want || d.Operation.Contradicted != sc.contradicted {
			t.Errorf("%s (%s): ended as %q, contradicted %v; want %q, contradicted %v", key, sc.name, order, d.Operation.Contradicted, sc.want, sc.contradicted)
		}
		seen[sc.name+" → "+order]++
		if delivered != sc.delivered {
			t.Errorf("%s (%s): %d deliveries; want %d", key, sc.name, delivered, sc.delivered)
		}
		l.audit()
	}
	for _, sc := range schedules {
		if n := seen[sc.name+" → "+sc.want]; n != 40/len(schedules) {
			t.Errorf("%s ended as %s %d times, want %d", sc.name, sc.want, n, 40/len(schedules))
		}
	}
}

// The order in between: the sweep makes the operation unknown, the
// operator reads it, the worker's late "applied" is recorded, and only then
// does the operator — still looking at the old screen — decide. The late
// answer is new evidence: the stale decision is refused, and a script that
// decides without a version cannot mark it not applied unnoticed.
func TestLateResultBetweenTheOperatorsLookAndDecision(t *testing.T) {
	for _, expectVersion := range []bool{true, false} {
		t.Run(fmt.Sprintf("decision carries the version it saw: %v", expectVersion), func(t *testing.T) {
			clk := newClock()
			l := newLedger(t, withClock(clk))
			var screen *model.Operation
			l.svc.At = func(p reconcile.Point) {
				if p == reconcile.PointAfterDispatch {
					l.svc.At = nil
					clk.Advance(reconcile.DefaultLease + time.Second)
					if _, err := l.svc.Sweep(context.Background()); err != nil {
						t.Error(err)
					}
					screen = l.op("acme", "k")
				}
			}
			l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
			if screen == nil || screen.State != model.StateUnknown {
				t.Fatalf("operator's screen %+v; want unknown", screen)
			}
			d := decision(screen)
			d.Evidence = "provider console showed nothing a minute ago"
			if !expectVersion {
				d.ExpectVersion, d.ExpectState = 0, ""
			}
			err := l.decide(model.ActionMarkNotApplied, d)
			op := l.op("acme", "k")
			if op.ProviderRef == "" {
				t.Error("the late result's provider reference is not on the operation")
			}
			// Without a version the decision is checked against what the
			// ledger holds now: the late "applied", recorded as a "has it"
			// finding, which a "not applied" needs the explicit second
			// confirmation to go against.
			switch {
			case expectVersion && !model.IsCode(err, model.CodeStale):
				t.Errorf("decision on the screen from before the late result: %v; want a stale refusal", err)
			case !expectVersion && (!model.IsCode(err, model.CodeIllegal) || op.State != model.StateUnknown):
				t.Errorf("decision without a version: err %v, state %s; want refused against the late answer, still unknown", err, op.State)
			}
			if l.deliveries("acme", "k") != 1 {
				t.Errorf("%d deliveries", l.deliveries("acme", "k"))
			}
		})
	}
}

// An operator marks an unknown operation not applied while the worker's
// dispatch is still in flight; the provider then answers "applied". The
// operation is flagged contradicted — and neither the late worker nor the
// next call may dispatch it again to a provider that ignores downstream
// keys: that would be a second delivery.
func TestContradictedNotAppliedIsNotDispatchedAgain(t *testing.T) {
	l, req := raceNotAppliedAgainstALateApplied(t)
	late := l.call(req, reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateNotApplied || !op.Contradicted {
		t.Fatalf("after the late result: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	if late.Class != model.ClassUnknown {
		t.Errorf("the late worker was told %s (%s); it must stop, not retry", late.Class, late.Message)
	}
	res := l.call(req, reconcile.CallOptions{})
	if res.Class != model.ClassUnknown {
		t.Errorf("a retry of the contradicted key got %s (%s); want unknown", res.Class, res.Message)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries for one operation; want 1", n)
	}
	// The decision stands; a person can still authorize a deliberate new key
	// — against the provider's answer that it applied the first one (a
	// recorded "has it"), so only with the explicit second confirmation.
	d := decision(l.op("acme", "k"))
	d.NewKey = "k2"
	if err := l.decide(model.ActionAuthorizeKey, d); !model.IsCode(err, model.CodeIllegal) {
		t.Fatalf("a new key against the late \"applied\", unconfirmed: %v; want refused", err)
	}
	d.Override = true
	if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
		t.Fatal(err)
	}
}

// A contradicted not_applied — the operator said "not applied", then the
// provider's late answer said "applied" — can be marked applied: that agrees
// with the provider, settles the contradiction, and the next retry replays
// with no second effect. Without it the only way out was a new key, which
// would send the effect again.
func TestContradictedNotAppliedCanBeMarkedApplied(t *testing.T) {
	l, req := raceNotAppliedAgainstALateApplied(t)
	l.call(req, reconcile.CallOptions{})
	op := l.op("acme", "k")
	if op.State != model.StateNotApplied || !op.Contradicted {
		t.Fatalf("setup: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
	}
	if !reconcile.AllowedFor(*op, model.ActionMarkApplied) || reconcile.Allowed(op.State, model.ActionMarkApplied) {
		t.Fatal("mark applied must be legal for a contradicted not_applied, and only for a contradicted one")
	}
	d := decision(op)
	d.Evidence = "sbx_1"
	if err := l.decide(model.ActionMarkApplied, d); err != nil {
		t.Fatal(err)
	}
	if op := l.op("acme", "k"); op.State != model.StateApplied || op.Contradicted {
		t.Fatalf("after marking it applied: %s contradicted=%v; want applied, settled", op.State, op.Contradicted)
	}
	res := l.call(req, reconcile.CallOptions{})
	if res.Class != model.ClassDone || res.Receipt == nil || res.Receipt.Status != "replayed" {
		t.Fatalf("retry after the decision: %s %+v; want a replayed receipt", res.Class, res.Receipt)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("the provider holds %d deliveries; want 1", n)
	}
}

// raceNotAppliedAgainstALateApplied returns a ledger and a notification
// request whose first call, once made, ends contradicted: while it is in
// flight its lease ends, a sweep makes it unknown and an operator marks it
// not applied; then the provider's answer "applied" arrives.
func raceNotAppliedAgainstALateApplied(t *testing.T) (*ledger, model.Request) {
	t.Helper()
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.atDispatchAfterSweep(t, clk, func() {
		d := decision(l.op("acme", "k"))
		d.Evidence = "provider search showed nothing yet"
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
	})
	return l, notify("acme", "k", "a@example.com")
}

// atDispatchAfterSweep arranges the next call's dispatch to find, once,
// its claim's lease ended (the clock moved past it) and the operation
// made unknown by a sweep — a worker slower than its lease — and then runs
// then (nil: nothing more) before the provider's answer is recorded.
func (l *ledger) atDispatchAfterSweep(t testing.TB, clk *clock, then func()) {
	t.Helper()
	l.svc.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterDispatch {
			return
		}
		l.svc.At = nil
		clk.Advance(reconcile.DefaultLease + time.Second)
		if _, err := l.svc.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if then != nil {
			then()
		}
	}
}
