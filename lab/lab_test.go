package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// The test binary doubles as three kinds of child process (internal/reexec):
//   - hookWorker, spec POINT,HOW[,stall]: installs Hook and walks the call
//     path's points in order, saying which it passed, so the parent sees
//     exactly where the process ended and how;
//   - idleWorker: a "worker" that does nothing and exits 0, to show that
//     the scenarios' checks fail when the workers do not behave;
//   - argvWorker, spec FILE: a "worker" that writes its command line and the
//     ledger it was given in its environment to FILE, and exits 0.
const (
	hookWorker = "hook"
	idleWorker = "idle"
	argvWorker = "argv"
	// cliWorker is a retrysafe process (CLIWorker, set by the external
	// tests, which may import the command line: the lab's own cannot).
	cliWorker = "cli"
)

// CLIWorker runs a retrysafe command line (internal/cli.Run): the lab's
// real workers, for the external tests (package lab_test) to set.
var CLIWorker func(args []string) int

var pathOrder = []reconcile.Point{reconcile.PointBeforeCommit, reconcile.PointAfterCommit,
	reconcile.PointAfterClaim, reconcile.PointAfterDispatch}

func TestMain(m *testing.M) {
	reexec.Main(m, map[string]func(string) int{
		hookWorker: runHook,
		idleWorker: func(string) int { return 0 },
		argvWorker: runArgv,
		cliWorker:  func(string) int { return CLIWorker(os.Args[1:]) },
	})
}

// runArgv is argvWorker: the process's own command line, as ps and /proc
// show it to anyone, and its $LedgerEnv, written to the file spec names.
func runArgv(file string) int {
	cmdline, err := os.ReadFile("/proc/self/cmdline")
	if err != nil {
		cmdline = []byte(strings.Join(os.Args, "\x00"))
	}
	if err := os.WriteFile(file, []byte(string(cmdline)+"\n"+os.Getenv(LedgerEnv)), 0o600); err != nil {
		return 2
	}
	return 0
}

// runHook is hookWorker: spec POINT,HOW[,stall].
func runHook(spec string) int {
	parts := strings.Split(spec, ",")
	die, stall := reconcile.Point(parts[0]), reconcile.Point("")
	if len(parts) == 3 {
		die, stall = "", reconcile.Point(parts[0])
	}
	hook, err := Hook(die, parts[1], stall, os.Stderr)
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 2
	}
	for _, p := range pathOrder {
		hook(p)
		os.Stdout.WriteString("passed " + string(p) + "\n")
	}
	return 0
}

func TestHookEndsTheProcessForRealAtItsPoint(t *testing.T) {
	for _, tc := range []struct {
		point      reconcile.Point
		how        string
		wantExit   int // -1: ended by a signal
		wantPassed string
	}{
		{reconcile.PointBeforeCommit, DieExit, 17, ""},
		{reconcile.PointAfterCommit, DieExit, 18, "passed before-commit\n"},
		{reconcile.PointAfterClaim, DieExit, 19, "passed before-commit\npassed after-commit\n"},
		{reconcile.PointAfterDispatch, DieExit, 21, "passed before-commit\npassed after-commit\npassed after-claim\n"},
		{reconcile.PointAfterCommit, DieKill, -1, "passed before-commit\n"},
		{reconcile.PointAfterDispatch, DieKill, -1, "passed before-commit\npassed after-commit\npassed after-claim\n"},
	} {
		t.Run(string(tc.point)+"/"+tc.how, func(t *testing.T) {
			cmd := reexec.Command(t, hookWorker, string(tc.point)+","+tc.how)
			var out bytes.Buffer
			cmd.Stdout = &out
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("want the process to end abnormally, got %v", err)
			}
			if got := ee.ExitCode(); got != tc.wantExit {
				t.Errorf("exit %d, want %d (%v)", got, tc.wantExit, ee)
			}
			if out.String() != tc.wantPassed {
				t.Errorf("passed %q, want %q: it must end at %s, not before or after", out.String(), tc.wantPassed, tc.point)
			}
		})
	}
}

