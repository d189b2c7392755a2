package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// sameLedgerID is the id both copies of one ledger carry.
const sameLedgerID = "0123456789abcdef0123456789abcdef"

// A lookup asked by downstream key alone: the key is derived from
// (ledger id, tenant, key), and two copies of one ledger (the same ledger
// id: a copied file, a restored backup run beside the original) each
// send their own request for acme/op-1 under the same downstream key. The
// provider's "has it" for the second copy's operation was the first
// copy's delivery — another notification, to someone else — and the
// console, a review or ops resolve offered and accepted "mark applied" on
// it: the second copy's notification was never sent. The sandbox keeps
// what it delivered, so its lookup is asked about the operation's own
// request: another request under the key is its own finding (has_other),
// no evidence either way, and "mark applied" on it is refused.
func TestALookupOfAnotherRequestUnderTheSameKeyIsNotHasIt(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		bTo       string          // b's recipient (a sends to alice)
		bFaults   provider.Faults // b's call
		bState    model.State     // b's operation after its call
		want      model.FindingKind
		contra    bool // b's operation is flagged contradicted by its lookup
		applyable bool // "mark applied" stays legal (its own request is there)
	}{
		// b's request never reached the provider (its wait ran out).
		{"copy-unknown", "sandbox", "bob@b.example", provider.Faults{Delay: 2 * time.Second}, model.StateUnknown, model.FindingHasOther, false, false},
		// b's request was refused before it was taken.
		{"copy-not-applied", "sandbox", "bob@b.example", provider.Faults{FailBefore: true}, model.StateNotApplied, model.FindingHasOther, false, false},
		// A provider that honours keys answered b's repeated key with a's
		// delivery: b is "applied" on another request's effect.
		{"copy-idem-applied", "sandbox-idem", "bob@b.example", provider.Faults{}, model.StateApplied, model.FindingHasOther, true, false},
		// The same request from both copies: what the provider holds is
		// this request.
		{"copy-same-request", "sandbox", "alice@a.example", provider.Faults{Delay: 2 * time.Second}, model.StateUnknown, model.FindingHasIt, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			a, b, clk := copiesSharingAProvider(t)
			ra := a.call(notify("acme", "op-1", "alice@a.example"), reconcile.CallOptions{Provider: c.provider})
			if ra.Class != model.ClassDone {
				t.Fatalf("a's call: %s (%s)", ra.Class, ra.Message)
			}
			rb := b.call(notify("acme", "op-1", c.bTo), reconcile.CallOptions{Provider: c.provider, Faults: c.bFaults})
			opA, opB := a.op("acme", "op-1"), b.op("acme", "op-1")
			if opA.DownstreamKey != opB.DownstreamKey {
				t.Fatalf("set-up: the copies' downstream keys differ (%s, %s)", opA.DownstreamKey, opB.DownstreamKey)
			}
			if opB.State != c.bState {
				t.Fatalf("set-up: b's op-1 is %s (%s); want %s", opB.State, rb.Message, c.bState)
			}
			clk.Advance(b.svc.Lease + reconcile.DefaultDispatchGrace + time.Second)

			// a's own lookup finds its own delivery.
			if _, la, err := a.svc.CheckAndRecord(ctx, "acme", "op-1", "console by mo"); err != nil || la.Finding.Kind != model.FindingHasIt || la.Finding.Ref != opA.ProviderRef {
				t.Fatalf("a's lookup: %+v %v; want has it %s", la.Finding, err, opA.ProviderRef)
			}

			cur, lb, err := b.svc.CheckAndRecord(ctx, "acme", "op-1", "console by mo")
			if err != nil || !lb.Recorded {
				t.Fatalf("b's lookup: %v (recorded %v)", err, lb.Recorded)
			}
			if lb.Finding.Kind != c.want {
				t.Fatalf("b's lookup: %s (%s); want %s", lb.Finding.Kind, lb.Finding.Detail, c.want)
			}
			if cur.Contradicted != c.contra {
				t.Errorf("b's op-1 contradicted %v after its lookup; want %v", cur.Contradicted, c.contra)
			}
			// What the ledger keeps is what the lookup said.
			if f := b.op("acme", "op-1").Finding; f == nil || f.Kind != c.want || f.Seq != lb.Finding.Seq || f.Detail != lb.Finding.Detail {
				t.Errorf("b's recorded finding: %+v; want %s at %d", f, c.want, lb.Finding.Seq)
			}
			_, ev, checkErr := b.svc.Check(ctx, "acme", "op-1")
			if c.want == model.FindingHasIt {
				if checkErr != nil || !ev.Found {
					t.Errorf("b's Check: %+v %v; want found", ev, checkErr)
				}
				return
			}

			// has_other: never evidence, and says what differs and what to do.
			var other *provider.OtherRequest
			if !errors.As(lb.Err, &other) || lb.Evidence.Found || other.Ref != opA.ProviderRef {
				t.Errorf("b's lookup: err %v, found %v; want an OtherRequest naming %s, not found", lb.Err, lb.Evidence.Found, opA.ProviderRef)
			}
			for _, words := range []string{"different request", opA.ProviderRef, "other arguments", "authorize a new key"} {
				if !strings.Contains(lb.Finding.Detail, words) {
					t.Errorf("b's finding %q does not say %q", lb.Finding.Detail, words)
				}
			}
			if checkErr == nil || ev.Found || !errors.As(checkErr, &other) {
				t.Errorf("b's Check: %+v %v; want no evidence (an OtherRequest)", ev, checkErr)
			}
			if reconcile.EvidenceOf(b.op("acme", "op-1").Finding) != nil {
				t.Error("b's has_other finding is evidence")
			}
			r := b.svc.ReviewByFinding([]model.Operation{*b.op("acme", "op-1")})
			if len(r.Apply) != 0 || len(r.NotApplied) != 0 || len(r.Left) != 1 {
				t.Errorf("b's review: %+v; want left alone", r)
			}
			// Mark applied, with a reference, with the override: refused,
			// in plain words, and nothing written.
			before := b.snapshot()
			for _, override := range []bool{false, true} {
				d := decision(b.op("acme", "op-1"))
				d.Evidence, d.Override = opA.ProviderRef, override
				err := b.decide(model.ActionMarkApplied, d)
				if err == nil || (c.applyable && err != nil) {
					if !c.applyable {
						t.Fatalf("mark applied (override %v) on another request's delivery was written", override)
					}
					continue
				}
				if !c.applyable && (!model.IsCode(err, model.CodeIllegal) && !strings.Contains(err.Error(), "allowed from")) {
					t.Errorf("mark applied (override %v): %v (code %s); want refused", override, err, model.CodeOf(err))
				}
				if b.snapshot() != before {
					t.Fatalf("mark applied (override %v): the refused decision changed the ledger", override)
				}
			}
			if c.bState == model.StateUnknown {
				d := decision(b.op("acme", "op-1"))
				d.Evidence = opA.ProviderRef
				err := b.decide(model.ActionMarkApplied, d)
				for _, words := range []string{"cannot mark acme/op-1 applied", "different request", "authorize a new key", "nothing was written"} {
					if err == nil || !strings.Contains(err.Error(), words) {
						t.Errorf("mark applied refused with %v; want it to say %q", err, words)
					}
				}
				// A new key is the way to send it.
				d = decision(b.op("acme", "op-1"))
				d.Evidence = ""
				if _, _, err := b.svc.AuthorizeNewKey(ctx, d); err != nil {
					t.Errorf("authorize a new key: %v", err)
				}
			}
		})
	}
}

// copiesSharingAProvider is two copies of one ledger (the same ledger id,
// so the same downstream keys) sending to one sandbox provider file, on
// one clock: what makes a provider hold another request under a key.
func copiesSharingAProvider(t *testing.T) (a, b *ledger, clk *clock) {
	t.Helper()
	dir := t.TempDir()
	clk = newClock()
	open := func(file string) *ledger {
		tl := testledger.In(t, dir, testledger.Named(file), testledger.ProviderFile("shared.provider.db"),
			testledger.ID(sameLedgerID), testledger.WithClock(clk))
		t.Cleanup(tl.Close)
		l := wrap(t, tl)
		l.svc.DispatchTimeout = 20 * time.Millisecond
		l.svc.Lease = 2 * time.Second
		return l
	}
	return open("a.db"), open("b.db"), clk
}
