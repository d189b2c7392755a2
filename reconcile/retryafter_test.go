package reconcile_test

// A busy provider's Retry-After travels with the result (Result.RetryAfter,
// capped at reconcile.MaxRetryAfter) and CallWithRetry waits at least that
// long before it calls again — it gives up at once when the wait would
// pass its deadline.

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

func TestABusyProvidersWaitTravelsWithTheResult(t *testing.T) {
	for _, tc := range []struct {
		name    string
		honours bool
		said    time.Duration
		want    time.Duration
	}{
		{"honours keys, 3s", true, 3 * time.Second, 3 * time.Second},
		{"ignores keys, 3s", false, 3 * time.Second, 3 * time.Second},
		{"no wait said", false, 0, 0},
		{"a date two days away is capped", false, 48 * time.Hour, reconcile.MaxRetryAfter},
		{"under a second rounds up", true, 200 * time.Millisecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t)
			busy := newAnswering("mail", tc.honours, provider.Response{Status: provider.Busy, Detail: "HTTP 429", RetryAfter: tc.said})
			svc := withProvider(l, "mail", busy)
			res, err := svc.Call(t.Context(), notify("acme", "k", "a@example.com"), reconcile.CallOptions{Provider: "mail"})
			if err != nil || res.Class != model.ClassInProgress || res.RetryAfter != tc.want {
				t.Fatalf("call = %s, retry after %v, %v; want in_progress, retry after %v", res.Class, res.RetryAfter, err, tc.want)
			}
		})
	}
}

func TestCallWithRetryWaitsWhatTheProviderAsked(t *testing.T) {
	l := newLedger(t)
	busy := newAnswering("mail", false, provider.Response{Status: provider.Busy, Detail: "HTTP 429", RetryAfter: 3 * time.Second})
	svc := withProvider(l, "mail", busy)
	var log sleepLog
	p := reconcile.Policy{MaxAttempts: 3, Deadline: time.Minute, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second,
		Jitter: func() float64 { return 0.5 }, Sleep: log.sleep}
	res, n, err := svc.CallWithRetry(t.Context(), notify("acme", "k", "a@example.com"), reconcile.CallOptions{Provider: "mail"}, p)
	if err != nil || res.Class != model.ClassInProgress || n != 3 || res.RetryAfter != 3*time.Second {
		t.Fatalf("CallWithRetry = %s after %d, retry after %v, %v", res.Class, n, res.RetryAfter, err)
	}
	if len(log.delays) != 2 || log.delays[0] < 3*time.Second || log.delays[1] < 3*time.Second {
		t.Fatalf("slept %v; want two waits of at least the provider's 3s", log.delays)
	}

	// A wait past the deadline: give up now, with the provider's wait,
	// rather than sleep to the deadline and call nothing.
	var short sleepLog
	p.Deadline, p.Sleep = 2*time.Second, short.sleep
	start := time.Now()
	res, n, _ = svc.CallWithRetry(context.Background(), notify("acme", "k2", "a@example.com"), reconcile.CallOptions{Provider: "mail"}, p)
	if n != 1 || len(short.delays) != 0 || res.RetryAfter != 3*time.Second || time.Since(start) > time.Second {
		t.Fatalf("CallWithRetry past its deadline = %d attempts, slept %v, retry after %v; want one attempt, no sleep", n, short.delays, res.RetryAfter)
	}
}