func TestHookStallsUntilKilledAndSaysWhere(t *testing.T) {
	cmd := reexec.Command(t, hookWorker, "after-commit,exit,stall")
	var out bytes.Buffer
	cmd.Stdout = &out
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Reading the marker blocks until the child reaches its stall point; a
	// child that ran past it would end and close the pipe instead.
	line, _ := bufio.NewReader(errPipe).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if line != StallMarker+"after-commit\n" {
		t.Errorf("stderr %q, want the stall marker", line)
	}
	if out.String() != "passed before-commit\n" {
		t.Errorf("passed %q: the stall must hold the process at after-commit", out.String())
	}
}

func TestHookRefusesAnUnknownWayToDie(t *testing.T) {
	if _, err := Hook(reconcile.PointAfterCommit, "gently", "", nil); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("got %v, want invalid", err)
	}
	if _, err := ParsePoint("mid-air"); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("got %v, want invalid", err)
	}
}

// A lab whose checks cannot fail proves nothing: with workers that do
// nothing, every scenario must report failure (or refuse to go on).
func TestScenariosFailWhenWorkersDoNotBehave(t *testing.T) {
	r := &Runner{Exe: reexec.Executable(t), Env: reexec.Env(idleWorker, nil), Open: openLedger}
	for _, sc := range Scenarios() {
		t.Run(sc.ID, func(t *testing.T) {
			path := testledger.File(t, "l.db")
			row, err := r.RunIn(context.Background(), path, LabTenant, sc.ID, nil)
			if err == nil && row.OK {
				t.Errorf("%s passed with idle workers: %+v", sc.ID, row)
			}
			if err == nil && len(row.Failures) == 0 {
				t.Errorf("%s: not ok but no failure says why", sc.ID)
			}
		})
	}
}

func TestScenariosHaveUniqueIDsAndSayWhatTheyExpect(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range Scenarios() {
		if seen[sc.ID] {
			t.Errorf("duplicate id %s", sc.ID)
		}
		seen[sc.ID] = true
		if sc.Name == "" || sc.FirstCall == "" || sc.NextAttempt == "" || !strings.Contains(sc.Expected, "→") {
			t.Errorf("%s: incomplete: %+v", sc.ID, sc)
		}
		if _, err := config.Default().Tools.Lookup(sc.Tool); err != nil {
			t.Errorf("%s: %v", sc.ID, err)
		}
	}
	if len(seen) != 10 {
		t.Errorf("%d scenarios, want 10", len(seen))
	}
}

func TestOutcomesFoldRepeatedAttempts(t *testing.T) {
	as := []model.Attempt{{Outcome: model.OutcomeCreated}}
	for range 15 {
		as = append(as, model.Attempt{Outcome: model.OutcomeReplayed})
	}
	as = append(as, model.Attempt{Outcome: model.OutcomeConflict})
	if got := outcomes(as); got != "created replayed×15 conflict" {
		t.Errorf("got %q", got)
	}
}

