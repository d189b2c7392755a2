package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/model"
)

// The console's lab runs in the ledger it has open, which holds other
// tenants' work: the fixture's acme/notify-inflight has a claim whose lease
// ended (the fixture's clock is months behind). A scenario that sweeps used
// to make it unknown with a lease_expired attempt by "sweep"; it touches
// only its own operations now, as the confirmation says ("under tenant
// lab"), and its lookup is a recorded finding.
func TestFlowLabRunLeavesOtherTenantsInFlightWorkAlone(t *testing.T) {
	l := fixture(t)
	cfg := liveConfig(l)
	cfg.Lab = &lab.Runner{Exe: retrysafeBinary(t), WorkerArgs: []string{"__worker"}, ProviderDB: l.sb.Path(), Open: labOpen}
	cfg.LabScenarios, cfg.LabTenant = lab.Scenarios(), lab.LabTenant
	tm := teatest.NewTestModel(t, New(cfg), teatest.WithInitialTermSize(140, 44))
	waitFor(t, tm, "[unknown 2]")
	press(tm, "L")
	waitFor(t, tm, "Lab", "stops before commit, retried with the same key")
	for _, sc := range lab.Scenarios() {
		if sc.ID == "external-unknown-mark-applied" {
			break
		}
		press(tm, "j")
	}
	waitFor(t, tm, "external-unknown-mark-applied", "enter runs it")
	press(tm, "enter")
	waitFor(t, tm, "Run the lab in this ledger?", "under tenant \"lab\"")
	time.Sleep(3 * reviewArmDelay) // the question is read before y
	press(tm, "y")
	waitFor(t, tm, "✓ holds", "effects     1 → 1", "lookup found")
	m := finish(t, tm)
	if m.lab.row == nil || !m.lab.row.OK {
		t.Fatalf("lab row: %+v", m.lab.row)
	}
	d := l.get(t, "acme", "notify-inflight")
	if d.Operation.State != model.StateInProgress || len(d.Attempts) != 1 {
		t.Errorf("acme/notify-inflight is %s with %d attempts: the lab swept another tenant's claim", d.Operation.State, len(d.Attempts))
	}
	op := l.get(t, lab.LabTenant, m.lab.row.Keys[0]).Operation
	if op.Finding == nil || op.Finding.Kind != model.FindingHasIt || !strings.HasPrefix(op.Finding.By, "lab ") {
		t.Errorf("the lab's lookup is not the operation's recorded finding: %+v", op.Finding)
	}
}

// A run whose decision was refused reads as one: the verdict, the summary
// part and the ✗ line agree, in words.
func TestLabScreenShowsARefusedDecisionAsFailed(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	sc := lab.Scenarios()
	lm := newLab(nil, sc, lab.LabTenant)
	for i, s := range sc {
		if s.ID == "external-unknown-mark-applied" {
			lm.cursor, lm.scenario = i, s
		}
	}
	lm.row = &lab.Row{Scenario: lm.scenario.ID, Before: 1, After: 2, Expected: lm.scenario.Expected,
		NextResult: "✗ retry not refused: created sbx_2, exit 0; lookup found sbx_1; ✗ mark applied refused (stale: op-a is applied now); ✗ retry replayed sbx_2, exit 0",
		Failures:   []string{"mark applied refused: lab/x/op-a changed since you looked"}}
	h.m.lab = lm
	h.m.goTo(screenLab)
	c, _ := h.m.lab.SetSize(h.m.env(), 120, h.m.bodyHeight())
	h.m.lab = c.(labModel)
	v := h.view()
	for _, want := range []string{"✗ does not hold", "✗ mark applied refused (stale", "✗ mark applied refused: lab/x/op-a"} {
		if !strings.Contains(v, want) {
			t.Errorf("the screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "&{") {
		t.Errorf("Go formatting on screen:\n%s", v)
	}
}
