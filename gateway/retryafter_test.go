package gateway_test

// A busy provider's Retry-After reaches the caller: the gateway's
// Retry-After header and the problem's retry_after, and MCP's tool error
// (text and structured content), say the provider's wait, not the
// gateway's own 1 s.

import (
	"context"
	"errors"
	"strings"
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
		})
	}
}

var _ = reconcile.MaxRetryAfter
