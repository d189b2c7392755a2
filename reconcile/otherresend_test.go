package reconcile_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A released claim whose latest lookup found another request under its
// downstream key (has_other) is never sent again under that key: a
// provider that honours keys answers a repeated key with its first
// result — the other request's — and the operation would be recorded
// applied on an effect it never asked for (R18 H1). The sweep makes it
// unknown, a retry by call answers unknown; both say why, and that a new
// key is the way. Where the lookup lands while a request is already on
// its way, an applied answer naming the other request's reference is
// flagged contradicted.
func TestAnotherRequestUnderTheKeyIsNeverSentAgain(t *testing.T) {
	cases := []struct {
		name string
		how  string // "sweep", "call", "in-flight"
	}{
		{"sweep", "sweep"},
		{"call retry", "call"},
		{"lookup while the re-send is on its way", "in-flight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			a, b, clk := copiesSharingAProvider(t)
			opt := reconcile.CallOptions{Provider: "sandbox-idem"}
			if r := a.call(notify("acme", "op-1", "alice@a.example"), opt); r.Class != model.ClassDone {
				t.Fatalf("a's call: %s (%s)", r.Class, r.Message)
			}
			ref := a.op("acme", "op-1").ProviderRef
			req := notify("acme", "op-1", "bob@b.example")
			rb := b.call(req, reconcile.CallOptions{Provider: "sandbox-idem", Faults: provider.Faults{Delay: 2 * time.Second}})
			if op := b.op("acme", "op-1"); op.State != model.StateInProgress || op.LeaseOwner != reconcile.LeaseReleased {
				t.Fatalf("set-up: b's op-1 is %s held by %q (%s); want in_progress, released", op.State, op.LeaseOwner, rb.Message)
			}
			lookup := func() {
				if _, lb, err := b.svc.CheckAndRecord(ctx, "acme", "op-1", "triage by mo"); err != nil || !lb.Recorded || lb.Finding.Kind != model.FindingHasOther {
					t.Fatalf("b's lookup: %+v %v; want has_other recorded", lb.Finding, err)
				}
			}
			var res reconcile.Result
			switch c.how {
			case "sweep":
				lookup()
				if b.svc.Resendable(*b.op("acme", "op-1")) {
					t.Error("Resendable says a claim whose key holds another request may be sent again")
				}
				clk.Advance(time.Second)
				rep, err := b.svc.Sweep(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Redispatched != 0 || rep.Unknown != 1 {
					t.Errorf("sweep: %+v; want 0 re-dispatched, 1 unknown", rep)
				}
				if rep.OtherRequest != 1 {
					t.Errorf("sweep's report does not say why it was not sent again: %+v", rep)
				}
			case "call":
				lookup()
				res = b.call(req, opt)
				if res.Class != model.ClassUnknown {
					t.Errorf("retry by call: %s (%s); want unknown", res.Class, res.Message)
				}
				for _, w := range []string{"different request", "new key"} {
					if !strings.Contains(res.Message, w) {
						t.Errorf("retry by call says %q; want it to say %q", res.Message, w)
					}
				}
			case "in-flight":
				var once sync.Once
				b.svc.At = func(p reconcile.Point) {
					if p == reconcile.PointAfterClaim {
						once.Do(lookup)
					}
				}
				res = b.call(req, opt)
				b.svc.At = nil
				op := b.op("acme", "op-1")
				if op.State != model.StateApplied || !op.Contradicted {
					t.Errorf("an applied answer naming the other request's %s: %s contradicted %v (%s); want applied, flagged contradicted", ref, op.State, op.Contradicted, res.Message)
				}
				if res.Class == model.ClassDone {
					t.Errorf("the caller was told done on another request's effect: %+v", res)
				}
				return
			}
			op := b.op("acme", "op-1")
			if op.State != model.StateUnknown || op.ProviderRef != "" {
				t.Fatalf("b's op-1 after the %s: %s, ref %q; want unknown, no ref (the provider holds %s, another request)", c.how, op.State, op.ProviderRef, ref)
			}
			d := b.detail("acme", "op-1")
			last := d.Attempts[len(d.Attempts)-1]
			if last.Outcome != model.OutcomeLeaseExpired || !strings.Contains(last.Error, "different request") || !strings.Contains(last.Error, "new key") {
				t.Errorf("last attempt: %s %q; want lease_expired saying another request is under the key and a new key is the way", last.Outcome, last.Error)
			}
			for _, a := range d.Attempts {
				if a.Outcome == model.OutcomeRedispatched || a.Outcome == model.OutcomeApplied {
					t.Errorf("attempt %d: %s — nothing is sent again under a key that holds another request", a.Seq, a.Outcome)
				}
			}
		})
	}
}