func TestWriteTableShowsEveryRowAndWhyOneFailed(t *testing.T) {
	rows := []Row{
		{Scenario: "a", FirstCall: "stops before commit", NextAttempt: "same key", Before: 0, After: 1, Expected: "0 → 1", OK: true},
		{Scenario: "b", FirstCall: "stops after commit", NextAttempt: "new key", Before: 1, After: 1, Expected: "1 → 2",
			Failures: []string{"effects after the next attempt: want 2, got 1"}},
	}
	var out bytes.Buffer
	WriteTable(&out, rows)
	s := out.String()
	for _, want := range []string{"0 → 1", "ok", "1 → 1", "FAIL", "b FAILED:", "want 2, got 1"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}

// A PostgreSQL URL may hold a password, and a process's command line is
// readable by every user of the host: the worker gets its ledger in its
// environment, and its arguments hold no URL.
func TestWorkerGetsTheLedgerInItsEnvironmentNotItsArguments(t *testing.T) {
	for _, ledger := range []string{
		"postgres://retrysafe:s3cret-pw@db.internal:5432/ops?search_path=ledger&sslmode=disable",
		filepath.Join(t.TempDir(), "l.db"),
	} {
		out := filepath.Join(t.TempDir(), "argv")
		r := &Runner{Exe: reexec.Executable(t), WorkerArgs: []string{"__worker"}, Env: reexec.Env(argvWorker, out)}
		t.Setenv(LedgerEnv, "postgres://someone:else@elsewhere/db") // the parent's own is replaced
		x := &spawner{r: r, ctx: context.Background(), ledger: ledger, providerDB: "p.db", tenant: "t"}
		o, err := x.call(call{key: "k", tool: "create_support_task", args: `{"subject":"x"}`, worker: "w1", dieAt: reconcile.PointAfterCommit})
		if err != nil || o.Exit != 0 {
			t.Fatalf("worker: %+v, %v", o, err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		argv, env, _ := strings.Cut(string(b), "\n")
		for _, leak := range []string{ledger, "postgres", "s3cret", "--db"} {
			if strings.Contains(argv, leak) {
				t.Errorf("the worker's command line holds %q: %q", leak, strings.ReplaceAll(argv, "\x00", " "))
			}
		}
		if !strings.Contains(argv, "--key\x00k\x00") {
			t.Errorf("the worker's command line lacks its call: %q", strings.ReplaceAll(argv, "\x00", " "))
		}
		if env != ledger {
			t.Errorf("the worker's $%s = %q, want %q", LedgerEnv, env, ledger)
		}
	}
}

// openLedger is the lab's opener as the command line wires it: the public
// ledger API (ledger.OpenConfig).
func openLedger(ctx context.Context, where string, o OpenOptions) (Ledger, error) {
	cfg, use := o.Config, ledger.Dispatching
	if cfg == nil {
		cfg, use = config.Default(), ledger.NoProviders
	}
	l, err := ledger.OpenConfig(ctx, where, cfg, ledger.ConfigOptions{ProviderDB: o.ProviderDB, Use: use, Store: o.Store})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// A lab run ties its ledger to the provider file as every command that
// dispatches does: the file serves the ledger for the sandbox providers,
// and the ledger records the file's id (provider_files) for each — so the
// operator's later lookups through that file are trusted, and a copy's
// file or an older backup of it is told apart. (It used to tie the file
// with sandbox.Tie alone and record nothing.)
func TestARunRecordsTheProviderFileAsACommandDoes(t *testing.T) {
	ctx := context.Background()
	r := &Runner{Exe: reexec.Executable(t), Env: reexec.Env(idleWorker, nil), Open: openLedger}
	path := testledger.File(t, "l.db")
	if _, err := r.RunIn(ctx, path, LabTenant, "external-unknown-mark-applied", nil); err != nil {
		t.Logf("the run (idle workers) stopped: %v", err)
	}
	sb, err := sandbox.Open(ProviderPathFor(path))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	st, err := ledger.OpenStore(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sandbox", "sandbox-idem"} {
		if got, err := st.ProviderFile(ctx, name); err != nil || got != sb.FileID() {
			t.Errorf("ProviderFile(%s) = %q, %v; want the file's id %s", name, got, err, sb.FileID())
		}
		if ok, err := sb.Serves(ctx, id, name); err != nil || !ok {
			t.Errorf("the file serves the ledger for %s: %v, %v; want true", name, ok, err)
		}
	}
}

// The table is for a terminal: what a worker printed or a check quoted
// (a provider's words, a ledger's text) goes through the one sanitizer, so
// an escape sequence in it is shown, inert, and never acts on the terminal.
func TestWriteTableShowsControlCharactersInert(t *testing.T) {
	const title, clear = "\x1b]0;pwned\x07", "\x1b[2J"
	rows := []Row{{Scenario: "s" + clear, FirstCall: "c", NextAttempt: "n", Expected: "0 → 1", Ledger: "unknown " + title,
		FirstResult: "done: " + title, NextResult: "refused\u202e" + clear,
		Failures: []string{"ledger says " + title, "two\nlines"}}}
	var out bytes.Buffer
	WriteTable(&out, rows)
	s := out.String()
	if strings.ContainsAny(s, "\x1b\x07\u202e") {
		t.Errorf("the table passes control characters to the terminal:\n%q", s)
	}
	for _, want := range []string{`\x1b]0;pwned\x07`, `\x1b[2J`, `two\nlines`} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks the inert %s:\n%s", want, s)
		}
	}
}
