package storetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// childWorker is the re-executed test binary's name for a worker process
// (internal/reexec); its spec is a childSpec.
const childWorker = "storetest-child"

// exitDied is the exit code of a worker that stopped where it was told to.
const exitDied = 17

// childSpec is one worker process's work.
type childSpec struct {
	Location string
	Mode     string // create, bump, die-after-commit, die-before-commit, hang, write, decide, compact
	Tenant   string
	Keys     []string
	// Table is where die-after-commit and die-before-commit write their
	// operation's local effect ("" = tasks).
	Table model.LocalTable
	Bumps int
	// StartAt (Unix ms) holds every worker until the same moment, so the
	// processes really contend.
	StartAt int64
}

// childReport is a worker's result, one JSON line on stdout.
type childReport struct {
	Created []string `json:"created"`
	Bumps   int      `json:"bumps"`
	Stale   int      `json:"stale"`
	Errors  []string `json:"errors"`
}

func (s childSpec) table() model.LocalTable {
	if s.Table == "" {
		return model.TableTasks
	}
	return s.Table
}

func runChild(d Driver, specJSON string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "child spec:", err)
		return 3
	}
	l, err := d.Open(spec.Location, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	if spec.StartAt > 0 {
		time.Sleep(time.Until(time.UnixMilli(spec.StartAt)))
	}
	ctx := context.Background()
	var rep childReport
	switch spec.Mode {
	case "create":
		for _, k := range spec.Keys {
			var created bool
			err := l.WithTx(ctx, func(tx store.Tx) (err error) {
				created, err = createApplied(tx, spec.Tenant, k)
				return err
			})
			if err != nil {
				rep.Errors = append(rep.Errors, err.Error())
			} else if created {
				rep.Created = append(rep.Created, k)
			}
		}
	case "bump":
		// Read, then compare-and-set: a stale write is read again and
		// retried, never applied over a newer row.
		for rep.Bumps < spec.Bumps {
			var op *model.Operation
			if err := l.WithTx(ctx, func(tx store.Tx) (err error) { op, err = tx.GetOperation(spec.Tenant, spec.Keys[0]); return err }); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				break
			}
			err := l.WithTx(ctx, func(tx store.Tx) error {
				next := *op
				next.ClaimNo++
				return tx.UpdateOperation(&next, op.State, op.Version)
			})
			switch {
			case err == nil:
				rep.Bumps++
			case model.IsCode(err, model.CodeStale):
				rep.Stale++
			default:
				rep.Errors = append(rep.Errors, err.Error())
				rep.Bumps = spec.Bumps
			}
		}
	case "die-after-commit":
		// The commit is acknowledged to nobody: the process dies with its
		// reply unsent and nothing closed.
		if err := l.WithTx(ctx, func(tx store.Tx) error {
			_, err := createAppliedIn(tx, spec.table(), spec.Tenant, spec.Keys[0])
			return err
		}); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 4
		}
		os.Exit(exitDied)
	case "die-before-commit":
		_ = l.WithTx(ctx, func(tx store.Tx) error {
			if _, err := createAppliedIn(tx, spec.table(), spec.Tenant, spec.Keys[0]); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(4)
			}
			os.Exit(exitDied) // inside the transaction: no commit
			return nil
		})
		return 4
	case "hang":
		// Writes inside a transaction, says so, and waits to be killed.
		_ = l.WithTx(ctx, func(tx store.Tx) error {
			if _, err := createApplied(tx, spec.Tenant, spec.Keys[0]); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(4)
			}
			fmt.Println("ready")
			time.Sleep(time.Hour)
			return nil
		})
		return 4
	case "decide":
		// Another process's decision: the operation failed after all.
		if err := l.WithTx(ctx, func(tx store.Tx) error {
			cur, err := tx.GetOperation(spec.Tenant, spec.Keys[0])
			if err != nil {
				return err
			}
			next := *cur
			next.State, next.Receipt = model.StateFailed, []byte(`{"status":"failed_by_decision"}`)
			return tx.UpdateOperation(&next, cur.State, cur.Version)
		}); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
	case "compact":
		// Another process's sweep: every expired operation compacted
		// (Bumps reports how many).
		if err := l.WithTx(ctx, func(tx store.Tx) (err error) {
			rep.Bumps, _, err = tx.CompactExpired(24*time.Hour, 100)
			return err
		}); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
	case "write":
		for _, k := range spec.Keys {
			if err := l.WithTx(ctx, func(tx store.Tx) error {
				return tx.InsertOperation(newOp(spec.Tenant, k, model.StateUnknown))
			}); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "child: unknown mode", spec.Mode)
		return 3
	}
	l.Close()
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return 0
}

func childCmd(t *testing.T, spec childSpec) *exec.Cmd {
	t.Helper()
	return reexec.Command(t, childWorker, spec)
}

// runChildProcess runs a worker to its end and returns its exit code and report.
func runChildProcess(t *testing.T, spec childSpec) (int, *childReport) {
	t.Helper()
	cmd := childCmd(t, spec)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("worker: %v", err)
	}
	if code != 0 {
		if code != exitDied {
			t.Logf("worker exit %d: %s", code, errb.String())
		}
		return code, nil
	}
	var rep childReport
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &rep); err != nil {
		t.Fatalf("worker report %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	return code, &rep
}

// runChildren starts the workers together and collects their reports.
func runChildren(t *testing.T, specs []childSpec) []*childReport {
	t.Helper()
	start := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	type result struct {
		i   int
		rep *childReport
		err string
	}
	ch := make(chan result, len(specs))
	for i, spec := range specs {
		spec.StartAt = start
		cmd := childCmd(t, spec)
		go func() {
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				ch <- result{i, nil, fmt.Sprintf("%v: %s", err, errb.String())}
				return
			}
			var rep childReport
			if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &rep); err != nil {
				ch <- result{i, nil, fmt.Sprintf("report %q: %v", out.String(), err)}
				return
			}
			ch <- result{i, &rep, ""}
		}()
	}
	reps := make([]*childReport, len(specs))
	for range specs {
		r := <-ch
		if r.err != "" {
			t.Fatalf("worker %d: %s", r.i, r.err)
		}
		reps[r.i] = r.rep
	}
	return reps
}

// startHanging starts a worker that writes inside a transaction and waits;
// it returns once the worker said it is inside, with a func that kills it
// with SIGKILL.
func startHanging(t *testing.T, spec childSpec) (kill func()) {
	t.Helper()
	spec.Mode = "hang"
	cmd := childCmd(t, spec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ready <- sc.Scan() && strings.TrimSpace(sc.Text()) == "ready"
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("hanging worker did not start its transaction: %s", errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("hanging worker never got inside its transaction: %s", errb.String())
	}
	killed := false
	kill = func() {
		if killed {
			return
		}
		killed = true
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	t.Cleanup(kill)
	return kill
}
