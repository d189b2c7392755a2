package cli

// The command-line contract of `call`, `ops`, `sweep` and `bench`: exit
// codes, one JSON line on stdout when done, one clear line on stderr
// otherwise, tenant isolation, and "refused means unchanged".

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// cli runs one retrysafe command line in-process.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// oneErrorLine fails unless stderr is exactly one line.
func oneErrorLine(t *testing.T, what, stderr string) string {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || strings.Contains(stderr, "goroutine") {
		t.Errorf("%s: stderr is not one line: %q", what, stderr)
	}
	return strings.TrimSpace(stderr)
}

// digest is a digest of every row of the ledger (and the provider's
// deliveries), read without writing.
func digest(t *testing.T, path string, skip ...string) string {
	t.Helper()
	st, err := sqlite.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer st.Close()
	d, err := st.Snapshot(context.Background(), skip...)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := os.Stat(providerPath(path)); err == nil {
		sb, err := sandbox.Open(providerPath(path))
		if err != nil {
			t.Fatal(err)
		}
		n, _ = sb.Deliveries(context.Background(), "")
		sb.Close()
	}
	return fmt.Sprintf("%s/%d", d, n)
}

func deliveries(t *testing.T, ledgerPath, tenant, key string) int {
	t.Helper()
	sb, err := sandbox.Open(providerPath(ledgerPath))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	st, err := sqlite.Open(ledgerPath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lid, err := st.LedgerID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, err := sb.Deliveries(context.Background(), reconcile.DownstreamKey(lid, tenant, key))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type callLine struct {
	Class   model.Class    `json:"class"`
	Status  string         `json:"status"`
	Receipt *model.Receipt `json:"receipt"`
	NewKey  string         `json:"new_key"`
	State   model.State    `json:"state"`
}

func parseCallLine(t *testing.T, stdout string) callLine {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not one line: %q", stdout)
	}
	var c callLine
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return c
}

func taskArgs(subject string) string { return fmt.Sprintf(`{"subject":%q}`, subject) }

const notifyArgs = `{"to":"customer@example.com","body":"your parcel is late"}`

func callArgs(db, tenant, key, tool, args string, extra ...string) []string {
	return append([]string{"call", "--db", db, "--tenant", tenant, "--key", key, "--tool", tool, "--args", args, "--worker", "cli-test"}, extra...)
}

// asBinary runs this test binary as the retrysafe binary in a process of
// its own (TestMain's switch), for calls that must really die.
func asBinary(t *testing.T, args ...string) (stdout, stderr string, code int, signaled bool) {
	t.Helper()
	cmd := reexec.Command(t, asCLI, nil, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), cmd.ProcessState.ExitCode() == -1
}

func newLedgerFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := openLedger(context.Background(), path, config.Default(), opening{store: store.Options{Create: true}, use: ledger.Dispatching})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return path
}

// killWorker runs a `__worker` call that kills itself (SIGKILL) at point.
func killWorker(t *testing.T, db, key, prov, point, lease string) {
	t.Helper()
	args := append([]string{workerCommand}, callArgs(db, "acme", key, "send_notification", notifyArgs)[1:]...)
	args = append(args, "--provider", prov, "--lease", lease, "--die-at", point, "--die-how", "kill")
	out, errText, code, signaled := asBinary(t, args...)
	if !signaled {
		t.Fatalf("worker was not killed: exit %d\n%s%s", code, out, errText)
	}
}

