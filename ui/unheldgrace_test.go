package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// helpLine is the last line of the screen: the key help.
func helpLine(h *harness) string {
	v := strings.TrimRight(h.view(), "\n")
	return v[strings.LastIndex(v, "\n")+1:]
}

// withinGraceKinds are operations a person may decide on while the
// provider may still apply their latest request: an in_progress one
// nobody holds (its claim released, its lease ended) and an unknown one.
var withinGraceKinds = []struct {
	name string
	make func(t *testing.T, l *ledger)
}{
	{"released", func(t *testing.T, l *ledger) { l.released(t, "acme", "k", "ops@acme.example") }},
	{"lease ended", func(t *testing.T, l *ledger) {
		l.inFlight(t, "acme", "k", "ops@acme.example") // a one-hour lease
		l.clock.Advance(time.Hour)
	}},
	{"unknown", func(t *testing.T, l *ledger) {
		l.svc.DispatchTimeout = 20 * time.Millisecond
		if res := l.notify(t, "acme", "k", "ops@acme.example", provider.Faults{Delay: 2 * time.Second}); res.Class != model.ClassUnknown {
			t.Fatalf("set-up: %s; want unknown", res.Class)
		}
	}},
}

// Within the grace after its latest request, the list's help line and the
// detail (its help line and what it says can be done) say up front that n
// (and s) need the typed override until the grace ends — the end the
// write and the review name (reconcile.GraceCheck) — and a plainly; past
// the grace, they offer n plainly again. At 120, 80 and 60 columns (n
// first: the line drops a and enter before it).
func TestTheKeysSayTheOverrideWithinTheGrace(t *testing.T) {
	for _, kind := range withinGraceKinds {
		for _, w := range []int{120, 80, 60} {
			t.Run(fmt.Sprintf("%s/%d", kind.name, w), func(t *testing.T) {
				l := newLedger(t)
				l.task(t, "acme", "other", "a local task")
				kind.make(t, l)
				g, err := l.svc.GraceOf(context.Background(), "acme", "k")
				if err != nil || !g.Within(l.clock.Now()) {
					t.Fatalf("set-up: grace %+v %v; want within it now (%v)", g, err, l.clock.Now())
				}
				until := g.Until.In(time.UTC).Format("15:04:05")
				h := open(t, config(l), w, 30)
				selectOp(t, h, "acme/k")
				help := helpLine(h)
				for _, want := range []string{"a applied", "n not applied: override until " + until} {
					if w < 80 && want == "a applied" {
						continue // the line gives a up to n
					}
					if !strings.Contains(help, want) {
						t.Errorf("list help line lacks %q: %q", want, help)
					}
				}
				h.keys("enter")
				containsText(t, h, "n and s need the typed override until "+clockTime(g.Until, h.m.env()))
				if w >= 80 {
					if help := helpLine(h); !strings.Contains(help, "override until "+until) {
						t.Errorf("detail help line does not name the override: %q", help)
					}
				}
				h.keys("esc")
				l.clock.Advance(g.Until.Sub(l.clock.Now()) + time.Second)
				if help := helpLine(h); !strings.Contains(help, "n not applied") || strings.Contains(help, "override") {
					t.Errorf("past the grace, the list help line: %q; want n offered plainly", help)
				}
				h.keys("enter")
				h.lacks("override until")
			})
		}
	}
}

// The detail's lease row says what happened to the claim, for each state
// of its lease: held (live until T), ended (at T, nobody holds it), or
// released (at T, to be sent again) — never "released until T".
func TestTheLeaseRowSaysWhatHappenedToTheClaim(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, l *ledger)
		want func(l *ledger, op model.Operation, e env) string
	}{
		{"live", func(t *testing.T, l *ledger) { l.inFlight(t, "acme", "k", "ops@acme.example") },
			func(l *ledger, op model.Operation, e env) string {
				return "held by worker-2, live until " + clockTime(op.LeaseUntil, e)
			}},
		{"ended", func(t *testing.T, l *ledger) {
			l.inFlight(t, "acme", "k", "ops@acme.example")
			l.clock.Advance(2 * time.Hour)
		}, func(l *ledger, op model.Operation, e env) string {
			return "worker-2's lease ended at " + clockTime(op.LeaseUntil, e) + " (1h ago): nobody holds the claim"
		}},
		{"released", func(t *testing.T, l *ledger) { l.released(t, "acme", "k", "ops@acme.example") },
			func(l *ledger, op model.Operation, e env) string {
				return "released at " + clockTime(op.LeaseUntil, e) + " (1s ago) to be sent again: nobody holds the claim"
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			c.make(t, l)
			h := open(t, config(l), 140, 40)
			selectOp(t, h, "acme/k")
			h.keys("enter")
			row := ""
			for _, line := range strings.Split(h.view(), "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == "lease" {
					row = strings.Join(f[1:], " ")
				}
			}
			want := c.want(l, l.get(t, "acme", "k").Operation, h.m.env())
			if row != want {
				t.Errorf("lease row %q; want %q", row, want)
			}
			if c.name == "released" {
				h.lacks("its lease ended") // keys at claim: "its claim was released"
			}
		})
	}
}

// The list and the detail of a released claim within its grace, at
// 80×24 and 80×34: n first on the list's help line, with when the override is no
// longer needed; the detail's lease row (released at …) and its words.
func TestGoldenKeysWithinTheGrace(t *testing.T) {
	l := newLedger(t)
	l.task(t, "acme", "other", "a local task")
	l.released(t, "acme", "k", "ops@acme.example")
	h := open(t, config(l), 80, 24)
	h.pin = pinAttempts
	selectOp(t, h, "acme/k")
	golden(t, "keys_within_grace_list_80x24", h.view())
	h = open(t, config(l), 80, 34)
	h.pin = pinAttempts
	selectOp(t, h, "acme/k")
	h.keys("enter")
	golden(t, "keys_within_grace_detail_80x34", h.view())
}

// Against the finding that binds it the write takes n (and s) only with
// the typed override for good, not until the grace ends: once a check
// found the effect, the keys say so instead of a time the override is no
// longer needed after (it still would be).
func TestTheKeysSayTheOverrideAgainstTheFinding(t *testing.T) {
	l := newLedger(t)
	l.released(t, "acme", "k", "ops@acme.example") // the provider has it
	h := open(t, config(l), 120, 30)
	selectOp(t, h, "acme/k")
	h.keys("c") // opens the detail and asks the provider
	containsText(t, h, "sbx_")
	if help := helpLine(h); !strings.Contains(help, "n not applied: override, against the finding") || strings.Contains(help, "until") {
		t.Errorf("detail help line: %q; want n's override against the finding, no end", help)
	}
	h.lacks("need the typed override until")
	h.keys("esc", "r") // the list read again: its row has the finding
	containsText(t, h, "has it")
	if help := helpLine(h); !strings.Contains(help, "n not applied: override, against the finding") || strings.Contains(help, "until") {
		t.Errorf("list help line: %q; want n's override against the finding, no end", help)
	}
}
