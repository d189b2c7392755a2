package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// failedThenFoundByALookup: the first call's reply is lost while its lease
// ends; a sweep makes it unknown, a person marks it not applied, the retry
// is rejected (failed) — then the first attempt's lost reply arrives (no
// definite answer, so nothing is contradicted) and the provider holds the
// first delivery under the key.
func failedThenFoundByALookup(t *testing.T, mk func(*clock) *ledger) *ledger {
	t.Helper()
	clk := newClock()
	l := mk(clk)
	req := notify("acme", "k", "a@example.com")
	l.atDispatchAfterSweep(t, clk, func() {
		d := decision(l.op("acme", "k"))
		d.Evidence = "provider search showed nothing yet"
		if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
			t.Fatal(err)
		}
		if res := l.call(req, reconcile.CallOptions{Faults: provider.Faults{Reject: true}}); res.Class != model.ClassFailed {
			t.Fatalf("the retry: %s; want failed", res.Class)
		}
	})
	l.call(req, reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
	if op := l.op("acme", "k"); op.State != model.StateFailed || op.Contradicted {
		t.Fatalf("set-up: %s contradicted=%v; want failed, not contradicted", op.State, op.Contradicted)
	}
	if n := l.deliveries("acme", "k"); n != 1 {
		t.Fatalf("set-up: %d deliveries; want 1", n)
	}
	return l
}

// A lookup (ops check, the console's c) that finds the delivery of a
// failed operation is the provider's word against the stored rejection,
// as a late "applied" is: the operation is flagged contradicted and may be
// marked applied. It was not: the replays kept telling every caller
// "rejected for good", and the one decision offered was a new key — a
// second e-mail.
func TestAFailedOperationALookupFindsCanBeMarkedApplied(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := failedThenFoundByALookup(t, mk)
		ctx := context.Background()
		if _, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check: %+v %v; want has it", looked.Finding, err)
		}
		op := l.op("acme", "k")
		if !op.Contradicted || !reconcile.AllowedFor(*op, model.ActionMarkApplied) {
			t.Fatalf("a failed operation a lookup found: contradicted=%v, decisions %v; want contradicted, mark applied allowed", op.Contradicted, reconcile.LegalFor(*op))
		}
		if c, err := l.st.Counts(ctx, ""); err != nil || c.Contradicted != 1 {
			t.Fatalf("counts: %+v %v; want 1 contradicted", c, err)
		}
		d := decision(op)
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatal(err)
		}
		res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
		if res.Class != model.ClassDone {
			t.Fatalf("a retry after marking it applied: %s %q; want done", res.Class, res.Message)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
	})
}

// A new key authorized for a contradicted operation (deliberately, with the
// second confirmation where a finding or the receipt is against it) is the
// person's decision on the contradiction: the old key, now superseded,
// allows no decision at all, so a flag left on it could never be cleared —
// the header's "! N contradicted" and the ! filter showed it for ever.
func TestANewKeyForAContradictedOperationSettlesTheContradiction(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, mk func(*clock) *ledger) *ledger
	}{
		{"not applied", func(t *testing.T, _ func(*clock) *ledger) *ledger { return contradictedNotApplied(t) }},
		{"failed", failedThenLateApplied},
		{"applied", appliedThenLateRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.setup(t, func(clk *clock) *ledger { return newLedger(t, withClock(clk)) })
			ctx := context.Background()
			d := decision(l.op("acme", "k"))
			d.NewKey, d.Override = "k2", true
			if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
				t.Fatal(err)
			}
			old := l.op("acme", "k")
			if old.State != model.StateSuperseded || old.Contradicted {
				t.Errorf("the old key: %s contradicted=%v; want superseded, settled", old.State, old.Contradicted)
			}
			if got := reconcile.LegalFor(*old); len(got) != 0 {
				t.Errorf("decisions on the superseded key: %v; want none", got)
			}
			if cnt, err := l.st.Counts(ctx, ""); err != nil || cnt.Contradicted != 0 {
				t.Errorf("counts: %+v %v; want nothing contradicted", cnt, err)
			}
			if k2 := l.op("acme", "k2"); k2.State != model.StateAuthorized || k2.Contradicted {
				t.Errorf("k2: %s contradicted=%v; want authorized, free to send", k2.State, k2.Contradicted)
			}
		})
	}
}

