package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Many processes making the first calls on a ledger that does not exist
// yet all succeed: a valid request is never class invalid, and racing
// creators of the file, its WAL switch and its schema are not an error.
func TestConcurrentFirstCallsOnANewLedgerAllSucceed(t *testing.T) {
	const procs, rounds = 12, 3
	for _, tool := range []struct{ name, args string }{
		{"create_support_task", taskArgs("first")},
		{"send_notification", notifyArgs},
	} {
		for round := 0; round < rounds; round++ {
			db := filepath.Join(t.TempDir(), "fresh.db")
			var wg sync.WaitGroup
			type result struct {
				code   int
				stderr string
			}
			results := make([]result, procs)
			// Each process waits for its arguments on a FIFO of its own; once
			// all are started, every FIFO is written at once, so the
			// processes reach the new ledger together.
			fifos := make([]string, procs)
			for i := range fifos {
				fifos[i] = filepath.Join(filepath.Dir(db), fmt.Sprintf("args%d.fifo", i))
				if err := syscall.Mkfifo(fifos[i], 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			}
			for i := 0; i < procs; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					cmd := binaryCmd(ctx, t, callArgs(db, "acme", fmt.Sprintf("k%d", i), tool.name, "@"+fifos[i])...)
					var errb bytes.Buffer
					cmd.Stderr = &errb
					cmd.Run()
					results[i] = result{cmd.ProcessState.ExitCode(), errb.String()}
				}(i)
			}
			time.Sleep(500 * time.Millisecond)
			for _, f := range fifos {
				go os.WriteFile(f, []byte(tool.args), 0o600)
			}
			wg.Wait()
			for i, r := range results {
				if r.code != 0 {
					t.Errorf("%s round %d: process %d exit %d: %s", tool.name, round, i, r.code, r.stderr)
				}
			}
			// A local tool's call has no provider to open, and opens none.
			if _, err := os.Stat(providerPath(db)); tool.name == "create_support_task" && err == nil {
				t.Errorf("calls of a local tool created the sandbox provider file %s", providerPath(db))
			}
		}
	}
}
