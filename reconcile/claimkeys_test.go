package reconcile_test

// Whether a provider honours downstream keys is recorded with each claim:
// a sweep or retry by a process whose config says otherwise (cron with an
// older file, an operator's copy) must not re-send a claim made where the
// provider was said to ignore keys.

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

// saysHonours is a provider that ignores downstream keys (the sandbox
// without them: a second dispatch is a second delivery) under a config
// that says it honours them.
type saysHonours struct{ provider.Provider }

func (saysHonours) HonoursKeys() bool { return true }

// otherConfig is a service on l's ledger whose config says provider name
// honours downstream keys, where the worker's said it did not.
func otherConfig(l *ledger, name string) *reconcile.Service {
	reg := provider.Registry{}
	for k, v := range l.svc.Providers {
		reg[k] = v
	}
	reg[name] = saysHonours{l.sb.Provider(name, false)}
	return reconcile.New(l.st, config.Default().Tools, reg)
}

func claimKeys(op *model.Operation) string {
	if op.ClaimHonoursKeys == nil {
		return "unrecorded"
	}
	if *op.ClaimHonoursKeys {
		return "honoured"
	}
	return "ignored"
}

// The reviewer's repro: a worker whose provider does not honour keys is
// killed after its dispatch; a sweep from a config where it does must not
// send it again — it makes the operation unknown and says why.
func TestASweepFromAnotherConfigDoesNotResendAClaimMadeWithoutKeys(t *testing.T) {
	l, c, _ := killedWorker(t, "sandbox", reconcile.PointAfterDispatch)
	if got := claimKeys(l.op("acme", "op-notify")); got != "ignored" {
		t.Fatalf("the claim recorded the provider's keys as %s; want ignored", got)
	}
	c.Advance(reconcile.DefaultLease + time.Second)
	rep, err := otherConfig(l, "sandbox").Sweep(t.Context())
	if err != nil || rep.Redispatched != 0 || rep.Unknown != 1 {
		t.Fatalf("sweep = %+v %v; want nothing re-sent, one lease → unknown", rep, err)
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Fatalf("the provider holds %d deliveries; want the worker's one", n)
	}
	if rep.NotResent != 1 || !strings.Contains(rep.NotResentWhy, "the claim was made by a config where provider sandbox does not honour downstream keys") {
		t.Errorf("the sweep's reasons %+v; want the claim's config named", rep)
	}
	d := l.detail("acme", "op-notify")
	last := d.Attempts[len(d.Attempts)-1]
	if d.Operation.State != model.StateUnknown || last.Outcome != model.OutcomeLeaseExpired ||
		!strings.Contains(last.Error, "the claim was made by a config where provider sandbox does not honour downstream keys") {
		t.Errorf("after the sweep: %s, last attempt %+v; want unknown with the reason", d.Operation.State, last)
	}
}

// The same for the next call of the key: it is the other re-send path.
func TestARetryFromAnotherConfigDoesNotResendAClaimMadeWithoutKeys(t *testing.T) {
	l, c, req := killedWorker(t, "sandbox", reconcile.PointAfterDispatch)
	c.Advance(reconcile.DefaultLease + time.Second)
	svc := otherConfig(l, "sandbox")
	res, err := svc.Call(t.Context(), req, reconcile.CallOptions{Provider: "sandbox"})
	if err != nil || res.Class != model.ClassUnknown || res.Outcome != model.OutcomeLeaseExpired ||
		!strings.Contains(res.Message, "does not honour downstream keys") {
		t.Fatalf("retry = %+v %v; want unknown, not re-sent, with the reason", res, err)
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Fatalf("the provider holds %d deliveries; want the worker's one", n)
	}
}

// Claimed and swept where the provider honours keys: re-sent as before,
// and the sweep's own claim records it too.
func TestAClaimMadeWithKeysIsStillResent(t *testing.T) {
	l, c, _ := killedWorker(t, "sandbox-idem", reconcile.PointAfterDispatch)
	if got := claimKeys(l.op("acme", "op-notify")); got != "honoured" {
		t.Fatalf("the claim recorded the provider's keys as %s; want honoured", got)
	}
	c.Advance(reconcile.DefaultLease + time.Second)
	rep, err := l.svc.Sweep(t.Context())
	if err != nil || rep.Redispatched != 1 || rep.Unknown != 0 || rep.NotResent != 0 {
		t.Fatalf("sweep = %+v %v; want one re-dispatch", rep, err)
	}
	if op := l.op("acme", "op-notify"); op.State != model.StateApplied || claimKeys(op) != "honoured" {
		t.Errorf("after the re-dispatch: %s, keys %s", op.State, claimKeys(op))
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Errorf("the provider holds %d deliveries, want 1", n)
	}
}

// A claim from before the ledger recorded it (NULL) is not re-sent, even
// where the provider honours keys now: the process that made it may have
// said otherwise.
func TestAClaimThatRecordedNothingIsNotResent(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	ctx := context.Background()
	err := l.st.WithTx(ctx, func(tx store.Tx) error {
		p, err := config.Default().Tools.Prepare(notify("acme", "old", "ops@example.com"))
		if err != nil {
			return err
		}
		if _, err := l.svc.ClaimTx(tx, p, "sandbox-idem", 0, l.st.Now()); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE operations SET claim_honours_keys = NULL`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	rep, err := l.svc.Sweep(ctx)
	if err != nil || rep.Redispatched != 0 || rep.Unknown != 1 || rep.NotResent != 1 ||
		!strings.Contains(rep.NotResentWhy, "recorded before") {
		t.Fatalf("sweep = %+v %v; want it made unknown, not re-sent, with the reason", rep, err)
	}
	if n := l.deliveries("acme", "old"); n != 0 {
		t.Errorf("the provider holds %d deliveries, want none", n)
	}
}

// SweepKeys (what the lab runs on a shared ledger) is the third re-send
// path: it holds such a claim back the same way and says why.
func TestSweepKeysFromAnotherConfigDoesNotResendAClaimMadeWithoutKeys(t *testing.T) {
	l, c, _ := killedWorker(t, "sandbox", reconcile.PointAfterDispatch)
	c.Advance(reconcile.DefaultLease + time.Second)
	rep, err := otherConfig(l, "sandbox").SweepKeys(t.Context(), "acme", []string{"op-notify"})
	if err != nil || rep.Redispatched != 0 || rep.Unknown != 1 || rep.NotResent != 1 ||
		!strings.Contains(rep.NotResentWhy, "the claim was made by a config where provider sandbox does not honour downstream keys") {
		t.Fatalf("SweepKeys = %+v %v; want nothing re-sent, one lease → unknown, the reason given", rep, err)
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Fatalf("the provider holds %d deliveries; want the worker's one", n)
	}
	if op := l.op("acme", "op-notify"); op.State != model.StateUnknown {
		t.Errorf("after SweepKeys: %s; want unknown", op.State)
	}
}
