package reconcile_test

// R6 D3: an operation whose claim nobody holds — released (a re-send
// answered "busy", "not sent", "nothing applied", or a lost reply to a
// provider that honours keys), or its lease ended (its worker gone) —
// stays in_progress by design, so that no config sends it a second time.
// A person must be able to settle it like an unknown one: mark applied,
// mark not applied, or authorize a new key, under every rule an unknown
// one's decision keeps (the grace, the look first, a finding that binds).
// One whose lease is live — a worker may be sending it now — is refused,
// naming when the lease ends, and nothing is written.

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

// unheldKinds are the ways an operation is left in_progress: by make on
// l (with its clock), at key.
var unheldKinds = []struct {
	name string
	live bool // its lease is held: no decision
	make func(t *testing.T, l *ledger, clk *clock, key string)
}{
	{"released (lost reply, provider honours keys)", false, func(t *testing.T, l *ledger, clk *clock, key string) {
		res := l.call(notify("acme", key, "a@example.com"), reconcile.CallOptions{Provider: "sandbox-idem", Faults: provider.Faults{LoseReply: true}})
		if op := l.op("acme", key); op.State != model.StateInProgress || op.LeaseOwner != reconcile.LeaseReleased {
			t.Fatalf("set-up: %s %q (%s); want in_progress, released", op.State, op.LeaseOwner, res.Message)
		}
	}},
	{"lease ended (worker died after its claim)", false, func(t *testing.T, l *ledger, clk *clock, key string) {
		if died, _ := l.callDying(notify("acme", key, "a@example.com"), reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
			t.Fatal("set-up: the worker did not die")
		}
		clk.Advance(reconcile.DefaultLease + time.Second)
	}},
	{"lease live (a worker is sending it)", true, func(t *testing.T, l *ledger, clk *clock, key string) {
		if died, _ := l.callDying(notify("acme", key, "a@example.com"), reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
			t.Fatal("set-up: the worker did not die")
		}
		clk.Advance(time.Second)
	}},
}

func TestDecisionsOnAnInProgressOperationNobodyHolds(t *testing.T) {
	for _, kind := range unheldKinds {
		for _, action := range model.AllActions {
			t.Run(kind.name+"/"+string(action), func(t *testing.T) {
				bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
					clk := newClock()
					l := mk(clk)
					kind.make(t, l, clk, "k")
					op := l.op("acme", "k")
					now := l.st.Now()
					if got := reconcile.AllowedAt(*op, action, now); got == kind.live {
						t.Errorf("AllowedAt = %v; want %v", got, !kind.live)
					}
					if reconcile.AllowedFor(*op, action) {
						t.Error("AllowedFor (no clock) allows a decision from in_progress; it must not guess the lease")
					}
					deliveries := l.deliveries("acme", "k")
					before := l.snapshot()
					d := decision(op)
					d.NewKey = "k-new"
					err := l.decide(action, d)
					if kind.live {
						if !model.IsCode(err, model.CodeIllegal) {
							t.Fatalf("decision on a live lease: %v; want CodeIllegal", err)
						}
						for _, w := range []string{"it is in_progress", op.LeaseUntil.UTC().Format(time.RFC3339), "nothing was written"} {
							if !strings.Contains(err.Error(), w) {
								t.Errorf("refusal %q does not say %q", err, w)
							}
						}
						if l.snapshot() != before {
							t.Error("a refused decision changed the ledger")
						}
						return
					}
					if err != nil {
						t.Fatalf("decision on an unheld in_progress: %v", err)
					}
					det := l.detail("acme", "k")
					got := det.Operation
					if got.State != action.Target() || got.Version != op.Version+1 || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
						t.Errorf("after %s: %s v%d lease %q %v; want %s v%d, no lease", action, got.State, got.Version, got.LeaseOwner, got.LeaseUntil, action.Target(), op.Version+1)
					}
					if n := len(det.Decisions); n != 1 || det.Decisions[0].FromState != model.StateInProgress || det.Decisions[0].FromVersion != op.Version {
						t.Fatalf("decision rows %+v; want one, from in_progress at version %d", det.Decisions, op.Version)
					}
					// A sweep later finds it decided: it sends nothing.
					clk.Advance(reconcile.DefaultLease + time.Second)
					if rep, err := l.svc.Sweep(context.Background()); err != nil || rep.Redispatched != 0 || rep.Unknown != 0 {
						t.Errorf("sweep after the decision: %+v %v; want nothing settled or sent", rep, err)
					}
					if n := l.deliveries("acme", "k"); n != deliveries {
						t.Errorf("%d deliveries after the sweep, were %d", n, deliveries)
					}
					if got := l.op("acme", "k"); got.State != action.Target() {
						t.Errorf("the sweep moved it to %s", got.State)
					}
				})
			})
		}
	}
}