// offeredDecisions is the rules' table written out, (state, contradicted)
// → the decisions a person is offered (reconcile.LegalFor, which the
// console and ops resolve/supersede use), so a change to the rules has to
// change this test too.
var offeredDecisions = map[model.State]map[bool][]model.Action{
	model.StateUnknown: {
		false: {model.ActionMarkApplied, model.ActionMarkNotApplied, model.ActionAuthorizeKey},
		true:  {model.ActionMarkApplied, model.ActionMarkNotApplied, model.ActionAuthorizeKey},
	},
	model.StateInProgress: {false: nil, true: nil},
	model.StateNotApplied: {
		false: {model.ActionAuthorizeKey},
		true:  {model.ActionMarkApplied, model.ActionAuthorizeKey},
	},
	model.StateFailed: {
		false: {model.ActionAuthorizeKey},
		true:  {model.ActionMarkApplied, model.ActionAuthorizeKey},
	},
	model.StateApplied:    {false: nil, true: {model.ActionAuthorizeKey}},
	model.StateSuperseded: {false: nil, true: nil},
	model.StateAuthorized: {false: nil, true: {model.ActionMarkApplied}},
}

// Every (state, contradicted, recorded finding) × decision: what the
// console predicts — offered (AllowedFor), and against a finding or the
// receipt so only with the typed override (AgainstFinding) — is what the
// ledger does: refused as illegal naming the decisions that are offered,
// refused for the second confirmation, or written; with the override,
// every offered decision is written.
func TestEveryDecisionAsTheConsolePredictsIt(t *testing.T) {
	l := newLedger(t, withClock(newClock()))
	ctx := context.Background()
	findings := []model.FindingKind{"", model.FindingHasIt, model.FindingHasNothing, model.FindingCannotTell}
	n := 0
	for _, st := range model.AllStates {
		for _, contra := range []bool{false, true} {
			for _, fk := range findings {
				for _, action := range model.AllActions {
					for _, override := range []bool{false, true} {
						n++
						key := fmt.Sprintf("k%d", n)
						name := fmt.Sprintf("%s/contradicted=%v/finding=%q/%s/override=%v", st, contra, fk, action, override)
						l.t = t
						l.makeState(st, "acme", key)
						if err := l.st.WithTx(ctx, func(tx store.Tx) error {
							op, err := tx.GetOperation("acme", key)
							if err != nil {
								return err
							}
							if fk != "" {
								if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
									WorkerID: "table", Finding: fk, ProviderRef: "ref_1", StartedAt: tx.Now(), Detail: "table"}); err != nil {
									return err
								}
							}
							if contra != op.Contradicted {
								from, ver := op.State, op.Version
								op.Contradicted = contra
								return tx.UpdateOperation(op, from, ver)
							}
							return nil
						}); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						ops, err := l.st.List(ctx, store.ListQuery{Tenant: "acme", Search: key, Limit: 100})
						if err != nil {
							t.Fatal(err)
						}
						var op *model.Operation
						for i := range ops {
							if ops[i].Key == key {
								op = &ops[i]
							}
						}
						if op == nil {
							t.Fatalf("%s: not listed", name)
						}
						if fk != "" && fk != model.FindingCannotTell && op.Binding() == nil {
							t.Fatalf("%s: the listed operation carries no binding finding", name)
						}
						want := offeredDecisions[st][contra]
						if got := reconcile.LegalFor(*op); fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%s: offered %v; the table says %v", name, got, want)
						}
						offered := reconcile.AllowedFor(*op, action)
						against, _ := reconcile.AgainstFinding(action, *op)
						before := l.snapshot()
						d := decision(op)
						d.Evidence, d.Override, d.NewKey = "", override, key+"-new"
						if action == model.ActionMarkApplied {
							d.Evidence = "ref_1"
						}
						if action == model.ActionMarkNotApplied {
							d.Evidence = "looked by hand"
						}
						err = l.decide(action, d)
						switch {
						case !offered:
							if !model.IsCode(err, model.CodeIllegal) || !strings.Contains(err.Error(), "allowed from") {
								t.Errorf("%s: not offered, the ledger said %v; want refused as illegal", name, err)
							}
							if len(want) == 0 && err != nil && !strings.Contains(err.Error(), "no decisions") {
								t.Errorf("%s: refusal %q does not say no decision is allowed", name, err)
							}
							for _, a := range want {
								if err != nil && !strings.Contains(err.Error(), a.Verb()) {
									t.Errorf("%s: refusal %q does not name %s", name, err, a.Verb())
								}
							}
						case against && !override:
							if !model.IsCode(err, model.CodeIllegal) || !strings.Contains(err.Error(), "second confirmation") &&
								!strings.Contains(err.Error(), "--against-finding") {
								t.Errorf("%s: against its finding, unconfirmed: %v; want refused for the second confirmation", name, err)
							}
						default:
							if err != nil {
								t.Errorf("%s: offered (against=%v) but the ledger refused: %v", name, against, err)
							}
							continue
						}
						if l.snapshot() != before {
							t.Errorf("%s: a refused decision changed the ledger", name)
						}
					}
				}
			}
		}
	}
}