func TestCallExitCodesAndOutput(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	// 0: created, then replayed, the same task.
	out, errText, code := cli(t, callArgs(db, "acme", "op-1", "create_support_task", taskArgs("check delayed delivery"), "--trace-id", "call_1")...)
	first := parseCallLine(t, out)
	if code != 0 || errText != "" || first.Class != model.ClassDone || first.Status != "created" || first.Receipt == nil {
		t.Fatalf("create: exit %d, %q %q", code, out, errText)
	}
	out, _, code = cli(t, callArgs(db, "acme", "op-1", "create_support_task", taskArgs("check delayed delivery"))...)
	again := parseCallLine(t, out)
	if code != 0 || again.Status != "replayed" || !bytes.Equal(again.Receipt.Result, first.Receipt.Result) {
		t.Errorf("replay: exit %d, %q; want the first receipt", code, out)
	}

	type refusal struct {
		name   string
		args   []string
		code   int
		stdout bool   // a JSON line on stdout too (stored failure, superseded)
		says   string // on stderr
	}
	cases := []refusal{
		{"conflict: same key, other subject", callArgs(db, "acme", "op-1", "create_support_task", taskArgs("cancel it")), 3, false, "conflict"},
		{"invalid: bad JSON", callArgs(db, "acme", "op-2", "create_support_task", `{"subject":`), 2, false, "not valid JSON"},
		{"unknown: reply lost", callArgs(db, "acme", "n-1", "send_notification", notifyArgs, "--fault", "lose-reply"), 5, false, "unknown"},
		{"unknown: retried", callArgs(db, "acme", "n-1", "send_notification", notifyArgs), 5, false, "a person must reconcile"},
		{"stored failure", callArgs(db, "acme", "n-2", "send_notification", notifyArgs, "--fault", "reject"), 8, true, "rejected"},
		{"stored failure, replayed", callArgs(db, "acme", "n-2", "send_notification", notifyArgs), 8, true, "rejected"},
	}
	for _, c := range cases {
		out, errText, code := cli(t, c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.name, code, c.code, errText)
		}
		if line := oneErrorLine(t, c.name, errText); !strings.Contains(line, c.says) {
			t.Errorf("%s: stderr %q does not say %q", c.name, line, c.says)
		}
		if c.stdout != (out != "") {
			t.Errorf("%s: stdout %q", c.name, out)
		}
	}

	// 6: superseded, naming the new key; the new key then applies once.
	// The provider has n-1's delivery (the reply was lost): supersede asks
	// it first, so the resend is the second confirmation's.
	cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1") // seen: --against-finding confirms it
	out, errText, code = cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "n-1", "--reason", "send it again on purpose", "--new-key", "n-1b", "--operator", "oncall", "--against-finding="+shownDigest(t, db, "n-1"))
	if code != 0 || strings.TrimSpace(out) != "n-1b" {
		t.Fatalf("supersede: exit %d, %q %q", code, out, errText)
	}
	out, errText, code = cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs)...)
	if sup := parseCallLine(t, out); code != 6 || sup.NewKey != "n-1b" || !strings.Contains(errText, "n-1b") {
		t.Errorf("old key after supersede: exit %d, %q %q; want 6 and the new key", code, out, errText)
	}
	out, _, code = cli(t, callArgs(db, "acme", "n-1b", "send_notification", notifyArgs)...)
	if code != 0 || parseCallLine(t, out).Status != "created" {
		t.Errorf("new key: exit %d %q", code, out)
	}

	// 4: in progress elsewhere — a worker died holding the claim.
	killWorker(t, db, "n-3", "sandbox", "after-claim", "1h")
	_, errText, code = cli(t, callArgs(db, "acme", "n-3", "send_notification", notifyArgs)...)
	if code != 4 || !strings.Contains(oneErrorLine(t, "in progress", errText), "retry later with the same key") {
		t.Errorf("in progress elsewhere: exit %d, %q", code, errText)
	}

	// 7: expired — a receipt older than the replay window, before and after
	// the sweep compacts it; nothing is created either way.
	old, err := openLedger(context.Background(), db, config.Default(), opening{store: store.Options{Now: func() time.Time { return time.Now().Add(-48 * time.Hour) }}, use: ledger.Dispatching})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := old.Service().Call(context.Background(), model.Request{Tenant: "acme", Key: "op-old", Tool: "create_support_task",
		PayloadVersion: 1, Args: []byte(taskArgs("last month"))}, reconcile.CallOptions{}); err != nil || res.Outcome != model.OutcomeCreated {
		t.Fatalf("old call: %+v %v", res, err)
	}
	old.Close()
	for _, sweepFirst := range []bool{false, true} {
		if sweepFirst {
			if out, errText, code := cli(t, "sweep", "--db", db, "--json"); code != 0 || !strings.Contains(out, `"compacted":1`) {
				t.Fatalf("sweep: exit %d %q %q", code, out, errText)
			}
		}
		before := digest(t, db)
		out, errText, code := cli(t, callArgs(db, "acme", "op-old", "create_support_task", taskArgs("last month"))...)
		if code != 7 || out != "" || !strings.Contains(oneErrorLine(t, "expired", errText), "expired") {
			t.Errorf("expired (swept %v): exit %d, %q %q", sweepFirst, code, out, errText)
		}
		if sweepFirst && digest(t, db) != before {
			t.Error("an expired retry of a compacted key wrote something")
		}
	}
}

func TestCallRefusesBadInputAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "never.db")
	existing := newLedgerFile(t)
	cli(t, callArgs(existing, "acme", "op-1", "create_support_task", taskArgs("x"))...)
	cases := []struct {
		name string
		args []string
	}{
		{"no tenant", []string{"call", "--key", "k", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"no key", []string{"call", "--tenant", "t", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"no tool", []string{"call", "--tenant", "t", "--key", "k", "--args", taskArgs("x")}},
		{"no args", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_support_task"}},
		{"unknown tool", []string{"call", "--tenant", "t", "--key", "k", "--tool", "rm_rf", "--args", "{}"}},
		{"args an array", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_support_task", "--args", `["x"]`}},
		{"missing field", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_report_job", "--args", taskArgs("x")}},
		{"key of 256 characters", []string{"call", "--tenant", "t", "--key", strings.Repeat("k", 256), "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"key with a newline", []string{"call", "--tenant", "t", "--key", "k\n1", "--tool", "create_support_task", "--args", taskArgs("x")}},
		{"payload version 0", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_support_task", "--args", taskArgs("x"), "--payload-version", "0"}},
		{"unknown fault", []string{"call", "--tenant", "t", "--key", "k", "--tool", "send_notification", "--args", notifyArgs, "--fault", "explode"}},
		{"unknown provider", []string{"call", "--tenant", "t", "--key", "k", "--tool", "send_notification", "--args", notifyArgs, "--provider", "mailgun"}},
		{"unknown flag", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_support_task", "--args", taskArgs("x"), "--bogus"}},
		{"stray argument", []string{"call", "--tenant", "t", "--key", "k", "--tool", "create_support_task", "--args", taskArgs("x"), "extra"}},
		{"existing key, invalid args", []string{"call", "--tenant", "acme", "--key", "op-1", "--tool", "create_support_task", "--args", `{"subject":""}`}},
	}
	before := digest(t, existing)
	for _, c := range cases {
		for _, db := range []string{missing, existing} {
			args := append(append([]string{}, c.args...), "--db", db)
			out, errText, code := cli(t, args...)
			if code != 2 || out != "" {
				t.Errorf("%s: exit %d, stdout %q; want 2 and nothing on stdout", c.name, code, out)
			}
			if c.name != "unknown flag" { // the flag package adds its usage
				oneErrorLine(t, c.name, errText)
			} else if !strings.Contains(errText, "bogus") {
				t.Errorf("%s: %q", c.name, errText)
			}
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: a refused call created %s", c.name, missing)
		}
	}
	if digest(t, existing) != before {
		t.Error("refused calls changed the ledger")
	}
}

// Tenant B can neither see nor decide tenant A's operation, and what it is
// told is exactly what it would be told about a key nobody ever used.
func TestOpsCommandsAreTenantScoped(t *testing.T) {
	db := newLedgerFile(t)
	cli(t, callArgs(db, "tenant-a", "secret-op", "send_notification", notifyArgs, "--fault", "lose-reply")...)
	cli(t, callArgs(db, "tenant-a", "task-op", "create_support_task", taskArgs("a's task"))...)
	cli(t, callArgs(db, "tenant-b", "b-op", "create_support_task", taskArgs("b's task"))...)

	out, _, code := cli(t, "ops", "list", "--db", db, "--tenant", "tenant-b", "--json")
	var page struct{ Operations []model.Operation }
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil {
		t.Fatalf("ops list --json: exit %d %v", code, err)
	}
	listed := page.Operations
	if len(listed) != 1 || listed[0].Key != "b-op" {
		t.Errorf("tenant-b lists %v; want only its own operation", listed)
	}
	out, _, _ = cli(t, "ops", "list", "--db", db, "--tenant", "tenant-b", "--search", "secret")
	if strings.Contains(out, "secret-op") || strings.Contains(out, "tenant-a") {
		t.Errorf("tenant-b's search shows tenant-a: %q", out)
	}

	commands := map[string][]string{
		"show":      {"ops", "show"},
		"show json": {"ops", "show", "--json"},
		"resolve":   {"ops", "resolve", "--as", "applied", "--reason", "found it", "--evidence", "sbx_1", "--operator", "mallory"},
		"not":       {"ops", "resolve", "--as", "not-applied", "--reason", "nothing there", "--evidence", "lookup", "--operator", "mallory"},
		"supersede": {"ops", "supersede", "--reason", "resend", "--operator", "mallory"},
		"check":     {"ops", "check"},
	}
	before := digest(t, db)
	for name, cmd := range commands {
		for _, key := range []string{"secret-op", "task-op"} {
			args := append(append([]string{}, cmd...), "--db", db, "--tenant", "tenant-b", "--key", key)
			out, errOther, code := cli(t, args...)
			nobodyArgs := append(append([]string{}, cmd...), "--db", db, "--tenant", "tenant-b", "--key", "never-used")
			outNobody, errNobody, _ := cli(t, nobodyArgs...)
			// Under --json the error is also a JSON object on stdout, and
			// it too must read exactly as for a key nobody used.
			if code != 2 || (out != "" && strings.ReplaceAll(out, key, "never-used") != outNobody) {
				t.Errorf("%s %s as tenant-b: exit %d, stdout %q; want 2 and nothing (or the same error as for a key nobody used)", name, key, code, out)
			}
			line := oneErrorLine(t, name, errOther)
			if strings.Contains(line, "tenant-a") || strings.ReplaceAll(errOther, key, "never-used") != errNobody {
				t.Errorf("%s %s: tenant-b is told %q, about a key nobody used %q; they must read alike", name, key, errOther, errNobody)
			}
		}
	}
	if digest(t, db) != before {
		t.Error("tenant-b's refused commands changed the ledger")
	}
	// Tenant A's operation is as it was, with no decision on it.
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "tenant-a", "--key", "secret-op", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Errorf("tenant-a's operation after tenant-b's attempts: %+v %v", d.Operation, err)
	}
}

func TestOpsRefusalsExitTwoAndChangeNothing(t *testing.T) {
	db := newLedgerFile(t)
	cli(t, callArgs(db, "acme", "unknown-op", "send_notification", notifyArgs, "--fault", "lose-reply")...)
	cli(t, callArgs(db, "acme", "applied-op", "send_notification", notifyArgs)...)
	cli(t, callArgs(db, "acme", "task-op", "create_support_task", taskArgs("x"))...)
	base := []string{"--db", db, "--tenant", "acme"}
	with := func(args ...string) []string {
		return append(append([]string{}, args[:2]...), append(append([]string{}, base...), args[2:]...)...)
	}
	cases := map[string][]string{
		"no subcommand":              {"ops"},
		"unknown subcommand":         {"ops", "delete", "--db", db},
		"list: unknown state":        {"ops", "list", "--db", db, "--state", "done"},
		"list: unknown tool":         {"ops", "list", "--db", db, "--tool", "rm_rf"},
		"list: limit 0":              {"ops", "list", "--db", db, "--limit", "0"},
		"list: stray argument":       {"ops", "list", "--db", db, "extra"},
		"list: missing ledger":       {"ops", "list", "--db", filepath.Join(t.TempDir(), "nope.db")},
		"show: no key":               {"ops", "show", "--db", db, "--tenant", "acme"},
		"show: unknown key":          with("ops", "show", "--key", "nope"),
		"resolve: no --as":           with("ops", "resolve", "--key", "unknown-op", "--reason", "r"),
		"resolve: bad --as":          with("ops", "resolve", "--key", "unknown-op", "--as", "maybe", "--reason", "r"),
		"resolve: no reason":         with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--evidence", "sbx_1"),
		"resolve: blank reason":      with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--reason", "  ", "--evidence", "sbx_1"),
		"resolve: no evidence":       with("ops", "resolve", "--key", "unknown-op", "--as", "not-applied", "--reason", "r"),
		"resolve: unknown key":       with("ops", "resolve", "--key", "nope", "--as", "applied", "--reason", "r"),
		"resolve: applied already":   with("ops", "resolve", "--key", "applied-op", "--as", "not-applied", "--reason", "r", "--evidence", "e"),
		"resolve: a local effect":    with("ops", "resolve", "--key", "task-op", "--as", "applied", "--reason", "r"),
		"resolve: stale version":     with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--reason", "r", "--evidence", "sbx_1", "--expect-version", "1"),
		"supersede: no reason":       with("ops", "supersede", "--key", "unknown-op"),
		"supersede: applied":         with("ops", "supersede", "--key", "applied-op", "--reason", "r"),
		"supersede: same key":        with("ops", "supersede", "--key", "unknown-op", "--reason", "r", "--new-key", "unknown-op"),
		"supersede: taken key":       with("ops", "supersede", "--key", "unknown-op", "--reason", "r", "--new-key", "applied-op"),
		"supersede: bad new key":     with("ops", "supersede", "--key", "unknown-op", "--reason", "r", "--new-key", "a\tb"),
		"check: a local effect":      with("ops", "check", "--key", "task-op"),
		"check: unknown key":         with("ops", "check", "--key", "nope"),
		"resolve: unknown flag":      with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--reason", "r", "--force"),
		"sweep: stray argument":      {"sweep", "--db", db, "now"},
		"sweep: missing ledger":      {"sweep", "--db", filepath.Join(t.TempDir(), "nope.db")},
		"resolve: operator too long": with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--reason", "r", "--operator", strings.Repeat("o", 200)),
	}
	before := digest(t, db)
	for name, args := range cases {
		out, errText, code := cli(t, args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", name, code, errText)
		}
		if strings.Contains(name, "unknown flag") || name == "no subcommand" || name == "unknown subcommand" {
			if errText == "" {
				t.Errorf("%s: nothing on stderr", name)
			}
		} else {
			oneErrorLine(t, name, errText)
		}
		if out != "" {
			t.Errorf("%s: stdout %q", name, out)
		}
	}
	if digest(t, db) != before {
		t.Error("refused ops commands changed the ledger")
	}
	// A stale view says what changed.
	_, errText, _ := cli(t, with("ops", "resolve", "--key", "unknown-op", "--as", "applied", "--reason", "r", "--evidence", "sbx_1", "--expect-version", "1")...)
	if !strings.Contains(errText, "changed since you looked") || !strings.Contains(errText, "is now unknown (version 2)") {
		t.Errorf("stale refusal %q does not say what changed", errText)
	}
}

// A worker killed between the provider's effect and transaction B, settled
// through the commands an on-call engineer types.
func TestKilledWorkerSettledWithOpsCheckAndResolve(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "n-1", "sandbox", "after-dispatch", "1s")
	if n := deliveries(t, db, "acme", "n-1"); n != 1 {
		t.Fatalf("provider holds %d deliveries, want 1", n)
	}
	out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "n-1", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != model.StateInProgress {
		t.Fatalf("after the kill: %+v %v; want in_progress", d.Operation, err)
	}
	waitSwept(t, db, "to_unknown")
	_, errText, code := cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs)...)
	if code != 5 {
		t.Errorf("retry of the unknown outcome: exit %d %q; want 5", code, errText)
	}
	before := digest(t, db, "attempts")
	out, errText, code = cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1", "--json", "--operator", "oncall")
	var ev struct {
		State    model.State       `json:"state"`
		Version  int64             `json:"version"`
		Evidence provider.Evidence `json:"evidence"`
		Finding  model.Finding     `json:"finding"`
		Recorded bool              `json:"recorded"`
	}
	if err := json.Unmarshal([]byte(out), &ev); code != 0 || err != nil || !ev.Evidence.Found || ev.Evidence.Ref == "" || ev.State != model.StateUnknown {
		t.Fatalf("ops check: exit %d %q %q", code, out, errText)
	}
	if ev.Finding.Kind != model.FindingHasIt || ev.Finding.Ref != ev.Evidence.Ref || !ev.Recorded {
		t.Errorf("ops check finding %+v recorded=%v; want has it · %s, recorded", ev.Finding, ev.Recorded, ev.Evidence.Ref)
	}
	// The check is recorded as a lookup attempt, and nothing else changed.
	if digest(t, db, "attempts") != before {
		t.Error("ops check changed more than the attempt history")
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "n-1", "--json")
	var shown model.Detail
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	last := shown.Attempts[len(shown.Attempts)-1]
	if f := shown.Operation.Finding; last.Outcome != model.OutcomeLookup || f == nil || f.Kind != model.FindingHasIt || f.Stale || f.By != "ops check by oncall" {
		t.Errorf("after ops check: last attempt %+v, finding %+v; want a fresh has-it lookup by oncall", last, f)
	}
	if shown.Operation.Version != ev.Version || shown.Operation.State != model.StateUnknown {
		t.Errorf("ops check moved the operation to %s v%d", shown.Operation.State, shown.Operation.Version)
	}
	out, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "n-1", "--as", "applied",
		"--evidence", ev.Evidence.Ref, "--reason", "provider lookup found the delivery", "--operator", "oncall",
		"--expect-version", fmt.Sprint(ev.Version))
	if code != 0 || !strings.Contains(out, "unknown → applied") {
		t.Fatalf("ops resolve: exit %d %q %q", code, out, errText)
	}
	out, _, code = cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs)...)
	if res := parseCallLine(t, out); code != 0 || res.Status != "replayed" || res.Receipt.ProviderRef != ev.Evidence.Ref {
		t.Errorf("retry after resolve: exit %d %q; want a replay naming %s", code, out, ev.Evidence.Ref)
	}
	if n := deliveries(t, db, "acme", "n-1"); n != 1 {
		t.Errorf("provider holds %d deliveries after the retry, want 1", n)
	}
}

func TestKilledWorkerRedispatchedBySweepWithAnHonouringProvider(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "n-1", "sandbox-idem", "after-dispatch", "1s")
	waitSwept(t, db, "redispatched")
	if n := deliveries(t, db, "acme", "n-1"); n != 1 {
		t.Errorf("provider holds %d deliveries after the re-dispatch, want 1", n)
	}
	out, _, code := cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs)...)
	if code != 0 || parseCallLine(t, out).Status != "replayed" || deliveries(t, db, "acme", "n-1") != 1 {
		t.Errorf("retry: exit %d %q", code, out)
	}
}

