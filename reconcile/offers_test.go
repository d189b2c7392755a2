package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// What a screen or a command offers (reconcile.OfferOf) is what the write
// then does, for each way an operation is left in_progress and for an
// unknown one, within the grace after its latest request and past it:
// not allowed → refused; allowed within the grace → refused unless
// WithinGrace, naming the same end; allowed with nothing more → written.
func TestAnOfferSaysWhatTheWriteDoes(t *testing.T) {
	kinds := append(unheldKinds[:len(unheldKinds):len(unheldKinds)], struct {
		name string
		live bool
		make func(t *testing.T, l *ledger, clk *clock, key string)
	}{"unknown (lost reply)", false, func(t *testing.T, l *ledger, clk *clock, key string) {
		l.call(notify("acme", key, "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
		if op := l.op("acme", key); op.State != model.StateUnknown {
			t.Fatalf("set-up: %s; want unknown", op.State)
		}
	}})
	for _, kind := range kinds {
		for _, later := range []time.Duration{0, time.Hour} {
			for _, action := range model.AllActions {
				t.Run(kind.name+"/"+later.String()+"/"+string(action), func(t *testing.T) {
					clk := newClock()
					l := newLedger(t, withClock(clk))
					kind.make(t, l, clk, "k")
					if kind.live && later > 0 {
						t.Skip("the lease ends: another kind")
					}
					clk.Advance(later)
					det := l.detail("acme", "k")
					op := det.Operation
					o := l.svc.OfferOf(action, op, det.Attempts, l.st.Now())
					if o.Allowed == kind.live {
						t.Fatalf("Allowed = %v; want %v", o.Allowed, !kind.live)
					}
					if kind.live && (o.HeldUntil != op.LeaseUntil || !strings.Contains(o.Why(op), op.LeaseUntil.UTC().Format(time.RFC3339))) {
						t.Errorf("held: HeldUntil %v, %q; want the lease's end %v named", o.HeldUntil, o.Why(op), op.LeaseUntil)
					}
					if o.Grace != nil && !strings.Contains(o.Why(op), o.Grace.Until.UTC().Format(time.RFC3339)) {
						t.Errorf("within the grace, Why %q does not name its end", o.Why(op))
					}
					if later == 0 && !kind.live && action != model.ActionMarkApplied && o.Grace == nil {
						t.Errorf("right after its request: no grace (%+v)", o)
					}
					if later > 0 && o.Grace != nil {
						t.Errorf("an hour later: within the grace until %v", o.Grace.Until)
					}
					d := decision(&op)
					d.WithinGrace = false
					d.NewKey = "k-new"
					err := l.decide(action, d)
					switch {
					case !o.Allowed:
						if !model.IsCode(err, model.CodeIllegal) {
							t.Fatalf("offered as not allowed, the write: %v; want refused", err)
						}
					case o.Grace != nil:
						var gr *reconcile.GraceRefusal
						if !errors.As(err, &gr) || !gr.Until.Equal(o.Grace.Until) {
							t.Fatalf("offered within the grace until %v, the write: %v; want refused within the grace, the same end", o.Grace.Until, err)
						}
						d.WithinGrace = true
						if err := l.decide(action, d); err != nil {
							t.Fatalf("with the override: %v", err)
						}
					default:
						if err != nil {
							t.Fatalf("offered with nothing more (%q), the write: %v", o.Why(op), err)
						}
					}
				})
			}
		}
	}
}