// A lookup of a superseded key recorded in the same instant as its new
// key's authorization — or started before it and written after, its time
// taken before it waited for the writer — found the effect that nobody
// deciding saw: the new key was sent, a second e-mail (foundSince compared
// times: not after). The lookup holds the unused new key as it records the
// finding, in commit order, and the console shows it held at once.
func TestALookupWrittenAfterTheNewKeyInTheSameInstantHoldsIt(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		ctx := context.Background()
		l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
		d := decision(l.op("acme", "k"))
		d.NewKey = "k2"
		if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
			t.Fatal(err)
		}
		if _, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check of k: %+v %v; want has it", looked.Finding, err)
		}
		if k2 := l.op("acme", "k2"); !k2.Contradicted || !reconcile.AllowedFor(*k2, model.ActionMarkApplied) {
			t.Errorf("k2 after the lookup: %s contradicted=%v; want held for a person at once", k2.State, k2.Contradicted)
		}
		res := l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{})
		if res.Class != model.ClassUnknown {
			t.Errorf("k2's first call: %s %q; want refused as unknown", res.Class, res.Message)
		}
		if n := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); n != 1 {
			t.Fatalf("%d deliveries of one notification; want 1", n)
		}
	})
}

// A not_applied operation flagged contradicted (the provider said, late,
// that it applied it) whose provider honours downstream keys may be
// retried: the provider answers with the delivery it made. The ledger
// then says applied, as the provider does — the contradiction is over.
// It stayed flagged: applied and contradicted reads "a later answer says
// it was not applied", and offers a new key against the receipt, which
// sends the e-mail a second time.
func TestARetryThatAgreesWithTheProviderSettlesTheContradiction(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		req := notify("acme", "k", "a@example.com")
		opt := reconcile.CallOptions{Provider: "sandbox-idem"}
		// The first claim's request is delivered, its answer slow; its
		// lease ends, and a sweep by a host whose config does not name
		// the provider makes it unknown (it cannot re-send it); a person
		// marks it not applied. Then the first answer arrives: applied.
		l.svc.At = func(p reconcile.Point) {
			if p != reconcile.PointAfterDispatch {
				return
			}
			l.svc.At = nil
			clk.Advance(reconcile.DefaultLease + time.Second)
			other := *l.svc
			other.Providers = provider.Registry{}
			for name, pr := range l.svc.Providers {
				if name != "sandbox-idem" {
					other.Providers[name] = pr
				}
			}
			if _, err := other.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			d := decision(l.op("acme", "k"))
			d.Evidence = "provider search showed nothing yet"
			if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
				t.Fatal(err)
			}
		}
		l.call(req, opt)
		if op := l.op("acme", "k"); op.State != model.StateNotApplied || !op.Contradicted {
			t.Fatalf("set-up: %s contradicted=%v; want not_applied, contradicted", op.State, op.Contradicted)
		}
		res := l.call(req, opt)
		if res.Class != model.ClassDone {
			t.Fatalf("the retry: %s %q; want done (the provider's first answer)", res.Class, res.Message)
		}
		op := l.op("acme", "k")
		if op.State != model.StateApplied || op.Contradicted {
			t.Errorf("after the retry: %s contradicted=%v; want applied, settled", op.State, op.Contradicted)
		}
		if got := reconcile.LegalFor(*op); len(got) != 0 {
			t.Errorf("decisions on it: %v; want none (applied, agreed)", got)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
	})
}

// A worker paused after its claim past the lease, while a sweep re-sent
// the claim under the same downstream key (its provider honours keys) and
// the provider applied it: the paused worker sends nothing ("not sent:
// the claim's lease ended"). That is no provider answer, and says nothing
// of the sweep's delivery — yet it flagged the applied operation
// contradicted: "a later provider answer says it was not", its one
// decision a new key (a second e-mail) against the receipt.
func TestAClaimThatSentNothingDoesNotContradictAnotherClaimsResult(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		req := notify("acme", "k", "a@example.com")
		l.svc.At = func(p reconcile.Point) {
			if p != reconcile.PointAfterClaim {
				return
			}
			l.svc.At = nil
			clk.Advance(reconcile.DefaultLease + time.Second)
			if rep, err := l.svc.Sweep(context.Background()); err != nil || rep.Redispatched != 1 {
				t.Fatalf("sweep: %+v %v; want the claim re-sent", rep, err)
			}
			if op := l.op("acme", "k"); op.State != model.StateApplied {
				t.Fatalf("set-up: after the sweep %s; want applied", op.State)
			}
		}
		res := l.call(req, reconcile.CallOptions{Provider: "sandbox-idem"})
		op := l.op("acme", "k")
		if op.State != model.StateApplied || op.Contradicted {
			t.Errorf("after the paused worker's turn: %s contradicted=%v; want applied, not contradicted", op.State, op.Contradicted)
		}
		if res.Class != model.ClassDone {
			t.Errorf("the paused worker's call: %s %q; want done (the sweep's delivery)", res.Class, res.Message)
		}
		if got := reconcile.LegalFor(*op); len(got) != 0 {
			t.Errorf("decisions: %v; want none", got)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
	})
}

