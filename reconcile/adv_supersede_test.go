package reconcile_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// driver makes a test's ledger on a pinned clock: SQLite (newLedger) or
// PostgreSQL (a schema of its own at $RETRYSAFE_TEST_POSTGRES, skipped
// without it), each with a sandbox provider file of its own.
type driver struct {
	name string
	make func(t *testing.T, clk *clock) *ledger
}

var drivers = []driver{
	{"sqlite", func(t *testing.T, clk *clock) *ledger { return newLedger(t, withClock(clk)) }},
	{"postgres", func(t *testing.T, clk *clock) *ledger {
		st, err := postgres.Open(pgtest.URL(t), store.Options{Create: true, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sb, err := sandbox.Open(filepath.Join(t.TempDir(), "provider.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Close() })
		return &ledger{t: t, st: st, sb: sb, svc: reconcile.New(st, config.Default().Tools, sb.Providers()), clock: clk}
	}},
}

// bothDrivers runs test on each driver's ledger.
func bothDrivers(t *testing.T, test func(t *testing.T, mk func(*clock) *ledger)) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			test(t, func(clk *clock) *ledger { return d.make(t, clk) })
		})
	}
}

// supersededThenLateApplied: while the first call is in flight its lease
// ends, a sweep makes it unknown and an operator authorizes a new key
// k2; then the provider's answer "applied" for k arrives.
func supersededThenLateApplied(t *testing.T, mk func(*clock) *ledger) *ledger {
	t.Helper()
	clk := newClock()
	l := mk(clk)
	l.atDispatchAfterSweep(t, clk, func() {
		d := decision(l.op("acme", "k"))
		d.NewKey = "k2"
		if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
			t.Fatal(err)
		}
	})
	l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateSuperseded || !op.Contradicted {
		t.Fatalf("set-up: %s contradicted=%v; want superseded, contradicted", op.State, op.Contradicted)
	}
	return l
}

// An operator authorized a new key k2 for an unknown k; the provider then
// answered, late, that it applied k. k2's first call used to send the
// e-mail a second time (under k2's own downstream key: no provider could
// tell it was the same one). It is refused now, as a contradicted
// not_applied's retry is, until a person marks k2 applied — which gives
// k2's callers (and k's, told to use k2) the receipt, and settles both.
func TestANewKeyWhoseOldKeyWasAppliedLateIsNotSent(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := supersededThenLateApplied(t, mk)
		k2 := l.op("acme", "k2")
		if k2.State != model.StateAuthorized || !k2.Contradicted {
			t.Fatalf("k2 after k's late \"applied\": %s contradicted=%v; want authorized, flagged contradicted", k2.State, k2.Contradicted)
		}
		res := l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{})
		if res.Class != model.ClassUnknown || !strings.Contains(res.Message, "second time") {
			t.Errorf("k2's first call: %s %s %q; want refused as unknown, saying why", res.Class, res.Outcome, res.Message)
		}
		if total := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); total != 1 {
			t.Fatalf("the provider holds %d deliveries of one notification; want 1", total)
		}
		k2 = l.op("acme", "k2")
		if got := reconcile.LegalFor(*k2); len(got) != 1 || got[0] != model.ActionMarkApplied {
			t.Fatalf("decisions on k2: %v; want only mark applied", got)
		}
		d := decision(k2)
		for _, a := range l.detail("acme", "k").Attempts {
			if a.Finding == model.FindingHasIt {
				d.Evidence = a.ProviderRef // the late answer's reference, as a "has it"
			}
		}
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatalf("mark k2 applied: %v", err)
		}
		if k, k2 := l.op("acme", "k"), l.op("acme", "k2"); k.Contradicted || k2.Contradicted || k2.State != model.StateApplied {
			t.Fatalf("after marking k2 applied: k contradicted=%v, k2 %s contradicted=%v; want settled", k.Contradicted, k2.State, k2.Contradicted)
		}
		old := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
		res = l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{})
		if old.NewKey != "k2" || res.Class != model.ClassDone || res.Receipt == nil || res.Receipt.Status != "replayed" {
			t.Fatalf("k: %s → %q; k2: %s %+v; want k2's replayed receipt", old.Class, old.NewKey, res.Class, res.Receipt)
		}
		if total := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); total != 1 {
			t.Fatalf("the provider holds %d deliveries; want 1", total)
		}
		l.audit()
	})
}

