package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// The bulk paths read many operations' graces in one batched read
// (GracesOf, GraceChecks): each is exactly the grace one operation's path
// reads (GraceOf, GraceCheck on its detail) — within it, past it, after a
// definite answer, a claim still running, a released claim whose recorded
// apply-by outlasts this config's grace, a local operation — and a key
// with no operation has none.
func TestTheBatchedGraceIsEachOperationsOwn(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		ctx := context.Background()
		clk := newClock()
		l := mk(clk)
		l.svc.DispatchTimeout = 20 * time.Millisecond
		slow := reconcile.CallOptions{Faults: provider.Faults{Delay: 2 * time.Second}}
		unknown := func(key string, opt reconcile.CallOptions) {
			t.Helper()
			if res := l.call(notify("acme", key, key+"@example.com"), opt); res.Class != model.ClassUnknown {
				t.Fatalf("set-up %s: %s", key, res.Class)
			}
		}
		unknown("old", slow)
		clk.Advance(reconcile.DefaultDispatchGrace + time.Minute)
		// Its claim's config had a grace of 10 minutes; this one's is the
		// default: the claim's recorded apply-by is the later.
		l.svc.Grace = 10 * time.Minute
		unknown("released", slow)
		l.svc.Grace = 0
		unknown("fresh", slow)
		if res := l.call(notify("acme", "failed", "f@example.com"), reconcile.CallOptions{Faults: provider.Faults{Reject: true}}); res.Class != model.ClassFailed {
			t.Fatalf("set-up failed: %s", res.Class)
		}
		if err := l.st.WithTx(ctx, func(tx store.Tx) error {
			p, err := config.Default().Tools.Prepare(notify("acme", "running", "r@example.com"))
			if err != nil {
				return err
			}
			// A live lease (longer than every check below): a worker is
			// sending it, so no decision is open and nothing is within.
			_, err = l.svc.ClaimTx(tx, p, "", 2*time.Hour, l.st.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if res := l.call(model.Request{Tenant: "acme", Key: "local", Tool: "create_support_task", Args: []byte(`{"subject":"s"}`)}, reconcile.CallOptions{}); res.Class != model.ClassDone {
			t.Fatalf("set-up local: %s %s", res.Class, res.Message)
		}
		if g, err := l.svc.GraceOf(ctx, "acme", "released"); err != nil || !g.Until.After(clk.Now().Add(reconcile.DefaultLease+reconcile.DefaultDispatchGrace)) {
			t.Fatalf("set-up released: grace %+v %v; want its claim's apply-by, later than this config's", g, err)
		}
		names := []string{"old", "released", "fresh", "failed", "running", "local"}
		keys := []store.OpKey{{Tenant: "acme", Key: "nope"}, {Tenant: "globex", Key: "fresh"}}
		var ops []model.Operation
		for _, n := range names {
			keys = append(keys, store.OpKey{Tenant: "acme", Key: n})
			ops = append(ops, *l.op("acme", n))
		}
		for _, after := range []time.Duration{0, time.Minute, 10 * time.Minute, time.Hour} {
			now := clk.Now().Add(after)
			graces, err := l.svc.GracesOf(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			if len(graces) != len(names) {
				t.Errorf("%d graces for %d operations: %v", len(graces), len(names), graces)
			}
			for _, k := range keys[:2] {
				if g, ok := graces[k]; ok {
					t.Errorf("%v: no operation, grace %+v", k, g)
				}
			}
			for _, action := range []model.Action{model.ActionMarkNotApplied, model.ActionAuthorizeKey, model.ActionMarkApplied} {
				checks, err := l.svc.GraceChecks(ctx, action, ops, now)
				if err != nil {
					t.Fatal(err)
				}
				if len(checks) != len(ops) {
					t.Fatalf("%d checks for %d operations", len(checks), len(ops))
				}
				for i, n := range names {
					one, err := l.svc.GraceOf(ctx, "acme", n)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := fmt.Sprintf("%+v", graces[keys[i+2]]), fmt.Sprintf("%+v", one); got != want {
						t.Errorf("%s: batched grace %s; its own %s", n, got, want)
					}
					d := l.detail("acme", n)
					want := l.svc.GraceCheck(action, ops[i], d.Attempts, now)
					if fmt.Sprint(checks[i]) != fmt.Sprint(want) || errors.Is(checks[i], reconcile.ErrWithinGrace) != errors.Is(want, reconcile.ErrWithinGrace) {
						t.Errorf("%s, %s at +%s: batched check %v; its own %v", n, action.Verb(), after, checks[i], want)
					}
				}
			}
		}
		// What the cases cover: at once, fresh and released are within
		// their graces; after 10 minutes, only released.
		within := func(now time.Time) (out []string) {
			checks, err := l.svc.GraceChecks(ctx, model.ActionMarkNotApplied, ops, now)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range checks {
				if c != nil {
					out = append(out, names[i])
				}
			}
			return out
		}
		if got := fmt.Sprint(within(clk.Now()), within(clk.Now().Add(5*time.Minute))); got != "[released fresh] [released]" {
			t.Errorf("within the grace: %s; want [released fresh] [released]", got)
		}
		if c, err := l.svc.GraceChecks(ctx, model.ActionMarkNotApplied, nil, clk.Now()); err != nil || len(c) != 0 {
			t.Errorf("no operations: %v %v", c, err)
		}
	})
}