// The first claim's answer is slow; its lease ends, a sweep makes it
// unknown, a person marks it not applied and the retry's request is
// applied. Then the first request's answer arrives: rejected. It speaks of
// that request only — the retry's delivery is the one effect — yet it
// flagged the applied operation contradicted ("a later provider answer
// says it was not"), its one decision a new key: a second e-mail.
func TestALateRejectionOfAnEarlierClaimDoesNotContradictALaterDelivery(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		req := notify("acme", "k", "a@example.com")
		l.atDispatchAfterSweep(t, clk, func() {
			d := decision(l.op("acme", "k"))
			d.Evidence = "the provider console shows nothing"
			if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
				t.Fatal(err)
			}
			if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassDone {
				t.Fatalf("set-up: the retry: %s %q; want done", res.Class, res.Message)
			}
		})
		l.call(req, reconcile.CallOptions{Faults: provider.Faults{Reject: true}})
		op := l.op("acme", "k")
		if op.State != model.StateApplied || op.Contradicted {
			t.Errorf("after the first request's late rejection: %s contradicted=%v; want applied, not contradicted", op.State, op.Contradicted)
		}
		if got := reconcile.LegalFor(*op); len(got) != 0 {
			t.Errorf("decisions: %v; want none", got)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
	})
}

// A failed operation the provider says it applied (its late answer, or a
// lookup that finds the delivery): its replays told every caller
// "rejected for good — do not retry" (exit 8) of an e-mail the provider
// sent, and so was the worker whose own request was the one applied.
// Until a person decides they hear what is true: stop, a person
// reconciles (unknown, exit 5); marked applied, the receipt.
func TestAFailedOperationTheProviderSaysItAppliedIsNotReplayedAsRejected(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		req := notify("acme", "k", "a@example.com")
		l.atDispatchAfterSweep(t, clk, func() {
			d := decision(l.op("acme", "k"))
			d.Evidence = "provider search showed nothing yet"
			if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
				t.Fatal(err)
			}
			if res := l.call(req, reconcile.CallOptions{Faults: provider.Faults{Reject: true}}); res.Class != model.ClassFailed {
				t.Fatalf("the retry: %s; want failed", res.Class)
			}
		})
		late := l.call(req, reconcile.CallOptions{})
		if op := l.op("acme", "k"); op.State != model.StateFailed || !op.Contradicted {
			t.Fatalf("set-up: %s contradicted=%v; want failed, contradicted", op.State, op.Contradicted)
		}
		if late.Class != model.ClassUnknown {
			t.Errorf("the worker whose request was applied: %s %q; want unknown", late.Class, late.Message)
		}
		res := l.call(req, reconcile.CallOptions{})
		if res.Class != model.ClassUnknown || !strings.Contains(res.Message, "contradicted") {
			t.Errorf("a replay: %s %q; want unknown, saying why", res.Class, res.Message)
		}
		d := decision(l.op("acme", "k"))
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatal(err)
		}
		if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassDone {
			t.Errorf("a replay after marking it applied: %s %q; want done", res.Class, res.Message)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
	})
}

// A contradicted operation waits for a person: its replay window ending
// does not compact it into a tombstone. It was compacted with the rest —
// the flag, its "! contradicted" and the decision it waits for gone, a
// failed one the provider applied remembered as failed, nobody asked.
func TestAContradictedOperationIsNotCompactedBeforeAPersonDecides(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := failedThenLateApplied(t, mk)
		ctx := context.Background()
		l.clock.Advance(reconcile.DefaultReplayWindow + time.Hour)
		if _, err := l.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		op, err := l.st.Get(ctx, "acme", "k")
		if err != nil || op.State != model.StateFailed || !op.Contradicted {
			t.Fatalf("after the replay window and a sweep: %+v %v; want it kept, failed and contradicted", op, err)
		}
		if c, err := l.st.Counts(ctx, ""); err != nil || c.Contradicted != 1 {
			t.Fatalf("counts: %+v %v; want 1 contradicted", c, err)
		}
		d := decision(op)
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatal(err)
		}
		if res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{}); res.Class != model.ClassDone {
			t.Errorf("a call after marking it applied: %s %q; want done", res.Class, res.Message)
		}
	})
}
