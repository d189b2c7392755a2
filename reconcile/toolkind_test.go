package reconcile_test

// A tool's effect kind may change in the config between two calls of one
// key: a tool that went to a provider becomes local, or the reverse. The
// operation keeps the nature it was recorded with. One recorded with a
// provider is never settled or made again as a local effect (the provider
// may hold the effect: it would happen twice); one recorded as local is
// never sent to a provider. Reviewer R11's H1.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// changedTools is the built-in registry with tool's effect replaced by eff
// and, if rename is set, the tool renamed to it.
func changedTools(t testing.TB, tool string, eff model.Effect, rename string) *model.Registry {
	t.Helper()
	def := config.Default().Tools
	var tools []model.Tool
	for _, n := range def.Names() {
		tt, err := def.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		c := *tt
		if n == tool {
			if eff.Kind != "" {
				c.Effect = eff
			}
			if rename != "" {
				c.Name = rename
			}
		}
		tools = append(tools, c)
	}
	r, err := model.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	nowLocal    = model.Effect{Kind: model.EffectLocal, Table: model.TableLocalEffects}
	nowExternal = model.Effect{Kind: model.EffectExternal, Provider: "sandbox"}
)

// withTools is a service on l's ledger and providers under another
// registry: the same ledger called through a changed config.
func withTools(l *ledger, tools *model.Registry) *reconcile.Service {
	return reconcile.New(l.st, tools, l.svc.Providers)
}

// attempts is how many attempts tenant/key has.
func (l *ledger) attempts(tenant, key string) int { return len(l.detail(tenant, key).Attempts) }

func TestAnOperationSentToAProviderIsNeverMadeLocallyAfterItsToolBecameLocal(t *testing.T) {
	type setup func(t *testing.T) (*ledger, model.Request)
	inState := func(st model.State) setup {
		return func(t *testing.T) (*ledger, model.Request) {
			l := newLedger(t, withClock(newClock()))
			l.makeState(st, "acme", "k")
			return l, notify("acme", "k", "ops@example.com")
		}
	}
	leaseEnded := func(prov string) setup {
		return func(t *testing.T) (*ledger, model.Request) {
			l := newLedger(t, withClock(newClock()))
			req := notify("acme", "k", "ops@example.com")
			if died, res := l.callDying(req, reconcile.CallOptions{Provider: prov}, reconcile.PointAfterDispatch); !died {
				t.Fatalf("the call did not stop after its dispatch: %+v", res)
			}
			l.clock.Advance(reconcile.DefaultLease + time.Second)
			return l, req
		}
	}
	cases := []struct {
		name  string
		setup setup
		class model.Class
		out   model.Outcome
		state model.State
		// provider: the provider path answers the same (nothing is sent
		// there either); else it would send it, and this call must not.
		provider bool
		says     []string
	}{
		{"applied", inState(model.StateApplied), model.ClassDone, model.OutcomeReplayed, model.StateApplied, true, nil},
		{"failed", inState(model.StateFailed), model.ClassFailed, model.OutcomeReplayed, model.StateFailed, true, nil},
		{"unknown", inState(model.StateUnknown), model.ClassUnknown, model.OutcomeRefused, model.StateUnknown, true, nil},
		{"superseded", inState(model.StateSuperseded), model.ClassSuperseded, model.OutcomeRefused, model.StateSuperseded, true, nil},
		{"in progress, lease held", inState(model.StateInProgress), model.ClassInProgress, model.OutcomeInProgress, model.StateInProgress, true, nil},
		{"in progress, lease ended, provider ignores keys", leaseEnded("sandbox"), model.ClassUnknown, model.OutcomeLeaseExpired, model.StateUnknown, true, nil},
		{"in progress, lease ended, provider honours keys", leaseEnded("sandbox-idem"), model.ClassUnknown, model.OutcomeLeaseExpired, model.StateUnknown, false,
			[]string{"send_notification", "local", "sandbox-idem"}},
		{"not applied", inState(model.StateNotApplied), model.ClassConflict, model.OutcomeConflict, model.StateNotApplied, false,
			[]string{"send_notification", "local", "provider sandbox", "nothing was"}},
		{"not applied, contradicted", func(t *testing.T) (*ledger, model.Request) {
			return contradictedNotApplied(t), notify("acme", "k", "a@example.com")
		},
			model.ClassUnknown, model.OutcomeRefused, model.StateNotApplied, true, []string{"contradicted"}},
		{"authorized", inState(model.StateAuthorized), model.ClassConflict, model.OutcomeConflict, model.StateAuthorized, false,
			[]string{"send_notification", "local", "provider sandbox"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, req := c.setup(t)
			before := l.detail("acme", "k")
			delivered := l.deliveries("acme", "k")
			local := withTools(l, changedTools(t, "send_notification", nowLocal, ""))
			res, err := local.Call(context.Background(), req, reconcile.CallOptions{})
			if err != nil {
				t.Fatalf("call through the local tool: %v", err)
			}
			after := l.detail("acme", "k")
			if n, err := local.EffectCount(context.Background(), "send_notification", ""); err != nil || n != 0 {
				t.Errorf("%d local effects (%v): an operation recorded with a provider was made locally", n, err)
			}
			if res.Class != c.class || res.Outcome != c.out || after.Operation.State != c.state {
				t.Errorf("got %s/%s, state %s (%s); want %s/%s, state %s", res.Class, res.Outcome, after.Operation.State, res.Message, c.class, c.out, c.state)
			}
			if res.Receipt != nil && res.Receipt.Status == "created" {
				t.Errorf("answered with a new receipt: %+v", res.Receipt)
			}
			if n := l.deliveries("acme", "k"); n != delivered {
				t.Errorf("the provider got %d deliveries, had %d: a call through the local tool sent it", n, delivered)
			}
			if got, want := len(after.Attempts), len(before.Attempts)+1; got != want {
				t.Errorf("%d attempts after the call, want %d (its own, nothing else)", got, want)
			}
			if after.Operation.Provider != before.Operation.Provider || after.Operation.ClaimNo != before.Operation.ClaimNo {
				t.Errorf("provider %q claim %d became %q claim %d", before.Operation.Provider, before.Operation.ClaimNo, after.Operation.Provider, after.Operation.ClaimNo)
			}
			for _, w := range c.says {
				if !strings.Contains(res.Message, w) {
					t.Errorf("message %q does not say %q", res.Message, w)
				}
			}
			l.audit()
			if !c.provider {
				return
			}
			// The same key through the tool as it was: the same answer.
			l2, req2 := c.setup(t)
			want := l2.call(req2, reconcile.CallOptions{})
			if want.Class != res.Class || want.Outcome != res.Outcome {
				t.Errorf("through the local tool %s/%s; through the provider %s/%s", res.Class, res.Outcome, want.Class, want.Outcome)
			}
		})
	}
}

