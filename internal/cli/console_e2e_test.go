package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/model"
)

// The console end to end: the real binary, in a real terminal (tmux), on a
// real ledger filled by `retrysafe call`; an operator settles an unknown
// operation with keys, and `retrysafe ops show --json` — another process —
// confirms what was written.

type tmuxConsole struct {
	t      *testing.T
	socket string
	name   string
}

func (c *tmuxConsole) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", c.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// screen is the pane's text (no escape codes unless escapes is set).
func (c *tmuxConsole) screen(escapes bool) string {
	args := []string{"capture-pane", "-p", "-t", c.name}
	if escapes {
		args = append(args, "-e")
	}
	out, err := c.tmux(args...)
	if err != nil {
		c.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return out
}

func (c *tmuxConsole) waitFor(want ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := c.screen(false)
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the screen never showed %q:\n%s", missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys presses keys one tmux send-keys at a time, with a pause, so a key
// after Escape is never read as an Alt combination.
func (c *tmuxConsole) keys(keys ...string) {
	for _, k := range keys {
		if out, err := c.tmux("send-keys", "-t", c.name, k); err != nil {
			c.t.Fatalf("send-keys %s: %v: %s", k, err, out)
		}
		time.Sleep(60 * time.Millisecond)
	}
}

// confirm presses y on a decision's review once it has been on screen as
// long as a person takes to read it: the console does not take a y typed
// ahead of its review (ui's reviewArmDelay, 150 ms).
func (c *tmuxConsole) confirm() {
	time.Sleep(500 * time.Millisecond) // well past it, on a loaded machine too
	c.keys("y")
}

func (c *tmuxConsole) text(s string) {
	if out, err := c.tmux("send-keys", "-t", c.name, "-l", s); err != nil {
		c.t.Fatalf("send-keys -l: %v: %s", err, out)
	}
	time.Sleep(60 * time.Millisecond)
}

func (c *tmuxConsole) waitGone() {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := c.tmux("has-session", "-t", c.name); err != nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the console did not quit:\n%s", c.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startConsole runs the binary in a detached tmux session of its own
// server (its own socket), so it never touches anyone's tmux.
func startConsole(t *testing.T, dir string, env []string, w, h int, argv ...string) *tmuxConsole {
	t.Helper()
	c := &tmuxConsole{t: t, socket: filepath.Join(dir, "tmux.sock"), name: "console"}
	cmd := strings.Join(append(env, argv...), " ")
	if out, err := c.tmux("new-session", "-d", "-s", c.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { c.tmux("kill-server") })
	return c
}

func buildRetrysafe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "retrysafe")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/retrysafe/retrysafe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// rs runs the binary and returns its stdout and exit code.
func rs(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return stdout.String(), code
}

// requireTmux skips where tmux is missing on a developer's machine, but
// fails in CI, whose script installs it: the end-to-end run must not
// quietly vanish there.
func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed, and CI must run the console end to end (.ci/run installs it)")
		}
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
}

