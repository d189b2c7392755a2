package reconcile_test

// R15 M5: a claim released after a busy answer and held by its Retry-After
// (retry_not_before), settled where the provider is no longer taken to
// honour downstream keys — by a sweep or the next call of its key. It is
// not sent again, and it becomes unknown (a busy answer taken where keys
// are honoured is no proof nothing was applied: a 503 counts as busy
// there), but its words say what the provider last answered — busy, with
// its Retry-After — never "a request with no definite answer".

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

func TestAHeldClaimNoLongerSentSaysItsProviderAnsweredBusy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bySweep bool
		after   time.Duration // since the busy answer
	}{
		{"call, while held", false, 2 * time.Second},
		{"call, past the wait", false, 9 * time.Second},
		{"sweep, while held", true, 2 * time.Second},
		{"sweep, past the wait", true, 9 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, withClock(newClock()))
			busy := newAnswering("mail", true, provider.Response{Status: provider.Busy, Detail: "HTTP 429", RetryAfter: 7 * time.Second})
			svc := withProvider(l, "mail", busy)
			req := notify("acme", "k", "a@example.com")
			if res, err := svc.Call(t.Context(), req, reconcile.CallOptions{Provider: "mail"}); err != nil || res.RetryAfter != 7*time.Second {
				t.Fatalf("first call: %+v %v", res, err)
			}
			l.clock.Advance(tc.after)
			// Another config: the provider no longer honours keys.
			other := withProvider(l, "mail", newAnswering("mail", false, provider.Response{Status: provider.Applied, Ref: "m-2"}))
			var msg string
			if tc.bySweep {
				rep, err := other.Sweep(t.Context())
				if err != nil || rep.Unknown != 1 || rep.Redispatched != 0 || rep.Waiting != 0 {
					t.Fatalf("sweep: %+v %v; want the held claim made unknown, nothing sent", rep, err)
				}
			} else {
				res, err := other.Call(t.Context(), req, reconcile.CallOptions{Provider: "mail"})
				if err != nil || res.Class != model.ClassUnknown || res.Outcome != model.OutcomeLeaseExpired {
					t.Fatalf("call: %s %s (%s) %v; want unknown, lease_expired", res.Class, res.Outcome, res.Message, err)
				}
				msg = res.Message
			}
			d := l.detail("acme", "k")
			last := d.Attempts[len(d.Attempts)-1]
			if d.Operation.State != model.StateUnknown || last.Outcome != model.OutcomeLeaseExpired {
				t.Fatalf("state %s, last attempt %s; want unknown, lease_expired", d.Operation.State, last.Outcome)
			}
			if msg != "" && msg != last.Error {
				t.Errorf("the call said %q, its attempt %q; want the same words", msg, last.Error)
			}
			for _, want := range []string{"answered busy", "Retry-After", "does not honour downstream keys", "outcome is unknown"} {
				if !strings.Contains(last.Error, want) {
					t.Errorf("words %q; want %q in them", last.Error, want)
				}
			}
			if strings.Contains(last.Error, "no definite answer") || strings.Contains(last.Error, "no result") {
				t.Errorf("words %q; the provider's last answer was a definite busy", last.Error)
			}
		})
	}
}
