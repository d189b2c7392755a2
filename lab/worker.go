package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The worker's own flags, beside the call's (the retrysafe binary parses
// both: `retrysafe __worker --key … --die-at after-commit`). The ledger is
// not among them: it goes in the worker's environment (LedgerEnv).
const (
	FlagDieAt   = "die-at"   // a reconcile.Point where the process ends
	FlagDieHow  = "die-how"  // exit (os.Exit with DieCode) or kill (SIGKILL)
	FlagStallAt = "stall-at" // a Point where the process hangs until killed
	FlagCalls   = "calls"    // concurrent calls of the same request in this process
	// FlagClockOffset runs the worker's clock (ledger and sandbox) this far
	// behind real time: the demo plays its traffic on an earlier clock, and
	// a worker it starts must stamp its rows on that same clock.
	FlagClockOffset = "clock-offset"
)

// LedgerEnv carries the ledger's path or URL to a worker, never its command
// line: a PostgreSQL URL may hold a password, and a process's arguments are
// readable by every user of the host (ps, /proc/PID/cmdline) while its
// environment is readable only by its owner. A worker is a `retrysafe`
// command, whose --db defaults to this variable.
const LedgerEnv = "RETRYSAFE_DB"

// How a worker dies.
const (
	DieExit = "exit" // os.Exit(DieCode(point)): no deferred cleanup, no reply
	DieKill = "kill" // SIGKILL to itself: what a crash or the OOM killer does
)

// StallMarker is written to stderr when a worker reaches its stall point,
// so the parent knows the reply it will never get was due by now.
const StallMarker = "retrysafe-worker: stalled at "

// DieCode is the exit code of a worker that ends at p with DieExit: the
// lab article's 17 and 18 for the local points, then 19 and 21.
func DieCode(p reconcile.Point) int {
	switch p {
	case reconcile.PointBeforeCommit:
		return 17
	case reconcile.PointAfterCommit:
		return 18
	case reconcile.PointAfterClaim:
		return 19
	case reconcile.PointAfterDispatch:
		return 21
	}
	return 1
}

// ParsePoint accepts a Point name ("" is no point).
func ParsePoint(s string) (reconcile.Point, error) {
	switch p := reconcile.Point(s); p {
	case "", reconcile.PointBeforeCommit, reconcile.PointAfterCommit, reconcile.PointAfterClaim, reconcile.PointAfterDispatch:
		return p, nil
	}
	return "", model.Errorf(model.CodeInvalid, "unknown point %q (want before-commit, after-commit, after-claim or after-dispatch)", s)
}

// Hook returns the reconcile.Service.At hook of a worker: at dieAt the
// process ends for real (how: DieExit or DieKill) — a returned error would
// let deferred code, the driver and the runtime tidy up, which a crash does
// not; at stallAt it announces itself on stderr and hangs until the parent
// kills it, which is what a lost reply looks like from the caller.
func Hook(dieAt reconcile.Point, how string, stallAt reconcile.Point, stderr io.Writer) (func(reconcile.Point), error) {
	if how != DieExit && how != DieKill {
		return nil, model.Errorf(model.CodeInvalid, "unknown --%s %q (want exit or kill)", FlagDieHow, how)
	}
	if dieAt == "" && stallAt == "" {
		return nil, nil
	}
	return func(p reconcile.Point) {
		switch p {
		case dieAt:
			if how == DieKill {
				killSelf()
			}
			os.Exit(DieCode(p))
		case stallAt:
			fmt.Fprintf(stderr, "%s%s\n", StallMarker, p)
			// Hang like a reply that never comes; a forgotten worker still
			// ends on its own rather than living forever.
			time.Sleep(time.Minute)
			os.Exit(DieCode(p))
		}
	}, nil
}

// WorkerResult is the one line of JSON a worker prints per call.
type WorkerResult struct {
	Class   model.Class    `json:"class"`
	Outcome model.Outcome  `json:"outcome,omitempty"`
	Receipt *model.Receipt `json:"receipt,omitempty"`
	NewKey  string         `json:"new_key,omitempty"`
	State   model.State    `json:"state,omitempty"`
	Message string         `json:"message,omitempty"`
}

// ResultOf turns a call's result into the worker's line.
func ResultOf(res reconcile.Result, err error) WorkerResult {
	if err != nil && res.Class == "" {
		res = reconcile.Result{Class: model.ClassInternal, Message: err.Error()}
	}
	return WorkerResult{Class: res.Class, Outcome: res.Outcome, Receipt: res.Receipt, NewKey: res.NewKey,
		State: res.State, Message: res.Message}
}

// WorkerExit is a worker's exit code for its results: the class's code of
// the first call that did not end done (as `retrysafe call` would), else 0.
func WorkerExit(results []WorkerResult) int {
	for _, r := range results {
		if r.Class != model.ClassDone {
			return r.Class.ExitCode()
		}
	}
	return 0
}

// spawner starts worker processes on one ledger.
type spawner struct {
	r                          *Runner
	ctx                        context.Context
	ledger, providerDB, tenant string
	// config is the workers' --config ("" = the built-in registry).
	config string
	// clock, when set, is the clock the workers run on (the demo's); nil
	// is real time.
	clock func() time.Time
}

// call is one worker process a scenario starts.
type call struct {
	tenant          string // "" = the spawner's
	key, tool, args string
	provider        string
	trace, worker   string
	lease           time.Duration
	dieAt           reconcile.Point
	how             string
	stallAt         reconcile.Point
	calls           int
}

// outcome is what the parent saw of a worker process.
type outcome struct {
	Exit    int  // exit code; -1 when a signal ended it
	Killed  bool // ended by a signal (its own SIGKILL, or ours after a stall)
	Stalled bool // reached its stall point and was killed by the parent
	Results []WorkerResult
	Stderr  string
}

// first is the first call's result, or a zero result when there was none.
func (o outcome) first() WorkerResult {
	if len(o.Results) == 0 {
		return WorkerResult{}
	}
	return o.Results[0]
}

func (o outcome) String() string {
	switch {
	case o.Stalled:
		return "no reply (caller's deadline)"
	case o.Killed:
		return "killed by SIGKILL, no reply"
	case len(o.Results) == 0:
		return fmt.Sprintf("exit %d, no reply", o.Exit)
	}
	r := o.first()
	s := string(r.Class)
	if r.Outcome != "" && string(r.Outcome) != string(r.Class) {
		s += " (" + string(r.Outcome) + ")"
	}
	return fmt.Sprintf("%s, exit %d", s, o.Exit)
}

// words is what the worker's first call did, for a person: the receipt
// it was answered with ("created sbx_2, exit 0", "replayed task 5, exit
// 0"), or how it was refused ("refused: outcome unknown, exit 5") — never
// a bare "done", which says nothing of what was done.
func (o outcome) words() string {
	if o.Stalled || o.Killed || len(o.Results) == 0 {
		return o.String()
	}
	r := o.first()
	var s string
	switch r.Class {
	case model.ClassDone:
		s = receiptWords(r.Receipt)
	case model.ClassUnknown:
		s = "refused: outcome unknown"
	case model.ClassSuperseded:
		s = "refused: superseded by " + orNone(label(r.NewKey))
	case model.ClassConflict:
		s = "rejected: conflict"
	default:
		s = string(r.Class)
		if r.Outcome != "" && string(r.Outcome) != string(r.Class) {
			s += " (" + string(r.Outcome) + ")"
		}
		if r.Message != "" {
			s += ": " + oneLine(r.Message)
		}
	}
	if len(o.Results) > 1 {
		s += fmt.Sprintf(" (first of %d calls)", len(o.Results))
	}
	return fmt.Sprintf("%s, exit %d", s, o.Exit)
}

func (x *spawner) args(c call) []string {
	tenant := c.tenant
	if tenant == "" {
		tenant = x.tenant
	}
	a := append([]string{}, x.r.WorkerArgs...)
	a = append(a, "--provider-db", x.providerDB, "--tenant", tenant, "--key", c.key,
		"--tool", c.tool, "--args", c.args, "--timeout", x.workerTimeout().String())
	if x.config != "" {
		a = append(a, "--config", x.config)
	}
	if c.provider != "" {
		a = append(a, "--provider", c.provider)
	}
	if c.trace != "" {
		a = append(a, "--trace-id", c.trace)
	}
	if c.worker != "" {
		a = append(a, "--worker", c.worker)
	}
	if c.lease > 0 {
		a = append(a, "--lease", c.lease.String())
	}
	if c.dieAt != "" {
		how := c.how
		if how == "" {
			how = DieExit
		}
		a = append(a, "--"+FlagDieAt, string(c.dieAt), "--"+FlagDieHow, how)
	}
	if c.stallAt != "" {
		a = append(a, "--"+FlagStallAt, string(c.stallAt))
	}
	if c.calls > 1 {
		a = append(a, "--"+FlagCalls, strconv.Itoa(c.calls))
	}
	if x.clock != nil {
		// Read at the start: the worker's clock is then the parent's, to
		// the process's start-up.
		a = append(a, "--"+FlagClockOffset, time.Until(x.clock()).String())
	}
	return a
}

func (x *spawner) workerTimeout() time.Duration {
	if x.r.WorkerTimeout > 0 {
		return x.r.WorkerTimeout
	}
	return 30 * time.Second
}

// start launches one worker process.
func (x *spawner) start(c call) (*proc, error) {
	ctx, cancel := context.WithTimeout(x.ctx, x.workerTimeout()+5*time.Second)
	cmd := exec.CommandContext(ctx, x.r.Exe, x.args(c)...)
	// The scenarios call the built-in tools: without a --config of the
	// lab's own, a $RETRYSAFE_CONFIG of the person's must not replace them.
	// The ledger goes in the environment (LedgerEnv), after the parent's
	// own value of it, which it replaces.
	cmd.Env = append(append(os.Environ(), "RETRYSAFE_CONFIG=", LedgerEnv+"="+x.ledger), x.r.Env...)
	p := &proc{cmd: cmd, cancel: cancel, stalled: make(chan struct{})}
	cmd.Stdout = &capped{buf: &p.stdout}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, model.Wrap(model.CodeUnavailable, err, "lab: cannot start worker %s: %v", x.r.Exe, err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		sc := bufio.NewScanner(errPipe)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, StallMarker) {
				once.Do(func() { close(p.stalled) })
				continue
			}
			if p.stderr.Len() < maxWorkerOutput {
				p.stderr.WriteString(line + "\n")
			}
		}
		// A line longer than the scanner's buffer stops Scan: keep draining,
		// or the worker would block writing to a full pipe.
		io.Copy(io.Discard, errPipe)
	}()
	return p, nil
}