func TestConsoleEndToEndUnderTmux(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace (reconcile/grace_test.go covers within it)
	requireTmux(t)
	bin := buildRetrysafe(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ops.db")
	call := func(tenant, key, tool, args string, extra ...string) int {
		_, code := rs(t, bin, append([]string{"call", "--db", db, "--tenant", tenant, "--key", key, "--tool", tool, "--args", args}, extra...)...)
		return code
	}
	for i := 1; i <= 3; i++ {
		if code := call("acme", fmt.Sprintf("task-%d", i), "create_support_task", fmt.Sprintf(`{"subject":"Printer %d on fire"}`, i)); code != 0 {
			t.Fatalf("call exit %d", code)
		}
	}
	if code := call("acme", "page-oncall", "send_notification", `{"to":"oncall@acme.example","body":"disk full"}`, "--fault", "lose-reply"); code != 5 {
		t.Fatalf("lose-reply call exit %d, want 5 (unknown)", code)
	}
	// The caller gives up before the slow provider takes it: unknown, and
	// the provider has nothing.
	if code := call("acme", "page-manager", "send_notification", `{"to":"oncall@acme.example","body":"disk full"}`, "--fault", "delay=1s", "--timeout", "300ms"); code != 5 {
		t.Fatalf("timed-out call exit %d, want 5 (unknown)", code)
	}

	c := startConsole(t, dir, nil, 100, 30, bin, "--db", db, "--operator", "e2e-operator", "--log", filepath.Join(dir, "console.log"))
	c.waitFor("[unknown 2]", "2 UNKNOWN", "page-manager", "page-oncall")

	// The older unknown operation: down, open, ask the provider, decide.
	c.keys("j")
	c.waitFor("›? ")
	c.keys("Enter")
	c.waitFor("acme / page-oncall", "UNKNOWN · v2")
	c.keys("c")
	c.waitFor("sandbox delivered sbx_")
	c.keys("a")
	c.waitFor("Mark applied — acme / page-oncall", "› sbx_")
	c.keys("Tab")
	c.text("the sandbox lookup holds the delivery")
	c.keys("Enter")
	c.waitFor("Write this decision to the ledger?", "unknown (version 2)  →  applied", "operator   e2e-operator")
	c.confirm()
	c.waitFor("acme/page-oncall: unknown → applied (version 3), recorded for e2e-operator.", "APPLIED · v3")
	c.keys("Escape")
	time.Sleep(100 * time.Millisecond)
	c.keys("Escape")
	c.waitFor("[unknown 1]", "1 UNKNOWN", "page-manager")

	// Another process writes while the console is open.
	if code := call("globex", "late-page", "send_notification", `{"to":"noc@globex.example","body":"pager"}`, "--fault", "lose-reply"); code != 5 {
		t.Fatalf("lose-reply call exit %d", code)
	}
	c.waitFor("[unknown 2]", "late-page", "globex")

	// A bulk decision on both: mark them, one form; each row's provider
	// is asked first, and the review refuses the one it has (late-page's
	// reply was lost after the delivery); y writes the other.
	c.keys("g", "Space", "Space")
	c.waitFor("2 marked")
	c.keys("n")
	c.waitFor("Mark not applied — 2 marked operations")
	c.text("provider incident INC-7 dropped the whole batch")
	c.keys("Tab")
	c.text("INC-7")
	c.keys("Enter")
	c.waitFor("Write 1 decision to the ledger?", "acme/page-manager", "globex/late-page", "has nothing", "refused: the provider has it (sbx_")
	c.keys("Enter") // a second enter is not the review's key
	time.Sleep(200 * time.Millisecond)
	c.waitFor("Write 1 decision to the ledger?")
	c.confirm()
	c.waitFor("1 written · 1 refused as illegal", "illegal", "refused: the provider has it (sbx_", "mark not applied: 1 of 2 operations written")
	c.keys("Escape")
	c.waitFor("[unknown 1]")

	consoleNavigation(c, db)

	c.keys("q")
	c.waitGone()
	for _, k := range [][2]string{{"acme", "page-manager"}, {"globex", "late-page"}} {
		out, _ := rs(t, bin, "ops", "show", "--db", db, "--tenant", k[0], "--key", k[1], "--json")
		var d model.Detail
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		f := d.Operation.Finding
		if k[1] == "late-page" {
			if d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 || f == nil || f.Kind != model.FindingHasIt || f.By != "e2e-operator" {
				t.Fatalf("%s/%s, which the provider has, after the bulk not applied: %+v, finding %+v", k[0], k[1], d.Operation, f)
			}
			continue
		}
		if d.Operation.State != model.StateNotApplied || len(d.Decisions) != 1 || d.Decisions[0].Evidence != "INC-7" ||
			d.Decisions[0].FromVersion != 2 || f == nil || f.Kind != model.FindingHasNothing {
			t.Fatalf("%s/%s after the bulk decision: %+v, finding %+v", k[0], k[1], d, f)
		}
	}

	out, code := rs(t, bin, "ops", "show", "--db", db, "--tenant", "acme", "--key", "page-oncall", "--json")
	if code != 0 {
		t.Fatalf("ops show exit %d", code)
	}
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("ops show --json: %v\n%s", err, out)
	}
	if d.Operation.State != model.StateApplied || !strings.HasPrefix(d.Operation.ProviderRef, "sbx_") {
		t.Fatalf("operation after the console: %+v", d.Operation)
	}
	if len(d.Decisions) != 1 {
		t.Fatalf("want one decision row, got %+v", d.Decisions)
	}
	dc := d.Decisions[0]
	if dc.Operator != "e2e-operator" || dc.Action != model.ActionMarkApplied || dc.FromState != model.StateUnknown ||
		dc.ToState != model.StateApplied || dc.FromVersion != 2 || !strings.HasPrefix(dc.Evidence, "sbx_") ||
		dc.Reason != "the sandbox lookup holds the delivery" {
		t.Fatalf("decision row: %+v", dc)
	}
	logText, err := os.ReadFile(filepath.Join(dir, "console.log"))
	if err != nil || !strings.Contains(string(logText), "decision mark_applied on acme/page-oncall by e2e-operator") {
		t.Fatalf("console log: %v\n%s", err, logText)
	}
}