// failedThenLateApplied: the first call's dispatch is in flight when its
// lease ends; a sweep makes it unknown, an operator marks it not applied,
// the retry is rejected by the provider (failed) — and then the first
// dispatch's answer arrives: applied.
func failedThenLateApplied(t *testing.T, mk func(*clock) *ledger) *ledger {
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
	l.call(req, reconcile.CallOptions{})
	if op := l.op("acme", "k"); op.State != model.StateFailed || !op.Contradicted {
		t.Fatalf("set-up: %s contradicted=%v; want failed, contradicted", op.State, op.Contradicted)
	}
	return l
}

// A failed operation the provider's late answer says it applied: replays
// of the key tell every caller "rejected for good — do not retry", and the
// only decision was a new key, which sends the e-mail a second time. A
// person can now mark it applied, as a contradicted not_applied can: the
// replays then return the provider's receipt.
func TestAFailedOperationTheProviderSaysItAppliedCanBeMarkedApplied(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := failedThenLateApplied(t, mk)
		op := l.op("acme", "k")
		if !reconcile.AllowedFor(*op, model.ActionMarkApplied) {
			t.Fatalf("mark applied on a failed operation the provider says it applied: not allowed (%v)", reconcile.LegalFor(*op))
		}
		d := decision(op)
		d.Evidence = "sbx_1"
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatal(err)
		}
		if op := l.op("acme", "k"); op.State != model.StateApplied || op.Contradicted {
			t.Fatalf("after marking it applied: %s contradicted=%v; want applied, settled", op.State, op.Contradicted)
		}
		res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
		if res.Class != model.ClassDone || res.Receipt == nil || res.Receipt.Status != "replayed" {
			t.Fatalf("a retry: %s %+v; want the replayed receipt", res.Class, res.Receipt)
		}
		if n := l.deliveries("acme", "k"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
		// A failed operation nobody contradicted stays final.
		if reconcile.Allowed(model.StateFailed, model.ActionMarkApplied) {
			t.Error("mark applied must stay illegal for a plain failed operation")
		}
	})
}

// appliedThenLateRejected: while the first call's dispatch is in flight
// its lease ends, a sweep makes it unknown and an operator marks it
// applied on typed evidence; then the provider's answer arrives: rejected.
func appliedThenLateRejected(t *testing.T, mk func(*clock) *ledger) *ledger {
	t.Helper()
	clk := newClock()
	l := mk(clk)
	l.atDispatchAfterSweep(t, clk, func() {
		d := decision(l.op("acme", "k"))
		d.Evidence = "the customer says it arrived"
		if err := l.decide(model.ActionMarkApplied, d); err != nil {
			t.Fatal(err)
		}
	})
	l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Reject: true}})
	if op := l.op("acme", "k"); op.State != model.StateApplied || !op.Contradicted {
		t.Fatalf("set-up: %s contradicted=%v; want applied, contradicted", op.State, op.Contradicted)
	}
	return l
}

// An operation marked applied that the provider's late answer says it
// rejected: its replays report done an e-mail that was never sent, and no
// decision could change that — applied allowed none. A person may now
// authorize a new key for it (deliberately sending it), against a
// recorded "has it" only with the second confirmation, as everywhere.
func TestAnAppliedOperationTheProviderSaysItRejectedCanGetANewKey(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := appliedThenLateRejected(t, mk)
		op := l.op("acme", "k")
		if got := reconcile.LegalFor(*op); len(got) != 1 || got[0] != model.ActionAuthorizeKey {
			t.Fatalf("decisions on an applied operation the provider says it rejected: %v; want a new key", got)
		}
		d := decision(op)
		d.NewKey = "k2"
		if err := l.decide(model.ActionAuthorizeKey, d); !model.IsCode(err, model.CodeIllegal) || l.op("acme", "k").Version != op.Version {
			t.Fatalf("a new key against its receipt, unconfirmed: %v; want refused, nothing written", err)
		}
		d.Override = true
		if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
			t.Fatal(err)
		}
		old := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{})
		res := l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{})
		if old.NewKey != "k2" || res.Class != model.ClassDone {
			t.Fatalf("k: %s %q; k2: %s %s", old.Class, old.NewKey, res.Class, res.Message)
		}
		if n := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); n != 1 {
			t.Fatalf("%d deliveries; want 1", n)
		}
		if reconcile.Allowed(model.StateApplied, model.ActionAuthorizeKey) {
			t.Error("an applied operation nobody contradicted stays final")
		}
	})
}

