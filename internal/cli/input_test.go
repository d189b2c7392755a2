package cli

// Every input `call` reads goes through a limit, and a signal ends a call
// that is still waiting for its input.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
)

// A file far over the 64 KiB limit is refused having read only one byte
// more than the limit: memory does not grow with the file.
func TestArgsFileIsReadThroughTheLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	db := filepath.Join(dir, "ledger.db")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, errText, code := cli(t, callArgs(db, "acme", "k", "create_support_task", "@"+big)...)
	runtime.ReadMemStats(&after)
	if code != 2 || out != "" || !strings.Contains(oneErrorLine(t, "big file", errText), "64 KiB") {
		t.Errorf("300 MB file: exit %d, stdout %q, stderr %q; want 2 and the limit named", code, out, errText)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading a 300 MB --args file allocated %d MB; the limit is 64 KiB", grew>>20)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused call created the ledger")
	}
}

// /dev/zero never ends: the call must still refuse it at once, in its own
// process (an unbounded read would grow until the kernel kills it).
func TestArgsFromAnEndlessFileIsRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := binaryCmd(ctx, t, callArgs(db, "acme", "k", "create_support_task", "@/dev/zero")...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatal("call --args @/dev/zero did not finish within 20s")
	}
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Fatalf("exit %d (%v), stderr %q; want 2", code, err, errb.String())
	}
	if !strings.Contains(errb.String(), "64 KiB") {
		t.Errorf("stderr %q does not name the limit", errb.String())
	}
}

// binaryCmd is this test binary as the retrysafe binary (TestMain's
// switch), for inputs and signals that need a process of their own.
func binaryCmd(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return reexec.CommandContext(ctx, t, asCLI, nil, args...)
}

// A call waiting for its arguments on a FIFO nobody writes, or on a stdin
// that never closes, ends on SIGTERM or SIGINT: exit 1, nothing written.
func TestSignalEndsACallWaitingForItsInput(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		fifo bool
	}{
		{"FIFO, SIGTERM", syscall.SIGTERM, true},
		{"FIFO, SIGINT", syscall.SIGINT, true},
		{"stdin, SIGTERM", syscall.SIGTERM, false},
		{"stdin, SIGINT", syscall.SIGINT, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "ledger.db")
			src := "-"
			if c.fifo {
				fifo := filepath.Join(dir, "args.fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				src = "@" + fifo
			}
			// A signal that lands before the process has set up its handler
			// kills it outright (no message, killed by the signal): on a
			// loaded machine start-up can take longer than the first pause,
			// so that case alone is tried again after a longer one.
			var cmd *exec.Cmd
			var errb bytes.Buffer
			for _, settle := range []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second} {
				errb.Reset()
				cmd = interruptedCall(t, db, src, c.sig, settle, &errb)
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					break
				}
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit %d, stderr %q; want 1", code, errb.String())
			}
			oneErrorLine(t, c.name, errb.String())
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Error("an interrupted call created the ledger")
			}
		})
	}
}

// interruptedCall starts a call that reads its arguments from src (held
// open, never written), sends sig after settle, and waits for it to end.
func interruptedCall(t *testing.T, db, src string, sig os.Signal, settle time.Duration, errb *bytes.Buffer) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := binaryCmd(ctx, t, callArgs(db, "acme", "k", "create_support_task", src)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settle) // let it block in the read
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v was ignored while the call read its input", sig)
	}
	return cmd
}