func TestConsoleUnderTmuxHonoursNoColorAndReadOnly(t *testing.T) {
	requireTmux(t)
	bin := buildRetrysafe(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ops.db")
	if _, code := rs(t, bin, "call", "--db", db, "--tenant", "acme", "--key", "k1", "--tool", "send_notification",
		"--args", `{"to":"a@acme.example","body":"b"}`, "--fault", "lose-reply"); code != 5 {
		t.Fatalf("exit %d", code)
	}
	c := startConsole(t, dir, []string{"NO_COLOR=1"}, 80, 24, bin, "--db", db, "--read-only")
	c.waitFor("READ-ONLY", "[unknown 1]", "k1")
	if s := c.screen(true); strings.Contains(s, "\x1b[") {
		t.Fatalf("NO_COLOR screen carries escape codes:\n%q", s)
	}
	c.keys("a")
	c.waitFor("Read-only console: cannot mark applied acme/k1")
	c.keys("q")
	c.waitGone()
	out, _ := rs(t, bin, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k1", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatalf("read-only console changed the ledger: %v %+v", err, d)
	}
}

func TestConsoleRefusesALedgerItCannotOpenInOneLine(t *testing.T) {
	dir := t.TempDir()
	var stderr strings.Builder
	code := Run([]string{"--db", filepath.Join(dir, "missing.db")}, &strings.Builder{}, &stderr)
	if code != exitInvalid || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "no ledger at") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	notDB := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDB, []byte("hello, not a database, but long enough to have a header of a hundred bytes or so......................"), 0o644)
	stderr.Reset()
	code = Run([]string{"--db", notDB}, &strings.Builder{}, &stderr)
	if code != exitInvalid || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "not a SQLite database") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// Triage end to end: T asks the provider about every unknown in the