// An operator authorized a new key k2 for an unknown k without asking the
// provider (its reply was lost); a lookup of k made after that — ops
// check, the console's c — finds the delivery. k2's first call would send
// the e-mail a second time: it is held, as after a late "applied".
func TestANewKeyWhoseOldKeyWasFoundAfterItWasAuthorizedIsNotSent(t *testing.T) {
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
		clk.Advance(time.Second)
		if _, looked, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Fatalf("check of k: %+v %v; want has it", looked.Finding, err)
		}
		res := l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{})
		if res.Class != model.ClassUnknown {
			t.Errorf("k2's first call: %s %q; want refused as unknown", res.Class, res.Message)
		}
		if n := l.deliveries("acme", "k") + l.deliveries("acme", "k2"); n != 1 {
			t.Fatalf("%d deliveries of one notification; want 1", n)
		}
		if k2 := l.op("acme", "k2"); k2.State != model.StateAuthorized || !k2.Contradicted || !reconcile.AllowedFor(*k2, model.ActionMarkApplied) {
			t.Fatalf("k2: %s contradicted=%v; want authorized, held for a person", k2.State, k2.Contradicted)
		}
	})
}

// A "has it" recorded before the new key was authorized was overridden
// deliberately (the second confirmation): the new key is sent.
func TestANewKeyAuthorizedAgainstAHasItIsSent(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		ctx := context.Background()
		l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
		if _, _, err := l.svc.CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		d := decision(l.op("acme", "k"))
		d.NewKey, d.Override = "k2", true
		if err := l.decide(model.ActionAuthorizeKey, d); err != nil {
			t.Fatal(err)
		}
		if res := l.call(notify("acme", "k2", "a@example.com"), reconcile.CallOptions{}); res.Class != model.ClassDone {
			t.Fatalf("k2's first call: %s %q; want sent (the override was deliberate)", res.Class, res.Message)
		}
	})
}

// A bulk override confirms the findings the operator saw (Target.Seen):
// a lookup recorded after them — another operator's check that found the
// delivery — refuses that row as stale; the others are written.
func TestABulkOverrideIsForTheLookupsSeen(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := mk(newClock())
		ctx := context.Background()
		for _, k := range []string{"k1", "k2"} {
			l.call(notify("acme", k, "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
		}
		var ops []model.Operation
		for _, k := range []string{"k1", "k2"} {
			op, err := l.st.Get(ctx, "acme", k)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, *op)
		}
		targets := []reconcile.Target{reconcile.TargetOf(ops[0]), reconcile.TargetOf(ops[1])}
		reconcile.SeeLookups(targets, ops)
		if _, _, err := l.svc.CheckAndRecord(ctx, "acme", "k2", "ops check by carol"); err != nil {
			t.Fatal(err)
		}
		d := reconcile.Decision{Operator: "alice", Reason: "incident INC-7", Evidence: "INC-7", Override: true, WithinGrace: true}
		out, err := l.svc.DecideMany(ctx, model.ActionMarkNotApplied, d, targets)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Verdict != reconcile.VerdictWritten || out[1].Verdict != reconcile.VerdictStale {
			t.Fatalf("verdicts %s, %s (%v); want written, stale", out[0].Verdict, out[1].Verdict, out[1].Err)
		}
		if got := l.op("acme", "k2").State; got != model.StateUnknown {
			t.Fatalf("k2: %s; want unknown", got)
		}
	})
}