// The grace still holds: "not applied" and a new key on a released claim
// are refused while the provider may still apply its request (the
// claim's claim_apply_by), as for an unknown one; WithinGrace overrides.
func TestAnUnheldInProgressKeepsTheGrace(t *testing.T) {
	for _, tc := range []struct {
		name        string
		action      model.Action
		after       time.Duration
		withinGrace bool
		refused     bool
	}{
		{"not applied right after", model.ActionMarkNotApplied, time.Second, false, true},
		{"new key right after", model.ActionAuthorizeKey, time.Second, false, true},
		{"applied right after", model.ActionMarkApplied, time.Second, false, false},
		{"not applied right after, overridden", model.ActionMarkNotApplied, time.Second, true, false},
		{"not applied past the claim's apply-by", model.ActionMarkNotApplied, reconcile.DefaultLease + reconcile.DefaultDispatchGrace + time.Second, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			l := newLedger(t, withClock(clk))
			unheldKinds[0].make(t, l, clk, "k")
			clk.Advance(tc.after)
			op := l.op("acme", "k")
			before := l.snapshot()
			d := decision(op)
			d.WithinGrace = tc.withinGrace
			d.NewKey = "k-new"
			err := l.decide(tc.action, d)
			if tc.refused {
				if !errors.Is(err, reconcile.ErrWithinGrace) || !model.IsCode(err, model.CodeIllegal) {
					t.Fatalf("%v; want a grace refusal", err)
				}
				if l.snapshot() != before {
					t.Error("a refused decision changed the ledger")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The console read the released claim at version V; a worker claimed it
// again (its lease live) before the write: the decision made on V is
// refused as stale, one without a version (a script) as illegal naming
// the lease's end — nothing written either way.
func TestADecisionOnAReleasedClaimThatWasClaimedAgainIsRefused(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		unheldKinds[0].make(t, l, clk, "k")
		seen := l.op("acme", "k")
		if died, _ := l.callDying(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Provider: "sandbox-idem"}, reconcile.PointAfterClaim); !died {
			t.Fatal("the worker did not die after its claim")
		}
		now := l.op("acme", "k")
		if now.ClaimNo != seen.ClaimNo+1 || !now.LeaseUntil.After(clk.Now()) {
			t.Fatalf("set-up: claim %d lease %v; want claimed again, live", now.ClaimNo, now.LeaseUntil)
		}
		before := l.snapshot()
		for _, action := range model.AllActions {
			d := decision(seen)
			d.NewKey = "k-new"
			if err := l.decide(action, d); !model.IsCode(err, model.CodeStale) {
				t.Errorf("%s on the screen's version: %v; want CodeStale", action, err)
			}
			d.ExpectState, d.ExpectVersion = "", 0
			err := l.decide(action, d)
			if !model.IsCode(err, model.CodeIllegal) || !strings.Contains(err.Error(), now.LeaseUntil.UTC().Format(time.RFC3339)) {
				t.Errorf("%s with no version: %v; want CodeIllegal naming the lease's end", action, err)
			}
		}
		if l.snapshot() != before {
			t.Error("a refused decision changed the ledger")
		}
	})
}

// A worker whose lease ended before its request could leave (paused after
// its claim) finds the operation decided when it wakes: it sends nothing,
// and its "not sent" is a late result that contradicts nothing.
func TestAWorkerThatFindsItsUnheldClaimDecidedSendsNothing(t *testing.T) {
	for _, action := range model.AllActions {
		t.Run(string(action), func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				clk := newClock()
				l := mk(clk)
				var decideErr error
				l.svc.At = func(p reconcile.Point) {
					if p != reconcile.PointAfterClaim {
						return
					}
					l.svc.At = nil
					clk.Advance(reconcile.DefaultLease + time.Second)
					d := decision(l.op("acme", "k"))
					d.NewKey = "k-new"
					decideErr = l.decide(action, d)
				}
				res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
				if decideErr != nil {
					t.Fatalf("decision while the worker slept: %v", decideErr)
				}
				if n := l.deliveries("acme", "k"); n != 0 {
					t.Errorf("%d deliveries; the worker must send nothing", n)
				}
				op := l.op("acme", "k")
				if res.Outcome != model.OutcomeLateResult || op.State != action.Target() || op.Contradicted {
					t.Errorf("worker: %s %s (%s); op %s contradicted=%v; want a late result, %s, not contradicted",
						res.Class, res.Outcome, res.Message, op.State, op.Contradicted, action.Target())
				}
			})
		})
	}
}

// A worker's answer that lands after a person decided on its unheld claim
// is recorded as the ledger records one after a decision on an unknown
// operation: a late result, and if it disagrees, contradicted — an
// "applied" also a "has it" finding.
func TestALateAnswerAfterADecisionOnAnUnheldClaim(t *testing.T) {
	for _, tc := range []struct {
		name         string
		action       model.Action
		faults       provider.Faults
		contradicted bool
	}{
		{"applied, then marked not applied", model.ActionMarkNotApplied, provider.Faults{}, true},
		{"applied, then a new key", model.ActionAuthorizeKey, provider.Faults{}, true},
		{"applied, then marked applied", model.ActionMarkApplied, provider.Faults{}, false},
		{"rejected, then marked applied", model.ActionMarkApplied, provider.Faults{Reject: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
				clk := newClock()
				l := mk(clk)
				var decideErr error
				l.svc.At = func(p reconcile.Point) {
					if p != reconcile.PointAfterDispatch {
						return
					}
					l.svc.At = nil
					clk.Advance(reconcile.DefaultLease + time.Second)
					op := l.op("acme", "k")
					if op.State != model.StateInProgress {
						t.Fatalf("set-up: %s; want in_progress, its lease ended", op.State)
					}
					d := decision(op)
					d.NewKey = "k-new"
					decideErr = l.decide(tc.action, d)
				}
				res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: tc.faults})
				if decideErr != nil {
					t.Fatalf("decision: %v", decideErr)
				}
				op := l.detail("acme", "k")
				if res.Outcome != model.OutcomeLateResult || op.Operation.State != tc.action.Target() || op.Operation.Contradicted != tc.contradicted {
					t.Errorf("late answer: %s (%s); op %s contradicted=%v; want late_result, %s, contradicted=%v",
						res.Outcome, res.Message, op.Operation.State, op.Operation.Contradicted, tc.action.Target(), tc.contradicted)
				}
				if tc.contradicted && tc.faults == (provider.Faults{}) {
					if f := op.Operation.Finding; f == nil || f.Kind != model.FindingHasIt {
						t.Errorf("a late \"applied\" is not recorded as a has-it finding: %+v", f)
					}
				}
			})
		})
	}
}
