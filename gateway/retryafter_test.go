package gateway_test

// A busy provider's Retry-After reaches the caller: the gateway's
// Retry-After header and the problem's retry_after, and MCP's tool error
// (text and structured content), say the provider's wait, not the
// gateway's own 1 s.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// busyProvider answers every dispatch "busy" with a Retry-After.
type busyProvider struct {
	name    string
	honours bool
	wait    time.Duration
}

func (p busyProvider) Name() string      { return p.name }
func (p busyProvider) HonoursKeys() bool { return p.honours }
func (p busyProvider) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	return provider.Response{Status: provider.Busy, Detail: "HTTP 429", RetryAfter: p.wait}, nil
}
func (p busyProvider) Lookup(context.Context, string) (provider.Evidence, error) {
	return provider.Evidence{}, errors.New("cannot tell")
}

// busyEverywhere makes every provider of e's service a busy one.
func busyEverywhere(e *env, honours bool, wait time.Duration) {
	for name := range e.svc.Providers {
		e.svc.Providers[name] = busyProvider{name: name, honours: honours, wait: wait}
	}
}

func TestABusyProvidersRetryAfterReachesTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name    string
		honours bool
		wait    time.Duration
		want    string
		wantN   float64
	}{
		{"3s, provider honours keys", true, 3 * time.Second, "3", 3},
		{"3s, provider ignores keys", false, 3 * time.Second, "3", 3},
		{"a date two days away is capped", false, 48 * time.Hour, "300", 300},
		{"none said: the gateway's own", false, 0, "1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			busyEverywhere(e, tc.honours, tc.wait)
			r := e.call("acme", "send_notification", "k1", notify)
			p := r.problem(t)
			if r.status != 409 || r.header.Get("Retry-After") != tc.want || p.RetryAfter != int(tc.wantN) {
				t.Fatalf("status %d, Retry-After %q, retry_after %d; want 409, %s: %s", r.status, r.header.Get("Retry-After"), p.RetryAfter, tc.want, r.body)
			}

			res := mcpCall(t, e, "m1", map[string]any{"to": "ops@example.com", "body": "disk full"})
			text := mcpText(res)
			st, _ := res.StructuredContent.(map[string]any)
			if tc.wait == 0 {
				if !res.IsError || st["retry_after"] != nil || !strings.HasPrefix(text, "Retry later") {
					t.Fatalf("mcp: %q %v; want no wait named", text, st)
				}
				return
			}
			if !res.IsError || st["retry_after"] != tc.wantN || !strings.HasPrefix(text, "Retry in "+tc.want+" seconds") {
				t.Fatalf("mcp: %q %v; want it to say to retry in %s seconds, retry_after %v", text, st, tc.want, tc.wantN)
			}
			// A capped wait is not what the provider asked for: the text
			// says the key is held, at most how long, not that the
			// provider asked for exactly this.
			if strings.Contains(text, "asked to wait that long") || !strings.Contains(text, "answered busy") || !strings.Contains(text, "at most 300 seconds") {
				t.Fatalf("mcp: %q; want the busy answer and the hold's bound, not a wait the provider asked for", text)
			}
		})
	}
}

var _ = reconcile.MaxRetryAfter

// countingBusy is busyProvider counting its dispatches.
type countingBusy struct {
	busyProvider
	sent *atomic.Int32
}

func (p countingBusy) Dispatch(ctx context.Context, r provider.Request) (provider.Response, error) {
	p.sent.Add(1)
	return p.busyProvider.Dispatch(ctx, r)
}

// A client that retries sooner than the provider asked is answered 409
// with the wait still left, and the provider is not sent it again — over
// HTTP and MCP, whether or not the provider honours keys.
func TestARetrySoonerThanTheProvidersRetryAfterIsNotSent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		honours bool
		wait    time.Duration
		want    string
	}{
		{"7s, provider honours keys", true, 7 * time.Second, "7"},
		{"7s, provider ignores keys", false, 7 * time.Second, "7"},
		{"a date two days away: 300", false, 48 * time.Hour, "300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var sent atomic.Int32
			for name := range e.svc.Providers {
				e.svc.Providers[name] = countingBusy{busyProvider{name: name, honours: tc.honours, wait: tc.wait}, &sent}
			}
			for i := range 3 {
				r := e.call("acme", "send_notification", "k1", notify)
				if p := r.problem(t); r.status != 409 || r.header.Get("Retry-After") != tc.want || sent.Load() != 1 {
					t.Fatalf("call %d: status %d, Retry-After %q, %d sent; want 409, %s, 1 sent: %s", i+1, r.status, r.header.Get("Retry-After"), sent.Load(), tc.want, r.body)
				} else if i > 0 && !strings.Contains(p.Detail, "was not sent again") {
					t.Fatalf("call %d: %q; want it to say it was not sent", i+1, p.Detail)
				}
			}
			for i := range 2 {
				res := mcpCall(t, e, "m1", map[string]any{"to": "ops@example.com", "body": "disk full"})
				st, _ := res.StructuredContent.(map[string]any)
				if text := mcpText(res); !res.IsError || !strings.HasPrefix(text, "Retry in "+tc.want+" seconds") || sent.Load() != 2 {
					t.Fatalf("mcp call %d: %q %v, %d sent; want retry in %s seconds, 2 sent", i+1, text, st, sent.Load(), tc.want)
				}
			}
		})
	}
}

// R15 M5: a claim held by its busy provider's Retry-After, called again
// where the provider no longer honours keys, is not sent: it becomes
// unknown, and the problem says the provider answered busy — not "a
// request with no definite answer".
func TestAHeldClaimNoLongerSentSaysItsProviderAnsweredBusy(t *testing.T) {
	e := newEnv(t)
	var sent atomic.Int32
	for name := range e.svc.Providers {
		e.svc.Providers[name] = countingBusy{busyProvider{name: name, honours: true, wait: 7 * time.Second}, &sent}
	}
	if r := e.call("acme", "send_notification", "k1", notify); r.status != 409 {
		t.Fatalf("first call: %d %s", r.status, r.body)
	}
	for name := range e.svc.Providers {
		e.svc.Providers[name] = countingBusy{busyProvider{name: name, honours: false, wait: 7 * time.Second}, &sent}
	}
	r := e.call("acme", "send_notification", "k1", notify)
	p := r.problem(t)
	if r.status == 409 || p.Class != "unknown" || sent.Load() != 1 {
		t.Fatalf("held claim, keys no longer honoured: %d class %q, %d sent; want unknown, nothing sent: %s", r.status, p.Class, sent.Load(), r.body)
	}
	if !strings.Contains(p.Detail, "answered busy") || !strings.Contains(p.Detail, "Retry-After") || strings.Contains(p.Detail, "no definite answer") {
		t.Fatalf("detail %q; want it to say the provider answered busy, with its Retry-After", p.Detail)
	}
}
