// Package reexec starts the running test binary again as a worker process,
// so that crash tests kill real processes (SIGKILL, os.Exit at a point of
// the call path), never goroutines. It is the one mechanism every package's
// tests use: a worker is named, its spec travels in the environment, and
// the package's TestMain hands the process to the worker instead of the
// tests.
//
//	func TestMain(m *testing.M) {
//		reexec.Main(m, map[string]func(spec string) int{"child": runChild})
//	}
//
//	cmd := reexec.Command(t, "child", spec) // spec: JSON-encoded unless a string
package reexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// The worker's name and its spec. A worker's own children inherit both
// (a re-executed CLI that starts the lab's workers, or `sandbox serve`,
// starts them as the same worker) unless they are started with Command.
const (
	nameEnv = "RETRYSAFE_REEXEC"
	specEnv = "RETRYSAFE_REEXEC_SPEC"
)

// Role is the worker this process was started as and its spec; name is ""
// in the test binary proper.
func Role() (name, spec string) { return os.Getenv(nameEnv), os.Getenv(specEnv) }

// Main runs the worker this process was started as (its return value is the
// exit code), or else the tests. A name with no worker here exits 3.
func Main(m *testing.M, workers map[string]func(spec string) int) {
	if name, spec := Role(); name != "" {
		w, ok := workers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "reexec: this test binary has no worker %q\n", name)
			os.Exit(3)
		}
		os.Exit(w(spec))
	}
	os.Exit(m.Run())
}

// Env is the environment entries that make a process of this test binary
// the named worker with spec: for a command built elsewhere (the lab's
// runner).
func Env(name string, spec any) []string {
	return []string{nameEnv + "=" + name, specEnv + "=" + encode(spec)}
}

// Command is this test binary as the named worker with spec, given args
// (none: "-test.run=^$", which runs no test should the worker return to
// the tests).
func Command(t testing.TB, name string, spec any, args ...string) *exec.Cmd {
	t.Helper()
	return CommandContext(context.Background(), t, name, spec, args...)
}

// CommandContext is Command killed when ctx is done.
func CommandContext(ctx context.Context, t testing.TB, name string, spec any, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if len(args) == 0 {
		args = []string{"-test.run=^$"}
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), Env(name, spec)...)
	return cmd
}

// Executable is this test binary's path, for what starts workers itself.
func Executable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func encode(spec any) string {
	switch s := spec.(type) {
	case nil:
		return ""
	case string:
		return s
	}
	b, err := json.Marshal(spec)
	if err != nil {
		panic(fmt.Sprintf("reexec: spec %T: %v", spec, err))
	}
	return string(b)
}

// Setenv makes every process this test starts from os.Executable() — code
// under test that re-executes "itself" — the named worker, until the test
// ends.
func Setenv(t testing.TB, name string, spec any) {
	t.Helper()
	t.Setenv(nameEnv, name)
	t.Setenv(specEnv, encode(spec))
}
