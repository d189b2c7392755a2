package reconcile_test

// The runner's one retry layer: capped attempts inside an overall deadline,
// exponential backoff with full jitter, only for retryable classes, and the
// same key every time.

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// inProgressElsewhere leaves acme/k claimed by a worker that died after its
// claim: its lease is live, so a call is told "in progress elsewhere".
func inProgressElsewhere(t *testing.T, l *ledger, prov string) model.Request {
	t.Helper()
	req := notify("acme", "k", "a@example.com")
	if died, _ := l.callDying(req, reconcile.CallOptions{Provider: prov}, reconcile.PointAfterClaim); !died {
		t.Fatal("the claiming worker did not die")
	}
	return req
}

type sleepLog struct{ delays []time.Duration }

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.delays = append(s.delays, d)
	return ctx.Err()
}

func TestCallWithRetryRetriesInProgressUpToTheCapWithTheSameKey(t *testing.T) {
	l := newLedger(t, withClock(newClock()))
	req := inProgressElsewhere(t, l, "sandbox")
	var log sleepLog
	p := reconcile.Policy{MaxAttempts: 4, Deadline: time.Minute, BaseDelay: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond,
		Jitter: func() float64 { return 0.5 }, Sleep: log.sleep}
	res, n, err := l.svc.CallWithRetry(t.Context(), req, reconcile.CallOptions{}, p)
	if err != nil || res.Class != model.ClassInProgress || n != 4 {
		t.Fatalf("CallWithRetry = %s after %d attempts, %v; want in_progress after 4 (the cap)", res.Class, n, err)
	}
	// Full jitter: half (the jitter) of min(cap, base·2^(n-1)).
	want := []time.Duration{50 * time.Millisecond, 75 * time.Millisecond, 75 * time.Millisecond}
	if len(log.delays) != len(want) {
		t.Fatalf("slept %v, want %v", log.delays, want)
	}
	for i := range want {
		if log.delays[i] != want[i] {
			t.Errorf("delay %d = %v, want %v", i+1, log.delays[i], want[i])
		}
	}
	// Every attempt went to the same operation: one key, never a new one.
	ops, _ := l.st.List(t.Context(), storeAll())
	d := l.detail("acme", "k")
	inProgress := 0
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeInProgress {
			inProgress++
		}
	}
	if len(ops) != 1 || inProgress != 4 {
		t.Errorf("%d operations, %d in-progress attempts; want 1 operation with 4", len(ops), inProgress)
	}
}

func TestCallWithRetryStopsWhenTheOutcomeSettles(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	req := inProgressElsewhere(t, l, "sandbox-idem")
	sleeps := 0
	p := reconcile.Policy{MaxAttempts: 10, Deadline: time.Minute, BaseDelay: time.Millisecond, MaxDelay: time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			sleeps++
			if sleeps == 2 {
				clk.Advance(reconcile.DefaultLease + time.Second) // the dead worker's lease ends
			}
			return nil
		}}
	res, n, err := l.svc.CallWithRetry(t.Context(), req, reconcile.CallOptions{}, p)
	if err != nil || res.Class != model.ClassDone || n != 3 {
		t.Fatalf("CallWithRetry = %+v after %d attempts, %v; want done on the third", res, n, err)
	}
	if l.deliveries("acme", "k") != 1 {
		t.Errorf("%d deliveries, want 1", l.deliveries("acme", "k"))
	}
}

// Conflict, invalid, unknown, superseded, failed, expired and done go back
// to the caller at once: one attempt, no sleep.
func TestCallWithRetryDoesNotRetryFinalClasses(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.svc.ReplayWindow = time.Hour
	l.call(task("acme", "old", "s"), reconcile.CallOptions{})
	clk.Advance(2 * time.Hour) // "old" is past its replay window
	l.makeState(model.StateUnknown, "acme", "unknown")
	l.makeState(model.StateSuperseded, "acme", "superseded")
	l.makeState(model.StateFailed, "acme", "failed")
	l.makeState(model.StateApplied, "acme", "applied")
	l.makeState(model.StateApplied, "acme", "done")
	bad := notify("acme", "x", "a@example.com")
	bad.Args = []byte(`{"to":""}`)
	cases := map[model.Class]model.Request{
		model.ClassConflict:   notify("acme", "applied", "someone-else@example.com"),
		model.ClassInvalid:    bad,
		model.ClassUnknown:    notify("acme", "unknown", "ops@example.com"),
		model.ClassSuperseded: notify("acme", "superseded", "ops@example.com"),
		model.ClassFailed:     notify("acme", "failed", "ops@example.com"),
		model.ClassExpired:    task("acme", "old", "s"),
		model.ClassDone:       notify("acme", "done", "ops@example.com"),
	}
	for class, req := range cases {
		slept := 0
		p := reconcile.Policy{MaxAttempts: 5, Deadline: time.Minute, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond,
			Sleep: func(context.Context, time.Duration) error { slept++; return nil }}
		res, n, _ := l.svc.CallWithRetry(t.Context(), req, reconcile.CallOptions{}, p)
		if res.Class != class || n != 1 || slept != 0 {
			t.Errorf("%s: got %s after %d attempts and %d sleeps; want it returned at once", class, res.Class, n, slept)
		}
		if class.Retryable() {
			t.Errorf("%s is marked retryable", class)
		}
	}
}