// The reverse: a key recorded as a local operation (its effect committed
// with it) whose tool now goes to a provider replays what it recorded, and
// nothing is sent.
func TestALocalOperationIsNeverSentToAProviderAfterItsToolBecameExternal(t *testing.T) {
	for _, c := range []struct {
		name    string
		advance time.Duration
		// force puts the local operation in this state through the
		// store (no path leaves a local operation anywhere but applied:
		// this is the rule's last line).
		force model.State
		class model.Class
		out   model.Outcome
	}{
		{"applied", 0, "", model.ClassDone, model.OutcomeReplayed},
		{"past its replay window", reconcile.DefaultReplayWindow + time.Hour, "", model.ClassExpired, model.OutcomeExpired},
		{"not applied", 0, model.StateNotApplied, model.ClassConflict, model.OutcomeConflict},
		{"authorized", 0, model.StateAuthorized, model.ClassConflict, model.OutcomeConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t, withClock(newClock()))
			req := task("acme", "k", "printer on fire")
			first := l.call(req, reconcile.CallOptions{})
			if first.Class != model.ClassDone {
				t.Fatalf("set-up: %+v", first)
			}
			l.clock.Advance(c.advance)
			if c.force != "" {
				err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
					op, err := tx.GetOperation("acme", "k")
					if err != nil {
						return err
					}
					from, ver := op.State, op.Version
					op.State = c.force
					return tx.UpdateOperation(op, from, ver)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			external := withTools(l, changedTools(t, "create_support_task", nowExternal, ""))
			res, err := external.Call(context.Background(), req, reconcile.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != c.class || res.Outcome != c.out {
				t.Errorf("got %s/%s (%s); want %s/%s", res.Class, res.Outcome, res.Message, c.class, c.out)
			}
			if res.Class == model.ClassDone && (res.Receipt == nil || resultID(t, res.Receipt) != resultID(t, first.Receipt)) {
				t.Errorf("replayed %+v; want the local receipt %+v", res.Receipt, first.Receipt)
			}
			if n := l.deliveries("acme", "k"); n != 0 {
				t.Errorf("the provider got %d deliveries for a local operation", n)
			}
			if op := l.op("acme", "k"); op.Provider != "" || op.ClaimNo != 1 {
				t.Errorf("the local operation now names provider %q, claim %d", op.Provider, op.ClaimNo)
			}
			if n := l.effects("create_support_task"); n != 1 {
				t.Errorf("%d tasks; want the one", n)
			}
			if c.force != "" {
				if op := l.op("acme", "k"); op.State != c.force || !strings.Contains(res.Message, "local effect to provider sandbox") {
					t.Errorf("state %s, message %q; want %s, saying the tool changed", op.State, res.Message, c.force)
				}
				return // the forced state is outside the ledger's rules
			}
			l.audit()
		})
	}
}

// A key retried under another tool name (a tool renamed in the config)
// with the very same arguments is a conflict that says the tool differs,
// not "different arguments".
func TestAConflictOverTheToolAloneSaysTheToolDiffers(t *testing.T) {
	l := newLedger(t)
	req := notify("acme", "k", "ops@example.com")
	l.call(req, reconcile.CallOptions{Faults: provider.Faults{Reject: true}})
	renamed := withTools(l, changedTools(t, "send_notification", model.Effect{}, "notify_customer"))
	again := req
	again.Tool = "notify_customer"
	res, err := renamed.Call(context.Background(), again, reconcile.CallOptions{})
	if err != nil || res.Class != model.ClassConflict {
		t.Fatalf("got %+v, %v; want a conflict", res, err)
	}
	for _, w := range []string{"send_notification", "notify_customer", "same arguments"} {
		if !strings.Contains(res.Message, w) {
			t.Errorf("message %q does not say %q", res.Message, w)
		}
	}
	if strings.Contains(res.Message, "different arguments") {
		t.Errorf("message %q speaks of different arguments; only the tool differs", res.Message)
	}
	// Other arguments under another tool: both are said.
	other := notify("acme", "k", "someone-else@example.com")
	other.Tool = "notify_customer"
	res, _ = renamed.Call(context.Background(), other, reconcile.CallOptions{})
	if res.Class != model.ClassConflict || !strings.Contains(res.Message, "notify_customer") || !strings.Contains(res.Message, "different arguments") {
		t.Errorf("another tool and other arguments: %s %q", res.Class, res.Message)
	}
}
