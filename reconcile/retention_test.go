package reconcile_test

// Retention: receipts replay within the replay window; after it, until the
// tombstone window ends, a retry is told "expired — reconcile" (exit 7) and
// creates nothing — whether or not a sweep compacted the receipt yet.

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

func TestRetryPastTheReplayWindowIsExpiredAndCreatesNothing(t *testing.T) {
	requests := map[string]model.Request{
		"local task":            task("acme", "op-old", "check delayed delivery"),
		"external notification": notify("acme", "op-old", "a@example.com"),
	}
	for name, req := range requests {
		for _, compact := range []bool{false, true} {
			t.Run(name+map[bool]string{false: ", receipt still stored", true: ", compacted to a tombstone"}[compact], func(t *testing.T) {
				clk := newClock()
				l := newLedger(t, withClock(clk))
				l.svc.ReplayWindow, l.svc.TombstoneWindow = time.Hour, 24*time.Hour
				first := l.call(req, reconcile.CallOptions{})
				if first.Outcome != model.OutcomeCreated {
					t.Fatalf("first call %+v", first)
				}
				effects := func() int {
					if req.Tool == tool {
						return l.effects(tool)
					}
					return l.deliveries("acme", "op-old")
				}

				// Just inside the window: a replay.
				clk.Advance(time.Hour - time.Millisecond)
				if res := l.call(req, reconcile.CallOptions{}); res.Outcome != model.OutcomeReplayed {
					t.Fatalf("retry inside the replay window = %+v", res)
				}
				clk.Advance(time.Millisecond)
				if compact {
					rep, err := l.svc.Sweep(t.Context())
					if err != nil || rep.Compacted != 1 {
						t.Fatalf("sweep = %+v %v; want the receipt compacted", rep, err)
					}
					if _, err := l.st.Get(t.Context(), "acme", "op-old"); !model.IsCode(err, model.CodeNotFound) {
						t.Fatalf("the compacted operation is still there: %v", err)
					}
				}
				before := l.snapshot("attempts")
				res := l.call(req, reconcile.CallOptions{})
				if res.Class != model.ClassExpired || res.Class.ExitCode() != 7 || res.Receipt != nil {
					t.Errorf("retry past the replay window = %+v; want expired (exit 7) without a receipt", res)
				}
				if !strings.Contains(res.Message, "reconcile") || !strings.Contains(res.Message, "do not retry under a fresh key") {
					t.Errorf("expired message %q does not say what to do", res.Message)
				}
				if l.snapshot("attempts") != before || effects() != 1 {
					t.Errorf("the expired retry created something (effects %d)", effects())
				}
				if compact {
					if ops, _ := l.st.List(t.Context(), storeAll()); len(ops) != 0 {
						t.Errorf("the expired retry made an operation: %v", ops)
					}
				}
				// Later within the tombstone window: still expired.
				clk.Advance(20 * time.Hour)
				if res := l.call(req, reconcile.CallOptions{}); res.Class != model.ClassExpired {
					t.Errorf("retry 21 h later = %+v; want still expired", res)
				}
				if !compact {
					return
				}
				// Past the tombstone window the key is forgotten: a retry is a
				// new operation. This is the documented limit of retention.
				clk.Advance(4 * time.Hour)
				if rep, err := l.svc.Sweep(t.Context()); err != nil || rep.Forgotten != 1 {
					t.Fatalf("sweep past the tombstone window = %+v %v", rep, err)
				}
				if res := l.call(req, reconcile.CallOptions{}); res.Outcome != model.OutcomeCreated || effects() != 2 {
					t.Errorf("retry after the tombstone window = %+v (effects %d); a forgotten key is new", res, effects())
				}
			})
		}
	}
}

// Effects outlive their receipts: compaction deletes ledger records, never
// a task, and the audit stays clean.
func TestCompactionKeepsEffects(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.svc.ReplayWindow = time.Hour
	for _, k := range []string{"a", "b", "c"} {
		l.call(task("acme", k, "subject "+k), reconcile.CallOptions{})
	}
	clk.Advance(30 * time.Minute)
	l.call(task("acme", "d", "subject d"), reconcile.CallOptions{})
	clk.Advance(31 * time.Minute)
	rep, err := l.svc.Sweep(t.Context())
	if err != nil || rep.Compacted != 3 {
		t.Fatalf("sweep = %+v %v; want the three old receipts compacted", rep, err)
	}
	if n := l.effects(tool); n != 4 {
		t.Errorf("%d tasks after compaction, want 4", n)
	}
	if res := l.call(task("acme", "d", "subject d"), reconcile.CallOptions{}); res.Outcome != model.OutcomeReplayed {
		t.Errorf("the young receipt = %+v; want a replay", res)
	}
	l.audit()
}

// A misconfigured sweep must never forget a tombstone it has just made: the
// next retry of the key would then find nothing and make a second effect.
// Windows that are zero, negative, or a tombstone window shorter than the
// replay window — the service's, or the one the operation recorded when it
// settled — are refused, and nothing is changed.
func TestSweepRefusesRetentionThatWouldForgetATombstoneTooSoon(t *testing.T) {
	for _, c := range []struct {
		name            string
		replay, tomb    time.Duration
		wantRefused     bool
		wantRetryExpiry bool
	}{
		{"zero tombstone window", time.Hour, 0, true, false},
		{"negative tombstone window", time.Hour, -time.Hour, true, false},
		{"zero replay window", 0, time.Hour, true, false},
		{"negative replay window", -time.Second, time.Hour, true, false},
		{"tombstone window shorter than the replay window", time.Hour, time.Minute, true, false},
		// The sweep is told 1 h, but the call settled with the default 24 h:
		// the window the operation recorded is the one that counts.
		{"tombstone window equal to a replay window shorter than the recorded one", time.Hour, time.Hour, true, false},
		{"tombstone window equal to the recorded replay window", reconcile.DefaultReplayWindow, reconcile.DefaultReplayWindow, false, true},
		{"the defaults", reconcile.DefaultReplayWindow, reconcile.DefaultTombstoneWindow, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			l := newLedger(t, withClock(clk))
			req := task("acme", "op-once", "send the invoice")
			if res := l.call(req, reconcile.CallOptions{}); res.Outcome != model.OutcomeCreated {
				t.Fatalf("first call %+v", res)
			}
			clk.Advance(reconcile.DefaultReplayWindow + time.Millisecond) // past the recorded expiry
			l.svc.ReplayWindow, l.svc.TombstoneWindow = c.replay, c.tomb
			before := l.snapshot()
			rep, err := l.svc.Sweep(t.Context())
			if c.wantRefused {
				if !model.IsCode(err, model.CodeInvalid) {
					t.Fatalf("sweep = %+v, %v; want refused as invalid", rep, err)
				}
				if l.snapshot() != before {
					t.Fatal("a refused sweep changed the ledger")
				}
			} else if err != nil || rep.Compacted != 1 || rep.Forgotten != 0 {
				t.Fatalf("sweep = %+v, %v; want one receipt compacted and no tombstone forgotten", rep, err)
			}
			res := l.call(req, reconcile.CallOptions{})
			if res.Class != model.ClassExpired {
				t.Errorf("retry after the sweep = %+v; want expired", res)
			}
			if n := l.effects(tool); n != 1 {
				t.Errorf("%d effects from one key; want 1", n)
			}
		})
	}
}
