package reconcile_test

// External effects across a real process death: the worker is killed after
// the provider applied the effect and before transaction B recorded it.

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// killedWorker runs a notification call in a child process that dies at
// point, and opens the ledger in the parent with a clock at the real time
// the child used.
func killedWorker(t *testing.T, providerName string, point reconcile.Point) (*ledger, *clock, model.Request) {
	t.Helper()
	c := newClock()
	c.Set(time.Now())
	l := newLedger(t, withClock(c))
	l.close()
	req := notify("acme", "op-notify", "customer@example.com")
	spec := l.spec(req)
	spec.Provider, spec.DieAt = providerName, point
	if code, rep := runChildProcess(t, spec); code != exitDied || rep != nil {
		t.Fatalf("worker exit %d report %+v; want it killed at %s", code, rep, point)
	}
	l.open()
	return l, c, req
}

func TestWorkerKilledBetweenDispatchAndRecord(t *testing.T) {
	l, c, req := killedWorker(t, "sandbox", reconcile.PointAfterDispatch)
	ctx := context.Background()

	// The provider holds the effect; the ledger only knows it was claimed.
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Fatalf("provider holds %d deliveries, want 1", n)
	}
	d := l.detail("acme", "op-notify")
	if d.Operation.State != model.StateInProgress || len(d.Attempts) != 1 || d.Attempts[0].Outcome != model.OutcomeDispatched {
		t.Fatalf("ledger after the kill: %s with %+v; want in_progress with one dispatched attempt", d.Operation.State, d.Attempts)
	}
	if d.Operation.DownstreamKey != l.dk("acme", "op-notify") {
		t.Error("the downstream key was not persisted before dispatch")
	}

	// Inside the lease a sweep leaves it; a retry is told to wait.
	if rep, _ := l.svc.Sweep(ctx); rep.Unknown != 0 {
		t.Errorf("sweep inside the lease: %+v", rep)
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassInProgress {
		t.Errorf("retry inside the lease = %+v; want in progress elsewhere", res)
	}

	// After the lease: unknown, and a retry is refused (exit 5), not re-sent.
	c.Advance(reconcile.DefaultLease + time.Second)
	rep, err := l.svc.Sweep(ctx)
	if err != nil || rep.Unknown != 1 {
		t.Fatalf("sweep after the lease: %+v %v; want one lease → unknown", rep, err)
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassUnknown || res.Class.ExitCode() != 5 {
		t.Errorf("retry of an unknown outcome = %+v; want unknown (exit 5)", res)
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Fatalf("a refused retry reached the provider: %d deliveries", n)
	}

	// The provider's status path finds it, and asking changes nothing but
	// the ledger's note of how far the provider file went (provider_files:
	// the killed worker never recorded its delivery there).
	before := l.snapshot("provider_files")
	op, ev, err := l.svc.Check(ctx, "acme", "op-notify")
	if err != nil || !ev.Found || ev.Effects != 1 || ev.Ref == "" || op.State != model.StateUnknown {
		t.Fatalf("Check = %+v %+v %v; want the provider's record", op, ev, err)
	}
	if l.snapshot("provider_files") != before {
		t.Error("Check changed the ledger")
	}

	// The operator settles it with that evidence.
	if _, err := l.svc.MarkApplied(ctx, reconcile.Decision{Tenant: "acme", Key: "op-notify", Operator: "oncall",
		Reason: "provider lookup found the delivery", Evidence: ev.Ref, ExpectState: model.StateUnknown, ExpectVersion: op.Version}); err != nil {
		t.Fatal(err)
	}

	// The next retry — a new worker process — replays, with no second effect.
	l.close()
	code, next := runChildProcess(t, l.spec(req))
	l.open()
	if code != 0 || len(next.Errors) > 0 {
		t.Fatalf("retry worker exit %d %v", code, next.Errors)
	}
	res := next.Results[0]
	if res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed || res.Receipt.ProviderRef != ev.Ref {
		t.Errorf("retry after the decision = %+v; want the receipt naming %s", res, ev.Ref)
	}
	if n := l.deliveries("acme", "op-notify"); n != 1 {
		t.Errorf("provider holds %d deliveries after the retry, want 1", n)
	}
}

// With a provider that honours downstream keys, re-dispatching under the
// same key is safe: the sweep does it, and the provider still holds one.
func TestWorkerKilledBetweenDispatchAndRecordWithAnHonouringProvider(t *testing.T) {
	for _, point := range []reconcile.Point{reconcile.PointAfterDispatch, reconcile.PointAfterClaim} {
		t.Run(string(point), func(t *testing.T) {
			l, c, req := killedWorker(t, "sandbox-idem", point)
			want := 1
			if point == reconcile.PointAfterClaim {
				want = 0 // killed before anything left
			}
			if n := l.deliveries("acme", "op-notify"); n != want {
				t.Fatalf("provider holds %d deliveries after the kill, want %d", n, want)
			}
			c.Advance(reconcile.DefaultLease + time.Second)
			rep, err := l.svc.Sweep(t.Context())
			if err != nil || rep.Redispatched != 1 || rep.Unknown != 0 {
				t.Fatalf("sweep = %+v %v; want one re-dispatch, nothing unknown", rep, err)
			}
			d := l.detail("acme", "op-notify")
			if d.Operation.State != model.StateApplied || d.Operation.ProviderRef == "" {
				t.Errorf("after the re-dispatch: %s ref %q; want applied with the provider's reference", d.Operation.State, d.Operation.ProviderRef)
			}
			if last := d.Attempts[len(d.Attempts)-1]; last.Outcome != model.OutcomeApplied || last.WorkerID != "sweep" {
				t.Errorf("the sweep's attempt %+v; want it recorded as the sweep's, applied", last)
			}
			if n := l.deliveries("acme", "op-notify"); n != 1 {
				t.Errorf("provider holds %d deliveries after the re-dispatch, want 1", n)
			}
			res := l.call(req, reconcile.CallOptions{})
			if res.Outcome != model.OutcomeReplayed || l.deliveries("acme", "op-notify") != 1 {
				t.Errorf("retry = %+v; want a replay and still one delivery", res)
			}
		})
	}
}

// Killed after its claim and before dispatch, with a provider that ignores
// keys: the lease ends in unknown; the provider's lookup finds nothing; an
// operator marks it not applied with that evidence; the retry applies once.
func TestWorkerKilledBeforeDispatchSettledAsNotApplied(t *testing.T) {
	l, c, req := killedWorker(t, "sandbox", reconcile.PointAfterClaim)
	ctx := context.Background()
	c.Advance(reconcile.DefaultLease + time.Second)
	if rep, err := l.svc.Sweep(ctx); err != nil || rep.Unknown != 1 {
		t.Fatalf("sweep = %+v %v", rep, err)
	}
	op, ev, err := l.svc.Check(ctx, "acme", "op-notify")
	if err != nil || ev.Found || ev.Effects != 0 {
		t.Fatalf("Check = %+v %v; want nothing at the provider", ev, err)
	}
	// The operator knows the worker died before it sent anything: the
	// grace after its claim is overridden.
	if _, err := l.svc.MarkNotApplied(ctx, reconcile.Decision{Tenant: "acme", Key: "op-notify", Operator: "oncall",
		Reason: "worker died before dispatch", Evidence: ev.Detail, ExpectState: model.StateUnknown, ExpectVersion: op.Version, WithinGrace: true}); err != nil {
		t.Fatal(err)
	}
	res := l.call(req, reconcile.CallOptions{})
	if res.Outcome != model.OutcomeCreated || l.deliveries("acme", "op-notify") != 1 {
		t.Errorf("retry after not applied = %+v, %d deliveries; want one new delivery", res, l.deliveries("acme", "op-notify"))
	}
	if res := l.call(req, reconcile.CallOptions{}); res.Outcome != model.OutcomeReplayed {
		t.Errorf("next retry = %+v; want a replay", res)
	}
}

// The two-phase dispatch in one process, for each provider answer.
func TestExternalDispatchRecordsEachAnswer(t *testing.T) {
	cases := []struct {
		name     string
		prov     string
		faults   provider.Faults
		class    model.Class
		state    model.State
		outcome  model.Outcome // of the attempt row
		delivery int
	}{
		{"applied", "sandbox", provider.Faults{}, model.ClassDone, model.StateApplied, model.OutcomeApplied, 1},
		{"reply lost, keys ignored", "sandbox", provider.Faults{LoseReply: true}, model.ClassUnknown, model.StateUnknown, model.OutcomeTimedOut, 1},
		{"reply lost, keys honoured", "sandbox-idem", provider.Faults{LoseReply: true}, model.ClassInProgress, model.StateInProgress, model.OutcomeTimedOut, 1},
		{"rejected for good", "sandbox", provider.Faults{Reject: true}, model.ClassFailed, model.StateFailed, model.OutcomeFailed, 0},
		{"definitely not applied", "sandbox", provider.Faults{FailBefore: true}, model.ClassInProgress, model.StateNotApplied, model.OutcomeNotApplied, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			req := notify("acme", "k", "a@example.com")
			res := l.call(req, reconcile.CallOptions{Provider: c.prov, Faults: c.faults})
			d := l.detail("acme", "k")
			if res.Class != c.class || d.Operation.State != c.state || len(d.Attempts) != 1 || d.Attempts[0].Outcome != c.outcome {
				t.Errorf("result %s, state %s, attempts %+v; want %s, %s, one %s", res.Class, d.Operation.State, d.Attempts, c.class, c.state, c.outcome)
			}
			if n := l.deliveries("acme", "k"); n != c.delivery {
				t.Errorf("%d deliveries, want %d", n, c.delivery)
			}
			if d.Operation.Provider != c.prov || d.Operation.DownstreamKey == "" {
				t.Errorf("provider %q, downstream key %q not recorded", d.Operation.Provider, d.Operation.DownstreamKey)
			}
			// The honouring provider's released claim is re-sent at once by
			// the next call, still one delivery.
			if c.prov == "sandbox-idem" {
				again := l.call(req, reconcile.CallOptions{})
				if again.Class != model.ClassDone || l.deliveries("acme", "k") != 1 {
					t.Errorf("retry under an honouring provider = %+v, %d deliveries", again, l.deliveries("acme", "k"))
				}
			}
		})
	}
}
