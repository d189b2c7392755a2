package ui

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/retrysafe/retrysafe/internal/labledger"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// teatest flows: the real Bubble Tea program (timers, the refresh
// heartbeat, the renderer) over a real ledger, driven by key presses and
// read from its output.

func liveConfig(l *ledger) Config {
	cfg := config(l)
	cfg.NoTimers = false
	cfg.Refresh = 100 * time.Millisecond
	return cfg
}

func waitFor(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func press(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

func finish(t *testing.T, tm *teatest.TestModel) Model {
	t.Helper()
	press(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm.FinalModel(t).(Model)
	m.Close()
	return m
}

// formMarkingNotify1Applied searches acme/notify-1, opens it, asks its
// provider (c) and fills the "mark applied" form up to its enter.
func formMarkingNotify1Applied(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	waitFor(t, tm, "[unknown 2]", "notify-1")
	press(tm, "8", "/")
	tm.Type("notify-1")
	press(tm, "enter")
	waitFor(t, tm, `search "notify-1"`, "1–1")
	press(tm, "enter")
	waitFor(t, tm, "acme / notify-1", "Attempts (1)")
	press(tm, "c")
	waitFor(t, tm, "sandbox delivered sbx_")
	press(tm, "a")
	waitFor(t, tm, "Mark applied")
	press(tm, "tab")
	tm.Type("the sandbox holds the delivery")
}

func TestFlowOpenFilterDetailResolveAndSeeTheCountMove(t *testing.T) {
	l := fixture(t)
	tm := teatest.NewTestModel(t, New(liveConfig(l)), teatest.WithInitialTermSize(110, 30))
	formMarkingNotify1Applied(t, tm)
	press(tm, "enter")
	waitFor(t, tm, "Write this decision", "operator   alice")
	time.Sleep(3 * reviewArmDelay) // a person reads the review before y
	press(tm, "y")
	waitFor(t, tm, "unknown 1 ", "recorded for alice")

	finish(t, tm)
	d := l.get(t, "acme", "notify-1")
	if d.Operation.State != model.StateApplied || len(d.Decisions) != 1 || !strings.HasPrefix(d.Decisions[0].Evidence, "sbx_") {
		t.Fatalf("ledger: %+v %+v", d.Operation, d.Decisions)
	}
}

func TestFlowAnotherWriterShowsUpWithinARefresh(t *testing.T) {
	l := fixture(t)
	tm := teatest.NewTestModel(t, New(liveConfig(l)), teatest.WithInitialTermSize(110, 30))
	waitFor(t, tm, "[unknown 2]")
	other := l.second(t)
	if res, _ := other.Call(context.Background(), model.Request{Tenant: "umbrella", Key: "late-night-page", Tool: "send_notification",
		PayloadVersion: 1, Args: []byte(`{"to":"oncall@umbrella.example","body":"t-virus"}`)},
		reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); res.Class != model.ClassUnknown {
		t.Fatalf("want unknown, got %+v", res)
	}
	waitFor(t, tm, "[unknown 3]", "late-night-page", "umbrella")
	finish(t, tm)
}

// The Lab screen runs a scenario with real worker processes — this
// package's binary, built once for the test run.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func retrysafeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retrysafe-ui-test-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "retrysafe")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/retrysafe/retrysafe").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("building retrysafe for the lab's workers: %v\n%s", binErr, binPath)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" && binErr == nil {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func TestFlowLabScreenRunsAScenarioAndShowsItsRow(t *testing.T) {
	l := fixture(t)
	cfg := liveConfig(l)
	cfg.Lab = &lab.Runner{Exe: retrysafeBinary(t), WorkerArgs: []string{"__worker"}, ProviderDB: l.sb.Path(), Open: labOpen}
	cfg.LabScenarios, cfg.LabTenant = lab.Scenarios(), lab.LabTenant
	tm := teatest.NewTestModel(t, New(cfg), teatest.WithInitialTermSize(120, 36))
	waitFor(t, tm, "[unknown 2]")
	press(tm, "L")
	waitFor(t, tm, "Lab", "stops before commit, retried with the same key")
	press(tm, "enter")
	// The fixture holds other tenants: the lab asks before writing here.
	waitFor(t, tm, "Run the lab in this ledger?", "not a lab ledger", "3 other tenants")
	time.Sleep(3 * reviewArmDelay) // the question is read before y
	press(tm, "y")
	waitFor(t, tm, "before-commit-same-key", "✓ holds", "effects     0 → 1", "expected 0 → 1")
	// The keys it created can be opened from the row.
	press(tm, "1")
	waitFor(t, tm, "lab / ", "APPLIED")
	press(tm, "esc")
	waitFor(t, tm, "effects     0 → 1")
	m := finish(t, tm)
	if m.lab.row == nil || !m.lab.row.OK || m.lab.row.Before != 0 || m.lab.row.After != 1 || len(m.lab.row.Keys) == 0 {
		t.Fatalf("lab row: %+v", m.lab.row)
	}
	d := l.get(t, lab.LabTenant, m.lab.row.Keys[0])
	if d.Operation.State != model.StateApplied {
		t.Fatalf("the scenario's operation is %s", d.Operation.State)
	}
}

// Step mode for a live demo: space starts the lost-response scenario held
// before its first step; each space runs the step on screen, narrated; the
// ledger shows that nothing ran ahead; enter runs the rest.
func TestFlowLabStepModeNarratesALostResponse(t *testing.T) {
	l := fixture(t)
	cfg := liveConfig(l)
	cfg.Lab = &lab.Runner{Exe: retrysafeBinary(t), WorkerArgs: []string{"__worker"}, ProviderDB: l.sb.Path(), Open: labOpen}
	cfg.LabScenarios, cfg.LabTenant = lab.Scenarios(), lab.LabTenant
	tm := teatest.NewTestModel(t, New(cfg), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "[unknown 2]")
	press(tm, "L")
	waitFor(t, tm, "Lab", "stops before commit, retried with the same key")
	for _, sc := range lab.Scenarios() {
		if sc.ID == "lost-response" {
			break
		}
		press(tm, "j")
	}
	waitFor(t, tm, "lost-response", "enter runs it")
	press(tm, " ")
	waitFor(t, tm, "Run the lab in this ledger?", "not a lab ledger")
	time.Sleep(3 * reviewArmDelay) // the question is read before y
	press(tm, "y")
	waitFor(t, tm, "▶ next: first call: the task commits, then the reply is held back", "The agent sees only a timeout.",
		"space runs this step · enter runs the rest", "step mode: space runs the next step")
	// Held before the first step: the lab has written nothing yet.
	labOps := func() []model.Operation {
		t.Helper()
		ops, err := l.st.List(context.Background(), store.ListQuery{Tenant: lab.LabTenant})
		if err != nil {
			t.Fatal(err)
		}
		return ops
	}
	if ops := labOps(); len(ops) != 0 {
		t.Fatalf("the run went ahead of its first step: %d lab operations", len(ops))
	}
	press(tm, " ")
	waitFor(t, tm, "✓ first call: the task commits", "▶ next: after the timeout: 1 task; the ledger holds the receipt")
	ops := labOps()
	if len(ops) != 1 || ops[0].State != model.StateApplied || ops[0].AttemptCount != 1 {
		t.Fatalf("after the first step the ledger holds %+v; want one applied operation, one attempt", ops)
	}
	press(tm, " ")
	waitFor(t, tm, "▶ next: retry through a new connection: same key, new trace id", "replays the stored receipt")
	if ops := labOps(); len(ops) != 1 || ops[0].AttemptCount != 1 {
		t.Fatalf("the retry ran before its step: %+v", ops)
	}
	press(tm, "enter") // the rest
	waitFor(t, tm, "✓ holds", "effects     1 → 1")
	m := finish(t, tm)
	if m.lab.row == nil || !m.lab.row.OK || m.lab.row.Scenario != "lost-response" {
		t.Fatalf("lab row: %+v", m.lab.row)
	}
	if ops := labOps(); len(ops) != 1 || ops[0].AttemptCount != 2 {
		t.Fatalf("after the run: %+v; want one operation, two attempts", ops)
	}
}

// labOpen is the lab's opener as the command line wires it.
var labOpen lab.OpenFunc = labledger.Open

// Keys typed ahead in one burst ("enter" that opens the review, then "y")
// arrive as separate messages faster than a frame: the y answered a review
// nobody saw and wrote the decision. It is not taken (nothing written, the
// banner says so); a y pressed once the review is on screen writes.
func TestFlowAYTypedAheadOfTheReviewIsNotTaken(t *testing.T) {
	l := fixture(t)
	tm := teatest.NewTestModel(t, New(liveConfig(l)), teatest.WithInitialTermSize(110, 30))
	formMarkingNotify1Applied(t, tm)
	press(tm, "enter", "y")
	waitFor(t, tm, "Write this decision", "was not taken: nothing was written")
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatalf("a y typed ahead of the review wrote: %s %+v", d.Operation.State, d.Decisions)
	}
	time.Sleep(3 * reviewArmDelay)
	press(tm, "y")
	waitFor(t, tm, "recorded for alice")
	finish(t, tm)
	if d := l.get(t, "acme", "notify-1"); d.Operation.State != model.StateApplied || len(d.Decisions) != 1 {
		t.Fatalf("y on the review: %s %+v; want applied", d.Operation.State, d.Decisions)
	}
}

// The sweep's question takes no y typed ahead of it either ("S" then "y"
// in one burst): a sweep turns claims unknown or sends them again.
func TestFlowAYTypedAheadOfTheSweepQuestionIsNotTaken(t *testing.T) {
	l := fixture(t)
	tm := teatest.NewTestModel(t, New(liveConfig(l)), teatest.WithInitialTermSize(110, 30))
	waitFor(t, tm, "[unknown 2]")
	press(tm, "S", "y")
	waitFor(t, tm, "Sweep expired leases?", "was not taken: nothing was written")
	time.Sleep(3 * reviewArmDelay)
	press(tm, "y")
	waitFor(t, tm, "Swept: ")
	finish(t, tm)
}
