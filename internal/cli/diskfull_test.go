package cli

import (
	"bytes"
	"context"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// limitFileSize caps the size of every file this process writes (the
// re-executed binary of TestMain), ignoring SIGXFSZ so a write past it
// fails with EFBIG, as on a full disk.
func limitFileSize(v string) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		panic(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		panic(err)
	}
}

// With no room to write, a valid call is the machine's failure: class
// internal (exit 1, retry the same key later), never invalid (exit 2, "fix
// the request").
func TestCallOnAFullDiskIsInternalNotInvalid(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "before", "create_support_task", taskArgs("fits"))...); code != 0 {
		t.Fatal("setup call failed")
	}
	for _, c := range []struct{ name, tool, args, limit string }{
		// 2 KiB: not even the WAL index fits, opening fails.
		{"local tool, open fails", "create_support_task", taskArgs("no room"), "2048"},
		{"external tool, open fails", "send_notification", notifyArgs, "2048"},
		// The 32 KiB WAL index fits, the transaction's pages do not.
		{"local tool, write fails", "create_support_task", taskArgs("no room"), "33000"},
		{"external tool, claim fails", "send_notification", notifyArgs, "33000"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := binaryCmd(ctx, t, callArgs(db, "acme", "full-"+c.tool, c.tool, c.args, "--timeout", "3s")...)
		cmd.Env = append(cmd.Env, fileSizeEnv+"="+c.limit)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("%s on a full disk: exit %d, stdout %q, stderr %q; want 1 (internal)", c.name, code, out.String(), errb.String())
		}
		if line := oneErrorLine(t, c.name, errb.String()); !strings.Contains(line, "internal") {
			t.Errorf("%s: %q does not name the class", c.name, line)
		}
	}
	// Every other command too: a storage error is exit 1, not 2.
	if _, _, code := cli(t, callArgs(db, "acme", "unknown", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: exit %d; want 5", code)
	}
	for _, limit := range []string{"2048", "33000"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := binaryCmd(ctx, t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "unknown", "--as", "applied", "--reason", "provider shows it", "--evidence", "provider console: delivered")
		cmd.Env = append(cmd.Env, fileSizeEnv+"="+limit)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("ops resolve on a full disk (limit %s): exit %d, stderr %q; want 1", limit, code, errb.String())
		}
		oneErrorLine(t, "ops resolve", errb.String())
	}
}
