package reconcile_test

// A busy provider's Retry-After holds its operation back: until the wait it
// asked for has passed (at most reconcile.MaxRetryAfter), neither a call of
// the same key nor a sweep sends it again — each is told the wait still
// left — and the first after it does.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// busyThen answers busy (with its Retry-After) to the first dispatch and
// then applied, counting dispatches.
type busyThen struct {
	honours bool
	wait    time.Duration
	sent    atomic.Int32
}

func (p *busyThen) Name() string      { return "mail" }
func (p *busyThen) HonoursKeys() bool { return p.honours }
func (p *busyThen) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	if p.sent.Add(1) == 1 {
		return provider.Response{Status: provider.Busy, Detail: "HTTP 429", RetryAfter: p.wait}, nil
	}
	return provider.Response{Status: provider.Applied, Ref: "m-1"}, nil
}
func (p *busyThen) Lookup(_ context.Context, key string) (provider.Evidence, error) {
	return provider.Evidence{Provider: "mail", DownstreamKey: key}, errors.New("cannot tell")
}

func TestABusyProvidersWaitHoldsItsOperationBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		honours bool
		wait    time.Duration
		held    time.Duration // the wait a call right after is told (0: sent at once)
		state   model.State   // the operation's state while held
	}{
		{"honours keys, 7s", true, 7 * time.Second, 7 * time.Second, model.StateInProgress},
		{"ignores keys, 7s", false, 7 * time.Second, 7 * time.Second, model.StateNotApplied},
		{"a date two days away holds 300s", true, 48 * time.Hour, reconcile.MaxRetryAfter, model.StateInProgress},
		{"under a second holds 1s", false, 200 * time.Millisecond, time.Second, model.StateNotApplied},
		{"no wait said: sent again at once", true, 0, 0, model.StateInProgress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, withClock(newClock()))
			prov := &busyThen{honours: tc.honours, wait: tc.wait}
			svc := withProvider(l, "mail", prov)
			call := func() reconcile.Result {
				t.Helper()
				res, err := svc.Call(t.Context(), notify("acme", "k", "a@example.com"), reconcile.CallOptions{Provider: "mail"})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := call(); res.Class != model.ClassInProgress || prov.sent.Load() != 1 {
				t.Fatalf("first call = %s, %d sent", res.Class, prov.sent.Load())
			}
			if tc.held == 0 {
				if res := call(); res.Class != model.ClassDone || prov.sent.Load() != 2 {
					t.Fatalf("a retry with no wait asked = %s (%s), %d sent; want sent again and applied", res.Class, res.Message, prov.sent.Load())
				}
				return
			}
			attempts := func() int {
				t.Helper()
				d, err := l.st.Detail(t.Context(), "acme", "k")
				if err != nil {
					t.Fatal(err)
				}
				return len(d.Attempts)
			}
			// Right after, and halfway: held, told what is left; a held
			// call sends nothing and records nothing (a client hammering
			// the key would add a row per call).
			for _, after := range []time.Duration{0, tc.held / 2} {
				l.clock.Advance(after)
				before := attempts()
				res := call()
				if n := attempts(); n != before {
					t.Fatalf("a held call recorded %d attempts", n-before)
				}
				left := tc.held - after
				if left%time.Second != 0 {
					left = left.Truncate(time.Second) + time.Second
				}
				if res.Class != model.ClassInProgress || res.RetryAfter != left || res.State != tc.state || prov.sent.Load() != 1 {
					t.Fatalf("a retry %v after = %s (%s), state %s, retry after %v, %d sent; want held, retry after %v, state %s, 1 sent",
						after, res.Class, res.Message, res.State, res.RetryAfter, prov.sent.Load(), left, tc.state)
				}
				rep, err := svc.Sweep(t.Context())
				if err != nil || rep.Redispatched != 0 || prov.sent.Load() != 1 {
					t.Fatalf("a sweep %v after: %+v %v, %d sent; want nothing sent", after, rep, err, prov.sent.Load())
				}
				if tc.state == model.StateInProgress && after > 0 && (rep.Waiting != 1 || rep.NotSent != 0) {
					t.Fatalf("a sweep %v after: %+v; want the held lease reported not sent", after, rep)
				}
			}
			op, err := l.st.Get(t.Context(), "acme", "k")
			if err != nil || op.RetryNotBefore.IsZero() {
				t.Fatalf("while held: retry_not_before %v, %v; want recorded", op.RetryNotBefore, err)
			}
			// Past the wait: the next call sends it.
			l.clock.Advance(tc.held - tc.held/2)
			if res := call(); res.Class != model.ClassDone || prov.sent.Load() != 2 {
				t.Fatalf("a retry past the wait = %s (%s), %d sent; want sent again and applied", res.Class, res.Message, prov.sent.Load())
			}
			if op, err := l.st.Get(t.Context(), "acme", "k"); err != nil || !op.RetryNotBefore.IsZero() {
				t.Fatalf("applied: retry_not_before %v, %v; want cleared", op.RetryNotBefore, err)
			}
		})
	}
}

// A sweep past the wait re-dispatches a released claim held back by it.
func TestASweepSendsAHeldClaimOnceItsWaitHasPassed(t *testing.T) {
	l := newLedger(t, withClock(newClock()))
	prov := &busyThen{honours: true, wait: 5 * time.Second}
	svc := withProvider(l, "mail", prov)
	if res, err := svc.Call(t.Context(), notify("acme", "k", "a@example.com"), reconcile.CallOptions{Provider: "mail"}); err != nil || res.RetryAfter != 5*time.Second {
		t.Fatalf("first call: %+v %v", res, err)
	}
	l.clock.Advance(5 * time.Second)
	rep, err := svc.Sweep(t.Context())
	if err != nil || rep.Redispatched != 1 || rep.Waiting != 0 || prov.sent.Load() != 2 {
		t.Fatalf("sweep past the wait: %+v %v, %d sent; want re-dispatched", rep, err, prov.sent.Load())
	}
}