// background, the FINDING column fills in, R reviews the "has it" rows in
// one go (mark applied, the reference as evidence), and the audit log —
// the console's (D) and `ops decisions` — shows each decision with the
// finding's reference as its evidence, the lookup recorded before it.
//
// The console is this test binary run as the retrysafe binary (main.go is
// one call of cli.Run), in a real terminal: linking the binary takes
// longer than the whole run on a loaded machine, and the other tmux
// tests build it.
func TestConsoleTriageAndReviewByFindingUnderTmux(t *testing.T) {
	requireTmux(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ops.db")
	keys := [][2]string{{"acme", "page-oncall"}, {"acme", "page-manager"}, {"globex", "late-page"}}
	for _, k := range keys {
		if _, errText, code := cli(t, callArgs(db, k[0], k[1], "send_notification", `{"to":"oncall@example.com","body":"disk full"}`, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("lose-reply call exit %d, want 5 (unknown): %s", code, errText)
		}
	}
	c := startConsole(t, dir, reexec.Env(asCLI, nil), 130, 32, reexec.Executable(t), "--db", db, "--operator", "e2e-operator")
	c.waitFor("[unknown 3]", "FINDING", "not checked")
	c.keys("T")
	c.waitFor("Triage asked about 3 of 3 operations", "has it 3", "Nothing was decided")
	c.waitFor("has it · sbx_")
	c.keys("f")
	c.waitFor("finding: has it")
	c.keys("R")
	c.waitFor("Review by finding", "Mark applied — the provider has it (3)", "evidence sbx_")
	c.keys("Enter")
	c.waitFor("Write 3 decisions, each its own compare-and-set")
	c.confirm()
	c.waitFor("3 written")
	c.keys("Escape")
	c.waitFor("[unknown 0]", "Review by finding: 3 of 3 decisions written")
	c.keys("D")
	screen := c.waitFor("mark applied", "e2e-operator")
	audit, _, code := cli(t, "ops", "decisions", "--db", db, "--json")
	var log []model.AuditEntry
	if err := json.Unmarshal([]byte(audit), &log); err != nil || code != 0 || len(log) != 3 {
		t.Fatalf("ops decisions: exit %d %v\n%s", code, err, audit)
	}
	for _, k := range keys {
		out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", k[0], "--key", k[1], "--json")
		var d model.Detail
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		f := d.Operation.Finding
		if d.Operation.State != model.StateApplied || len(d.Decisions) != 1 || f == nil || d.Decisions[0].Evidence != f.Ref ||
			!strings.HasPrefix(f.Ref, "sbx_") || !strings.Contains(f.By, "e2e-operator") || d.Decisions[0].At.Before(f.At) {
			t.Fatalf("%s after the review: %+v, finding %+v, decisions %+v", k[1], d.Operation.State, f, d.Decisions)
		}
		if !strings.Contains(screen, f.Ref+" ·") {
			t.Errorf("the audit log does not show %s's evidence %s:\n%s", k[1], f.Ref, screen)
		}
		found := false
		for _, e := range log {
			if e.Tenant == k[0] && e.Key == k[1] {
				found = e.Action == model.ActionMarkApplied && e.Evidence == f.Ref && e.Operator == "e2e-operator"
			}
		}
		if !found {
			t.Errorf("ops decisions has no mark applied of %s/%s by e2e-operator with the evidence %s:\n%s", k[0], k[1], f.Ref, audit)
		}
	}
	c.keys("q")
	c.waitGone()
}

// consoleNavigation drives the k9s-style navigation of the real binary on
// the ledger TestConsoleEndToEndUnderTmux left (three applied tasks,
// acme/page-oncall applied, acme/page-manager not applied, globex/late-page
// unknown): sort by a column, the :provider and :age filters, the detail's
// copy menu (the ready CLI command, on the clipboard through OSC 52), and
// the Lab's step mode through one scenario.
func consoleNavigation(c *tmuxConsole, db string) {
	t := c.t
	t.Helper()
	// OSC 52 from the console lands in tmux's paste buffer.
	if out, err := c.tmux("set-option", "-s", "set-clipboard", "on"); err != nil {
		t.Fatalf("set-clipboard: %v: %s", err, out)
	}
	command := func(s string) {
		c.keys(":")
		c.text(s)
		c.keys("Enter")
	}
	order := func(screen string, keys ...string) {
		t.Helper()
		last := -1
		for _, k := range keys {
			i := strings.Index(screen, " "+k+" ")
			if i < 0 || i < last {
				t.Fatalf("want the rows in the order %v:\n%s", keys, screen)
			}
			last = i
		}
	}

	c.keys("8")
	c.waitFor("[all 6]", "task-1")
	c.keys("s")
	order(c.waitFor("KEY↓", "sorted key A→Z"), "page-manager", "page-oncall", "task-1", "task-3", "late-page")
	command("sort key reverse")
	order(c.waitFor("KEY↑", "sorted key Z→A"), "late-page", "task-3", "task-1", "page-oncall", "page-manager")

	command("provider sandbox")
	s := c.waitFor("· provider sandbox", "1–3")
	if strings.Contains(s, "task-1") {
		t.Fatalf(":provider sandbox lists a local tool's task:\n%s", s)
	}
	command("age >1h")
	s = c.waitFor("· age >1h")
	if strings.Contains(s, "page-manager") || strings.Contains(s, "late-page") {
		t.Fatalf(":age >1h lists operations made seconds ago:\n%s", s)
	}
	command("age <1h")
	c.waitFor("· age <1h", "page-manager", "late-page")
	command("age all")
	command("provider")
	c.waitFor("1–6 of 6 operations", "task-1")

	// The copy menu of the newest row in this order (Z→A: globex/late-page).
	c.keys("g", "Enter")
	c.waitFor("globex / late-page")
	c.keys("y")
	check := "retrysafe ops show --db " + db + " --tenant globex --key late-page"
	c.waitFor("Copy to the clipboard", "retrysafe ops show --db "+db, "--tenant globex --key late-page") // wrapped, whole
	c.keys("2")
	c.waitFor("Copied the `retrysafe ops show` command")
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := c.tmux("show-buffer")
		if out == check {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clipboard (tmux buffer) holds %q, want %q", out, check)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.keys("Escape") // the banner
	time.Sleep(100 * time.Millisecond)
	c.keys("Escape")
	c.waitFor("[all 6]")

	// The Lab in step mode: the lost response, one step per space.
	c.keys("L")
	c.waitFor("committed, the reply is lost")
	c.keys("j", "j", "j", "j", "j")
	c.waitFor("› committed, the reply is lost")
	c.keys("Space")
	c.waitFor("Run the lab in this ledger?", "2 other tenants")
	c.confirm()
	c.waitFor("step mode: space runs the next step", "▶ next: first call")
	// Space only while a step is held ("▶ next: …"): one pressed while a
	// step runs is ignored by design, and a count of presses would run out
	// on a loaded machine before the scenario does.
	steps := 0
	for deadline := time.Now().Add(90 * time.Second); ; {
		s := c.screen(false)
		if strings.Contains(s, "✓ holds") {
			break
		}
		if strings.Contains(s, "✗") {
			t.Fatalf("the lab scenario failed in step mode:\n%s", s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("step mode did not finish the scenario in 90 s (%d steps):\n%s", steps, s)
		}
		held := nextStep(s)
		if held == "" {
			time.Sleep(50 * time.Millisecond) // a step is running
			continue
		}
		c.keys("Space")
		steps++
		// The held step runs: its line changes (to running, or the next).
		for until := time.Now().Add(5 * time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
			if nextStep(c.screen(false)) != held {
				break
			}
		}
	}
	s = c.waitFor("✓ holds", "1 → 1")
	if steps < 3 {
		t.Fatalf("step mode ran the scenario in %d steps:\n%s", steps, s)
	}
	c.keys("Escape")
	c.waitFor("[all ")
}

// nextStep is the Lab's "▶ next: …" line, the step step mode holds.
func nextStep(screen string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, "▶ next:") {
			return line
		}
	}
	return ""
}