// maxWorkerOutput bounds what is kept of a worker's stdout and stderr: a
// worker prints one line of JSON and a line or two of error; more is kept
// no further (and still drained).
const maxWorkerOutput = 1 << 20

// capped keeps the first maxWorkerOutput bytes written and drops the rest.
type capped struct{ buf *bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxWorkerOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// proc is a running worker.
type proc struct {
	cmd            *exec.Cmd
	cancel         context.CancelFunc
	stdout, stderr bytes.Buffer
	wg             sync.WaitGroup
	stalled        chan struct{}
	wasStalled     atomic.Bool
}

// wait waits for the worker to end and reads what it printed.
func (p *proc) wait() (outcome, error) {
	defer p.cancel()
	p.wg.Wait() // stderr drained before Wait closes the pipe
	err := p.cmd.Wait()
	var o outcome
	if p.cmd.ProcessState == nil {
		return o, model.Wrap(model.CodeInternal, err, "lab: worker did not run: %v", err)
	}
	o.Exit = p.cmd.ProcessState.ExitCode()
	o.Killed = o.Exit == -1
	o.Stalled = p.wasStalled.Load()
	o.Stderr = strings.TrimSpace(p.stderr.String())
	for _, line := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var r WorkerResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return o, model.Errorf(model.CodeInternal, "lab: worker printed %q, not a result line", line)
		}
		o.Results = append(o.Results, r)
	}
	return o, nil
}

// call runs one worker to its end. A worker told to stall is killed once it
// reports the stall: the caller's deadline passed and it gave up waiting.
func (x *spawner) call(c call) (outcome, error) {
	p, err := x.start(c)
	if err != nil {
		return outcome{}, err
	}
	if c.stallAt != "" {
		done := make(chan struct{})
		go func() {
			select {
			case <-p.stalled:
				p.wasStalled.Store(true)
				_ = p.cmd.Process.Kill()
			case <-done:
			}
		}()
		o, err := p.wait()
		close(done)
		return o, err
	}
	return p.wait()
}