// The overall deadline bounds the whole budget, however many attempts the
// cap would allow.
func TestCallWithRetryStopsAtTheDeadline(t *testing.T) {
	l := newLedger(t, withClock(newClock()))
	req := inProgressElsewhere(t, l, "sandbox")
	p := reconcile.Policy{MaxAttempts: 100000, Deadline: 150 * time.Millisecond, BaseDelay: 2 * time.Millisecond, MaxDelay: 10 * time.Millisecond}
	start := time.Now()
	res, n, _ := l.svc.CallWithRetry(context.Background(), req, reconcile.CallOptions{}, p)
	// The last attempt either saw in_progress again or was itself cut by
	// the deadline (an internal "deadline exceeded", still retryable later).
	cut := res.Class == model.ClassInternal && strings.Contains(res.Message, "deadline")
	if (res.Class != model.ClassInProgress && !cut) || n >= 100000 || n < 2 {
		t.Errorf("stopped with %s (%s) after %d attempts; want in_progress or cut by the deadline", res.Class, res.Message, n)
	}
	// Not a speed target: a 150 ms budget must not run on for seconds.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v with a 150ms deadline", took)
	}
	// A caller's own deadline bounds it too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p.Deadline = time.Hour
	if _, n, _ := l.svc.CallWithRetry(ctx, req, reconcile.CallOptions{}, p); n >= 100000 {
		t.Errorf("the caller's deadline did not stop it (%d attempts)", n)
	}
}

// Backoff is full jitter: uniform in [0, min(MaxDelay, BaseDelay·2^(n-1))),
// for any base, cap and attempt number — no overflow past 2^63 ns.
func TestBackoffIsFullJitterWithinItsCeiling(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		base := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(rt, "base"))
		maxD := base + time.Duration(rapid.Int64Range(0, int64(100*time.Hour)).Draw(rt, "extra"))
		n := rapid.IntRange(1, 200).Draw(rt, "n")
		j := rapid.Float64Range(0, 0.999999).Draw(rt, "jitter")
		p := reconcile.Policy{BaseDelay: base, MaxDelay: maxD, Jitter: func() float64 { return j }}
		ceiling := new(big.Int).Lsh(big.NewInt(int64(base)), uint(n-1))
		if ceiling.Cmp(big.NewInt(int64(maxD))) > 0 {
			ceiling = big.NewInt(int64(maxD))
		}
		want := time.Duration(j * float64(ceiling.Int64()))
		if got := p.Backoff(n); got != want {
			rt.Fatalf("Backoff(%d) with base %v, cap %v, jitter %v = %v; want %v (ceiling %v)",
				n, base, maxD, j, got, want, time.Duration(ceiling.Int64()))
		}
	})
	// A base whose doubling wraps past 2^64 back to a small number: the
	// ceiling must stay at the cap, not fall to the wrapped value.
	wrap := reconcile.Policy{BaseDelay: 1<<40 + 1, MaxDelay: time.Hour, Jitter: func() float64 { return 0.5 }}
	for n := 1; n <= 130; n++ {
		if got := wrap.Backoff(n); n > 12 && got != 30*time.Minute {
			t.Fatalf("Backoff(%d) with base 2^40+1 ns = %v; want half the 1h cap", n, got)
		}
	}
	// The default jitter spreads the delays over the whole interval.
	p := reconcile.Policy{BaseDelay: time.Second, MaxDelay: time.Second}
	lo, hi := time.Second, time.Duration(0)
	for i := 0; i < 2000; i++ {
		d := p.Backoff(1)
		if d < 0 || d >= time.Second {
			t.Fatalf("default jitter gave %v, outside [0, 1s)", d)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo > 50*time.Millisecond || hi < 950*time.Millisecond {
		t.Errorf("2,000 delays spread only over [%v, %v]; full jitter covers [0, 1s)", lo, hi)
	}
}