// waitSwept runs `sweep --json` until it reports field = 1: the killed
// worker's lease is real time.
func waitSwept(t *testing.T, db, field string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, errText, code := cli(t, "sweep", "--db", db, "--json")
		if code != 0 {
			t.Fatalf("sweep: exit %d %q", code, errText)
		}
		var rep map[string]int
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("sweep --json %q: %v", out, err)
		}
		if rep[field] == 1 {
			return
		}
		if rep[field] > 1 || time.Now().After(deadline) {
			t.Fatalf("sweep reports %v; want %s = 1", rep, field)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBenchReportsRateLatencyErrorsAndTheBaseline(t *testing.T) {
	dir := t.TempDir()
	for _, mix := range []string{"new", "replay", "conflict"} {
		db := filepath.Join(dir, mix+".db")
		out, errText, code := cli(t, "bench", "--db", db, "--workers", "4", "--ops", "60", "--mix", mix, "--json")
		if code != 0 {
			t.Fatalf("bench %s: exit %d %q", mix, code, errText)
		}
		var rep benchReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("bench --json %q: %v", out, err)
		}
		if rep.Ops != 60 || rep.Workers != 4 || rep.Mix != mix || rep.Errors != 0 || rep.OpsPerSec <= 0 ||
			rep.P50Ms <= 0 || rep.P99Ms < rep.P50Ms || rep.Baseline == nil || rep.Baseline.TxPerSec <= 0 || rep.Ratio <= 0 {
			t.Errorf("bench %s report %+v", mix, rep)
		}
		// The baseline is interleaved with the calls in rounds (6 by
		// default) that share the ops out; the median is one of the
		// rounds' spread.
		checkBenchRounds(t, out, rep, 6, 60)
		// The calls were real: the ledger holds them.
		st, err := sqlite.Open(db, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := st.Counts(context.Background(), "")
		// New: one operation per call; replay and conflict: the pool of
		// stored keys they cycle through (min(ops, 1000)).
		if c.Total != 60 {
			t.Errorf("bench %s left %d operations, want 60", mix, c.Total)
		}
		st.Close()
		if entries, _ := filepath.Glob(filepath.Join(dir, ".*baseline*")); len(entries) != 0 {
			t.Errorf("the baseline left files: %v", entries)
		}
	}
	// It refuses a ledger that exists, unless told to replace it.
	db := filepath.Join(dir, "new.db")
	before, _ := os.ReadFile(db)
	if _, errText, code := cli(t, "bench", "--db", db, "--ops", "10"); code != 2 || !strings.Contains(errText, "--fresh") {
		t.Errorf("bench over an existing file: exit %d %q", code, errText)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("a refused bench touched the file")
	}
	for _, bad := range [][]string{{"--ops", "10"}, {"--db", db, "--fresh", "--mix", "chaos"}, {"--db", db, "--fresh", "--workers", "0"}, {"--db", db, "--fresh", "--durability", "maybe"}} {
		if _, errText, code := cli(t, append([]string{"bench"}, bad...)...); code != 2 {
			t.Errorf("bench %v: exit %d %q; want 2", bad, code, errText)
		}
	}
	if out, _, code := cli(t, "bench", "--db", db, "--fresh", "--ops", "20", "--workers", "2", "--baseline=false"); code != 0 || !strings.Contains(out, "calls/s") {
		t.Errorf("bench --fresh human output: exit %d %q", code, out)
	}
}

// Flags that make no sense are refused before the ledger is opened: exit 2
// and no file created, like every other bad input.
func TestCallRefusesBadTimingAndProviderFlagsBeforeCreatingTheLedger(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		extra []string
	}{
		{"zero timeout", []string{"--timeout", "0s"}},
		{"negative timeout", []string{"--timeout", "-1s"}},
		{"zero lease", []string{"--lease", "0s"}},
		{"provider file in a missing directory", []string{"--provider-db", filepath.Join(dir, "nowhere", "p.db")}},
	}
	for _, c := range cases {
		db := filepath.Join(dir, "never.db")
		out, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, c.extra...)...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
		}
		oneErrorLine(t, c.name, errText)
		for _, p := range []string{db, providerPath(db)} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: a refused call created %s", c.name, p)
			}
		}
	}
}

