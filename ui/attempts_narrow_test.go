package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// narrowAttempts is an attempt history with a long trace id, a long worker
// id, a lookup that cannot tell (a long reason) and one that found the
// effect.
func narrowAttempts() []model.Attempt {
	at := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	return []model.Attempt{
		{Seq: 1, Outcome: model.OutcomeLeaseExpired, StartedAt: at, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", WorkerID: "worker-eu-west-1-7f3a",
			Duration: 3 * time.Second, Error: "lease expired with no result"},
		{Seq: 2, Outcome: model.OutcomeLookup, Finding: model.FindingHasIt, StartedAt: at.Add(time.Minute), WorkerID: "triage by alice", ProviderRef: "sbx_12"},
		{Seq: 3, Outcome: model.OutcomeLookup, Finding: model.FindingCannotTell, StartedAt: at.Add(2 * time.Minute), WorkerID: "ops check by bob",
			Detail: "cannot tell: the sandbox provider's file no longer holds delivery sbx_12: it went back in time"},
		{Seq: 4, Outcome: model.OutcomeTimedOut, StartedAt: at.Add(3 * time.Minute), TraceID: "t-1", WorkerID: "w1", Duration: 30 * time.Second},
	}
}

// The attempt table fits every width from 30 to 140 columns: no line runs
// past the screen's edge (where the viewport would cut a column in the
// middle of a word, without an "…"); a column that gives way names its
// values under the row, in full.
func TestAttemptsTableFitsEveryWidth(t *testing.T) {
	e := open(t, config(newLedger(t)), 80, 24).m.env()
	atts := narrowAttempts()
	for w := 30; w <= 140; w++ {
		var b strings.Builder
		writeAttempts(&b, e, atts, w)
		out := ansi.Strip(b.String())
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if ansi.StringWidth(l) > w-1 {
				t.Fatalf("at %d columns a line of the attempts is %d wide:\n%s\n%s", w, ansi.StringWidth(l), l, out)
			}
		}
		// Written out under a row, an id longer than the line goes on
		// over the next: every character of it is there, in order.
		flat := strings.Join(strings.Fields(out), "")
		for _, id := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "worker-eu-west-1-7f3a", "ops check by bob"} {
			if !strings.Contains(flat, strings.ReplaceAll(id, " ", "")) {
				t.Fatalf("at %d columns %q is nowhere in full:\n%s", w, id, out)
			}
		}
		if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); head[0] != "#" || head[1] != "TIME" || head[2] != "OUTCOME" && w > 45 {
			t.Fatalf("at %d columns the head is %q", w, head)
		}
	}
}

// The detail's attempts at 60×20: the trace column gives way (the trace
// under its row), the worker column stays whole.
func TestGoldenDetailAttempts60x20(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "swept-1", "cfo@acme.example")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	op, err := l.st.Get(context.Background(), "acme", "swept-1")
	if err != nil {
		t.Fatal(err)
	}
	testledger.Lookups{Worker: "triage by alice", Ref: "sbx_12", Detail: func(f model.FindingKind) string { return string(f) },
		At: func(int) time.Time { l.clock.Advance(time.Minute); return l.clock.Now().UTC() }}.
		Record(t, l.st, op, model.FindingHasIt, model.FindingCannotTell)
	h := open(t, config(l), 60, 20)
	h.pin = pinAttempts
	selectOp(t, h, "acme/swept-1")
	h.keys("enter", "G")
	for i := 0; !strings.Contains(h.view(), "Attempts (4: 2 calls, 2 provider lookups)"); i++ {
		if i > 20 {
			t.Fatalf("no attempts:\n%s", h.view())
		}
		h.keys("up")
	}
	v := h.view()
	if !strings.Contains(v, "WORKER ") || !strings.Contains(v, "DURATION") {
		t.Fatalf("the attempts lost their WORKER or DURATION column:\n%s", v)
	}
	golden(t, "detail_attempts_60x20", v)
}