// `ops check` must not answer from a provider file it just created: an empty
// lookup there would read as "nothing was sent".
func TestOpsCheckRefusesAMissingProviderFile(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	elsewhere := filepath.Join(t.TempDir(), "other.provider.db")
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--provider-db", elsewhere)
	if code != 2 || out != "" || !strings.Contains(oneErrorLine(t, "check", errText), "cannot tell") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a line about the provider file", code, out, errText)
	}
	if _, err := os.Stat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ops check created %s", elsewhere)
	}
	out, _, code = cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
	if code != 0 || !strings.Contains(out, "delivered") {
		t.Errorf("check beside the ledger: exit %d, %q", code, out)
	}
}

// The console opens the provider only to ask it: a ledger copied without
// its provider file (or pointed at the wrong --provider-db) gets "cannot
// tell" from every check, and no file is created — asking a new, empty
// provider store would answer "no delivery", a false reason to mark the
// operation not applied.
func TestTheConsoleNeverCreatesAProviderStoreToAskIt(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	copied := filepath.Join(t.TempDir(), "copy.db")
	testfiles.Copy(t, db, copied)
	for _, c := range []struct{ name, ledger, providerDB string }{
		{"a copied ledger", copied, ""},
		{"a wrong --provider-db", db, filepath.Join(t.TempDir(), "wrong.provider.db")},
	} {
		l, err := openLedger(context.Background(), c.ledger, config.Default(), opening{providerDB: c.providerDB, use: ledger.LookupsOnly})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, ev, err := l.Service().Check(context.Background(), "acme", "k")
		l.Close()
		if err == nil || !strings.Contains(err.Error(), "cannot tell") || ev.Found || strings.Contains(ev.Detail, "no delivery") {
			t.Errorf("%s: check = %+v, %v; want cannot tell", c.name, ev, err)
		}
		want := c.providerDB
		if want == "" {
			want = providerPath(c.ledger)
		}
		if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: asking created %s", c.name, want)
		}
	}
	// With the right file, the same check finds the delivery.
	l, err := openLedger(context.Background(), db, config.Default(), opening{use: ledger.LookupsOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ev, err := l.Service().Check(context.Background(), "acme", "k"); err != nil || !ev.Found {
		t.Fatalf("check beside the ledger: %+v, %v", ev, err)
	}
}

// A ledger copied without its provider file must not get a new, empty one
// from a command that dispatches (sweep, a call, serve): every later lookup
// of its earlier operations would then answer an authoritative "has
// nothing", and triage and the console's review would propose marking
// delivered e-mails not applied. Those commands refuse (exit 2, nothing
// created); a local call still works, and triage still cannot tell.
func TestADispatchingCommandNeverCreatesAnEmptyProviderFileBesideHistory(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call exit %d; want 5", code)
	}
	copied := filepath.Join(t.TempDir(), "copy.db")
	testfiles.Copy(t, db, copied)
	cases := []struct {
		name string
		args []string
	}{
		{"sweep", []string{"sweep", "--db", copied}},
		{"an external call", callArgs(copied, "acme", "k2", "send_notification", notifyArgs)},
	}
	for _, c := range cases {
		_, errText, code := cli(t, c.args...)
		if code != 2 || !strings.Contains(errText, "not there") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and a refusal naming the missing provider file", c.name, code, errText)
		}
		if _, err := os.Stat(providerPath(copied)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s created %s beside a ledger with history", c.name, providerPath(copied))
		}
	}
	if _, errText, code := cli(t, callArgs(copied, "acme", "t", "create_support_task", taskArgs("local"))...); code != 0 {
		t.Errorf("a local call on the copy: exit %d, %s", code, errText)
	}
	out, _, code := cli(t, "triage", "--db", copied, "--json")
	if code == 0 || strings.Contains(out, `"kind": "has_nothing"`) || !strings.Contains(out, `"kind": "cannot_tell"`) {
		t.Errorf("triage on the copy: exit %d, %s; want cannot tell, never has nothing", code, out)
	}
	// The right file beside the original still dispatches.
	if _, errText, code := cli(t, callArgs(db, "acme", "k3", "send_notification", notifyArgs)...); code != 0 {
		t.Errorf("a call beside its provider file: exit %d, %s", code, errText)
	}
}

// A replayed call leaves its small WAL for the next call instead of
// merging it into the file (store.Options.LeaveWAL: no fsync for a
// replay); a call that made a new operation still merges it. Nothing is
// lost: what reads the ledger afterwards sees every replay.
func TestAReplayedCallLeavesItsWALAndLosesNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	args := callArgs(db, "acme", "k", "create_support_task", taskArgs("x"))
	if _, errOut, code := cli(t, args...); code != 0 {
		t.Fatalf("first call: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(db + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call that made the operation left its WAL (%v); want it merged into the file", err)
	}
	for i := 0; i < 3; i++ {
		if out, errOut, code := cli(t, args...); code != 0 || !strings.Contains(out, `"status":"replayed"`) {
			t.Fatalf("replay %d: exit %d, %s %s", i, code, out, errOut)
		}
	}
	if st, err := os.Stat(db + "-wal"); err != nil || st.Size() == 0 {
		t.Errorf("the replays merged their WAL into the file (%v); want it left for the next call", err)
	}
	out, errOut, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
		t.Fatalf("ops show: exit %d, %v: %s", code, err, errOut)
	}
	if len(d.Attempts) != 4 {
		t.Errorf("%d attempts after a call and three replays, want 4", len(d.Attempts))
	}
}

// checkBenchRounds checks a SQLite bench report's interleaved rounds: the
// JSON keys scripts read, rounds that add up to the ops, a median ratio
// within the rounds' spread, and the single-row floor timed in the same
// rounds beside the goal's yardstick.
func checkBenchRounds(t *testing.T, out string, rep benchReport, rounds, ops int) {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ops_per_sec", "p50_ms", "p99_ms", "baseline", "ratio", "rounds", "median_ratio", "ratio_min", "ratio_max", "floor", "floor_ratio", "floor_median_ratio", "floor_ratio_min", "floor_ratio_max"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("bench --json has no %q: %s", k, out)
		}
	}
	if len(rep.Rounds) != rounds {
		t.Fatalf("bench ran %d rounds, want %d: %+v", len(rep.Rounds), rounds, rep.Rounds)
	}
	sum := 0
	for i, rd := range rep.Rounds {
		sum += rd.Ops
		if rd.Ops < 1 || rd.OpsPerSec <= 0 || rd.TxPerSec <= 0 || rd.Ratio <= 0 || rd.FloorTxPerSec <= 0 || rd.FloorRatio <= 0 {
			t.Errorf("round %d: %+v", i, rd)
		}
	}
	if sum != ops || rep.Baseline.Transactions != ops || rep.Floor.Transactions != ops {
		t.Errorf("rounds timed %d calls, %d bare transactions and %d single-row ones, want %d each", sum, rep.Baseline.Transactions, rep.Floor.Transactions, ops)
	}
	if !(rep.RatioMin <= rep.MedianRatio && rep.MedianRatio <= rep.RatioMax && rep.RatioMin > 0) {
		t.Errorf("median ratio %v outside the rounds' %v–%v", rep.MedianRatio, rep.RatioMin, rep.RatioMax)
	}
	if !(rep.FloorRatioMin <= rep.FloorMedianRatio && rep.FloorMedianRatio <= rep.FloorRatioMax && rep.FloorRatioMin > 0) {
		t.Errorf("single-row median ratio %v outside the rounds' %v–%v", rep.FloorMedianRatio, rep.FloorRatioMin, rep.FloorRatioMax)
	}
}
