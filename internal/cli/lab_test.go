package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// The re-executed test binary's workers (internal/reexec): asCLI is a
// retrysafe process — the lab re-executes it as `__worker …` and it must
// then behave exactly like the real binary, dying where it is told to;
// loadWorker is the gateway's load generator (a loadSpec).
const (
	asCLI      = "cli"
	loadWorker = "load"
)

// fileSizeEnv makes the re-executed binary's disk "full": no file may
// grow past this many bytes (RLIMIT_FSIZE), so SQLite's writes fail the
// way they do on a full disk.
const fileSizeEnv = "RETRYSAFE_TEST_FILE_SIZE_LIMIT"

func TestMain(m *testing.M) {
	reexec.Main(m, map[string]func(string) int{
		asCLI: func(string) int {
			if v := os.Getenv(fileSizeEnv); v != "" {
				limitFileSize(v)
			}
			return Run(os.Args[1:], os.Stdout, os.Stderr)
		},
		loadWorker: runLoad,
	})
}

// testRunner re-executes this test binary as the lab's workers.
func testRunner(t *testing.T) *lab.Runner {
	t.Helper()
	return &lab.Runner{Exe: reexec.Executable(t), WorkerArgs: []string{workerCommand}, Open: labOpen, Env: reexec.Env(asCLI, nil), Operator: "lab-test"}
}

// want is one row of the lab's table as the seeds state it.
type want struct {
	before, after int
	states        map[string]model.State // key label → final state
}

// labWant is every scenario's expected numbers and final states: the lab
// article's five rows, then the first article's and the external ones.
var labWant = map[string]want{
	"before-commit-same-key":        {0, 1, map[string]model.State{"op-a": model.StateApplied}},
	"after-commit-same-key":         {1, 1, map[string]model.State{"op-a": model.StateApplied}},
	"after-commit-new-key":          {1, 2, map[string]model.State{"op-a": model.StateApplied, "op-b": model.StateApplied}},
	"after-commit-different-report": {1, 1, map[string]model.State{"op-a": model.StateApplied}},
	"deliberate-second-job":         {1, 2, map[string]model.State{"op-a": model.StateApplied, "op-b": model.StateApplied}},
	"lost-response":                 {1, 1, map[string]model.State{"op-a": model.StateApplied}},
	"concurrent-delivery":           {0, 1, map[string]model.State{"op-a": model.StateApplied}},
	"external-unknown-mark-applied": {1, 1, map[string]model.State{"op-a": model.StateApplied}},
	"external-idem-redispatch":      {1, 1, map[string]model.State{"op-a": model.StateApplied}},
	"authorize-new-key":             {0, 1, map[string]model.State{"op-a": model.StateSuperseded, "op-b": model.StateApplied}},
}

// checkRows asserts each row's numbers and what its ledger holds, not just
// the verdict.
func checkRows(t *testing.T, rows []lab.Row, ledgerOf func(lab.Row) string) {
	t.Helper()
	if len(rows) != len(labWant) {
		t.Fatalf("got %d rows, want %d", len(rows), len(labWant))
	}
	for _, r := range rows {
		w, ok := labWant[r.Scenario]
		if !ok {
			t.Errorf("unexpected scenario %q", r.Scenario)
			continue
		}
		if !r.OK {
			t.Errorf("%s: not ok: %s", r.Scenario, strings.Join(r.Failures, "; "))
		}
		if r.Before != w.before || r.After != w.after {
			t.Errorf("%s: effects %d → %d, want %d → %d", r.Scenario, r.Before, r.After, w.before, w.after)
		}
		// A lookup that cannot tell says so once (the grace's error
		// already starts with "cannot tell:").
		for _, text := range append([]string{r.FirstResult, r.NextResult, r.Ledger, r.Detail}, r.Failures...) {
			if strings.Contains(text, "cannot tell: cannot tell") {
				t.Errorf("%s: says cannot tell twice: %s", r.Scenario, text)
			}
		}
		if len(r.Keys) != len(w.states) {
			t.Errorf("%s: keys %v, want %d", r.Scenario, r.Keys, len(w.states))
		}
		st, err := sqlite.Open(ledgerOf(r), store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range r.Keys {
			op, err := st.Get(context.Background(), r.Tenant, k)
			if err != nil {
				t.Errorf("%s: %v", r.Scenario, err)
				continue
			}
			label := k[strings.LastIndexByte(k, '/')+1:]
			if op.State != w.states[label] {
				t.Errorf("%s: %s is %s, want %s", r.Scenario, label, op.State, w.states[label])
			}
		}
		if problems, err := st.Audit(context.Background()); err != nil || len(problems) > 0 {
			t.Errorf("%s: audit: %v %v", r.Scenario, problems, err)
		}
		st.Close()
	}
}

func TestLabScenariosWithRealWorkersHoldTheSeedsNumbers(t *testing.T) {
	dir := t.TempDir()
	rows, err := testRunner(t).Run(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, rows, func(r lab.Row) string { return filepath.Join(dir, r.Scenario+".db") })
}

// The console runs scenarios in the ledger it has open, again and again:
// the numbers must not drift with what earlier runs left behind.
func TestRunInTwiceInOneLedgerShowsTheSameNumbers(t *testing.T) {
	path := testledger.File(t, "shared.db")
	r := testRunner(t)
	for round := 1; round <= 2; round++ {
		var rows []lab.Row
		for _, sc := range lab.Scenarios() {
			var steps int
			row, err := r.RunIn(context.Background(), path, "lab", sc.ID, func(lab.Step) { steps++ })
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, sc.ID, err)
			}
			if steps == 0 {
				t.Errorf("round %d, %s: no progress reported", round, sc.ID)
			}
			rows = append(rows, row)
		}
		checkRows(t, rows, func(lab.Row) string { return path })
	}
}

func TestRunInRefusesWhatCannotRun(t *testing.T) {
	path := testledger.File(t, "l.db")
	missing := filepath.Join(t.TempDir(), "missing.db")
	r := testRunner(t)
	for _, tc := range []struct{ name, ledger, tenant, scenario string }{
		{"unknown scenario", path, "lab", "no-such-scenario"},
		{"empty tenant", path, "", "before-commit-same-key"},
		{"missing ledger", missing, "lab", "before-commit-same-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.RunIn(context.Background(), tc.ledger, tc.tenant, tc.scenario, nil); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	// Nor anything beside it: no provider file, no server.
	for _, f := range []string{missing, providerPath(missing)} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("RunIn on a missing ledger created %s", f)
		}
	}
}

func TestLabCommandPrintsEveryRowAndExitsZero(t *testing.T) {
	reexec.Setenv(t, asCLI, nil) // the lab re-executes os.Executable(): this test binary
	keep := filepath.Join(t.TempDir(), "kept")
	var out, errOut bytes.Buffer
	start := time.Now()
	code := Run([]string{"lab", "--json", "--quiet", "--keep", keep}, &out, &errOut)
	if code != 0 {
		t.Fatalf("lab exited %d: %s\n%s", code, errOut.String(), out.String())
	}
	t.Logf("lab --json took %v", time.Since(start))
	var res struct {
		OK   bool      `json:"ok"`
		Rows []lab.Row `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("lab --json: %v\n%s", err, out.String())
	}
	golden(t, "lab", shape(t, out.String())) // a stable interface, like ops --json
	if !res.OK {
		t.Error("lab --json says not ok")
	}
	checkRows(t, res.Rows, func(r lab.Row) string { return filepath.Join(keep, r.Scenario+".db") })

	// The table form: one line per scenario, every one ok. Its progress
	// is for a terminal, as triage's: stderr here is not one, and gets
	// nothing even without --quiet.
	out.Reset()
	errOut.Reset()
	if code := Run([]string{"lab", "--keep", keep}, &out, &errOut); code != 0 {
		t.Fatalf("lab exited %d: %s", code, errOut.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("progress on a stderr that is not a terminal:\n%s", errOut.String())
	}
	for _, sc := range lab.Scenarios() {
		// Columns are separated by two or more spaces; OK is the fourth.
		line := lineWith(out.String(), sc.ID+" ")
		cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		if len(cols) < 7 || cols[3] != "ok" {
			t.Errorf("table line for %s: %q", sc.ID, line)
		}
	}
	if !strings.Contains(out.String(), "PASS: 10 scenarios") {
		t.Errorf("no PASS line:\n%s", out.String())
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestWorkerRefusesBadFlagsWithoutTouchingTheLedger(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nothing.db")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"unknown point", []string{"--die-at", "mid-air"}},
		{"unknown way to die", []string{"--die-at", "after-commit", "--die-how", "gently"}},
		{"too many calls", []string{"--calls", "1000"}},
		{"clock in the future", []string{"--clock-offset", "1h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{workerCommand, "--db", missing, "--tenant", "t", "--key", "k",
				"--tool", "create_report_job", "--args", `{"report":"weekly"}`}, tc.args...)
			var out, errOut bytes.Buffer
			if code := Run(args, &out, &errOut); code != exitInvalid {
				t.Errorf("exit %d, want %d (%s)", code, exitInvalid, errOut.String())
			}
		})
	}
	// A worker never creates a ledger.
	var out, errOut bytes.Buffer
	code := Run([]string{workerCommand, "--db", missing, "--tenant", "t", "--key", "k",
		"--tool", "create_report_job", "--args", `{"report":"weekly"}`}, &out, &errOut)
	if code == 0 {
		t.Error("a worker on a missing ledger must fail")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the worker created %s", missing)
	}
}

// The demo ledger's design, counted by hand from the plan in lab/demo.go
// plus the lab's ten scenarios under "lab". Written out, not computed: a
// builder that drifted from its design must fail here.
var (
	demoStates = map[string]map[model.State]int{
		"acme-support": {model.StateApplied: 74, model.StateUnknown: 2, model.StateFailed: 1, model.StateInProgress: 1},
		"globex-billing": {model.StateApplied: 54, model.StateNotApplied: 2, model.StateUnknown: 1, model.StateSuperseded: 1,
			model.StateAuthorized: 1, model.StateInProgress: 1},
		"initech-ops": {model.StateApplied: 61, model.StateUnknown: 1, model.StateNotApplied: 1, model.StateSuperseded: 1,
			model.StateFailed: 1, model.StateInProgress: 1},
		"umbrella-logistics": {model.StateApplied: 45, model.StateUnknown: 2},
		"hooli-platform":     {model.StateApplied: 40},
		"lab":                {model.StateApplied: 12, model.StateSuperseded: 1},
	}
	demoTools = map[string]map[string]int{
		"acme-support":       {"create_support_task": 55, "send_notification": 23},
		"globex-billing":     {"create_report_job": 40, "send_notification": 20},
		"initech-ops":        {"create_report_job": 25, "create_support_task": 25, "send_notification": 16},
		"umbrella-logistics": {"create_support_task": 33, "send_notification": 14},
		"hooli-platform":     {"create_report_job": 19, "create_support_task": 10, "send_notification": 11},
		"lab":                {"create_report_job": 7, "create_support_task": 2, "send_notification": 4},
	}
)

const (
	demoOperations = 304
	demoTasks      = 125 // applied create_support_task operations
	demoReportJobs = 91  // applied create_report_job operations
	// 70 applied notifications, 5 unknown ones the provider did deliver
	// (reply lost, or worker killed after dispatch) and the contradicted
	// one delivered after it was marked not applied.
	demoDeliveries = 76
)

func TestDemoBuildsTheDesignedLedger(t *testing.T) {
	reexec.Setenv(t, asCLI, nil) // demo's lab scenarios re-execute this test binary
	path := filepath.Join(t.TempDir(), "demo.db")
	var out, errOut bytes.Buffer
	start := time.Now()
	if code := Run([]string{"demo", "--fresh", "--no-console", "--db", path}, &out, &errOut); code != 0 {
		t.Fatalf("demo exited %d: %s", code, errOut.String())
	}
	built := time.Now()
	t.Logf("demo --fresh took %v", built.Sub(start))
	if !strings.Contains(errOut.String(), "lab                   10 scenarios ok of 10") {
		t.Errorf("no progress line for the lab scenarios:\n%s", errOut.String())
	}
	for _, f := range []string{path, providerPath(path)} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("demo left no %s: %v", f, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*building*")); len(left) > 0 {
		t.Errorf("the build's temporary files were left behind: %v", left)
	}
	checkDemoLedger(t, path)
	checkDemoTimeline(t, path, built)

	// Run again: the ledger is reused, not rebuilt.
	errOut.Reset()
	if code := Run([]string{"demo", "--no-console", "--db", path}, &out, &errOut); code != 0 {
		t.Fatalf("demo (reuse) exited %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "reusing the demo ledger") {
		t.Errorf("second run did not say it reuses the ledger: %s", errOut.String())
	}
	checkDemoLedger(t, path)
	checkDemoTimeline(t, path, built)
}

// checkDemoTimeline asserts the demo reads like a real ledger's last hours,
// not a burst of two seconds: the background spread over hours, nothing
// dated after the build, every operation's attempts in time order, the
// unknown ones waiting for different lengths of time, the in-flight ones
// recent, and the replay windows still open.
func checkDemoTimeline(t *testing.T, path string, built time.Time) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ops, err := st.List(ctx, store.ListQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != demoOperations {
		t.Fatalf("%d operations, want %d", len(ops), demoOperations)
	}
	late := func(what string, at time.Time) {
		if at.After(built) {
			t.Errorf("%s at %s, after the build ended (%s)", what, at.Format(time.RFC3339Nano), built.Format(time.RFC3339Nano))
		}
	}
	var first, last time.Time
	var background []time.Time
	var waiting []time.Duration
	for _, op := range ops {
		name := op.Tenant + "/" + op.Key
		d, err := st.DetailByID(ctx, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		late(name+" created", op.CreatedAt)
		late(name+" updated", op.UpdatedAt)
		if op.UpdatedAt.Before(op.CreatedAt) {
			t.Errorf("%s updated %s before it was created %s", name, op.UpdatedAt, op.CreatedAt)
		}
		prev := op.CreatedAt
		for _, a := range d.Attempts {
			late(fmt.Sprintf("%s attempt %d", name, a.Seq), a.StartedAt)
			if a.StartedAt.Before(prev) {
				t.Errorf("%s: attempt %d at %s, before the one it follows (%s)", name, a.Seq, a.StartedAt, prev)
			}
			prev = a.StartedAt
		}
		for _, dc := range d.Decisions {
			late(name+" decision", dc.At)
			if len(d.Attempts) == 0 || !dc.At.After(d.Attempts[0].StartedAt) {
				t.Errorf("%s: decision at %s, not after its first attempt", name, dc.At)
			}
		}
		if (op.State == model.StateApplied || op.State == model.StateFailed) && !op.ExpiresAt.After(time.Now().Add(time.Hour)) {
			t.Errorf("%s: replay window ends %s, too soon", name, op.ExpiresAt)
		}
		if op.Tenant == lab.LabTenant {
			continue
		}
		background = append(background, op.CreatedAt)
		if first.IsZero() || op.CreatedAt.Before(first) {
			first = op.CreatedAt
		}
		if op.CreatedAt.After(last) {
			last = op.CreatedAt
		}
		switch op.State {
		case model.StateUnknown:
			waiting = append(waiting, built.Sub(op.CreatedAt))
		case model.StateInProgress:
			if age := built.Sub(op.CreatedAt); age > 30*time.Minute {
				t.Errorf("in-flight %s was claimed %s before the build ended; want the last half hour", name, age.Round(time.Second))
			}
		}
	}
	if span := last.Sub(first); span < 5*time.Hour {
		t.Errorf("the background spans %s (%s to %s); want at least 5h", span.Round(time.Minute), first, last)
	}
	// Traffic, not a wall: no ten minutes hold more than 15% of it.
	sort.Slice(background, func(i, j int) bool { return background[i].Before(background[j]) })
	for i, j := 0, 0; i < len(background); i++ {
		for background[i].Sub(background[j]) > 10*time.Minute {
			j++
		}
		if n := i - j + 1; n > len(background)*15/100 {
			t.Errorf("%d of %d background operations within ten minutes before %s", n, len(background), background[i])
			break
		}
	}
	// Waiting for a person since different moments of the shift.
	sort.Slice(waiting, func(i, j int) bool { return waiting[i] < waiting[j] })
	if len(waiting) != 6 {
		t.Fatalf("%d unknown background operations, want 6", len(waiting))
	}
	if waiting[0] < 15*time.Minute || waiting[len(waiting)-1] < 2*time.Hour {
		t.Errorf("unknown operations wait from %s to %s; want from at least 15m to over 2h", waiting[0], waiting[len(waiting)-1])
	}
	for i := 1; i < len(waiting); i++ {
		if waiting[i]-waiting[i-1] < 5*time.Minute {
			t.Errorf("unknown operations' ages %v: two within five minutes of each other", waiting)
		}
	}
}

func checkDemoLedger(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	l, err := openLedger(context.Background(), path, config.Default(), opening{use: ledger.Dispatching})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	all, err := l.Store().Counts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != demoOperations || all.Contradicted != 1 {
		t.Errorf("%d operations, %d contradicted; want %d and 1", all.Total, all.Contradicted, demoOperations)
	}
	tenants, err := l.Store().Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tenants) != len(demoStates) {
		t.Errorf("tenants %v, want %d", tenants, len(demoStates))
	}
	for tenant, want := range demoStates {
		c, err := l.Store().Counts(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range model.AllStates {
			if c.ByState[st] != want[st] {
				t.Errorf("%s: %d %s, want %d", tenant, c.ByState[st], st, want[st])
			}
		}
		ops, err := l.Store().List(ctx, store.ListQuery{Tenant: tenant, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		byTool := map[string]int{}
		for _, op := range ops {
			byTool[op.Tool]++
		}
		for tool, n := range withEveryTool(demoTools[tenant]) {
			if byTool[tool] != n {
				t.Errorf("%s: %d %s operations, want %d", tenant, byTool[tool], tool, n)
			}
		}
	}

	// Every applied operation has exactly one effect: the store's audit for
	// local effects (and integrity_check), the provider for external ones.
	if problems, err := l.Store().Audit(ctx); err != nil || len(problems) > 0 {
		t.Errorf("audit: %v %v", problems, err)
	}
	if n, _ := l.Service().EffectCount(ctx, "create_support_task", ""); n != demoTasks {
		t.Errorf("%d tasks, want %d", n, demoTasks)
	}
	if n, _ := l.Service().EffectCount(ctx, "create_report_job", ""); n != demoReportJobs {
		t.Errorf("%d report jobs, want %d", n, demoReportJobs)
	}
	if n, _ := l.Sandbox().Deliveries(ctx, ""); n != demoDeliveries {
		t.Errorf("%d deliveries, want %d", n, demoDeliveries)
	}
	ops, err := l.Store().List(ctx, store.ListQuery{Tool: "send_notification", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		n, err := l.Sandbox().Deliveries(ctx, op.DownstreamKey)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case op.State == model.StateApplied && (n != 1 || op.ProviderRef == ""):
			t.Errorf("applied %s/%s: %d deliveries, ref %q; want exactly one", op.Tenant, op.Key, n, op.ProviderRef)
		case op.State == model.StateInProgress:
			// In flight for the person who opens the console next.
			if n != 0 || time.Until(op.LeaseUntil) < time.Hour {
				t.Errorf("in-flight %s/%s: %d deliveries, lease until %v", op.Tenant, op.Key, n, op.LeaseUntil)
			}
		case op.Contradicted && (op.State != model.StateNotApplied || n != 1):
			t.Errorf("contradicted %s/%s is %s with %d deliveries", op.Tenant, op.Key, op.State, n)
		}
	}
}

// withEveryTool lists every tool, zero where the tenant has none, so a tool
// a tenant must not use is checked as absent too.
func withEveryTool(m map[string]int) map[string]int {
	out := map[string]int{"create_support_task": 0, "create_report_job": 0, "send_notification": 0}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestDemoFreshRefusesToOverwriteWhatIsNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(path, []byte("my precious notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run([]string{"demo", "--fresh", "--no-console", "--db", path}, &out, &errOut); code == 0 {
		t.Fatal("demo --fresh over a text file must fail")
	}
	if b, _ := os.ReadFile(path); string(b) != "my precious notes\n" {
		t.Errorf("the file was changed: %q", b)
	}
}

// The demo builds a fresh ledger: one that holds operations is refused
// before anything is made beside it (no provider file, no worker).
func TestBuildDemoRefusesALedgerWithOperations(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	if _, errText, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("local"))...); code != 0 {
		t.Fatalf("setup call: exit %d: %s", code, errText)
	}
	before := digest(t, db)
	_, err := lab.BuildDemo(context.Background(), db, "", testRunner(t), nil)
	if !model.IsCode(err, model.CodeConflict) || !strings.Contains(err.Error(), "already holds 1 operations") {
		t.Fatalf("BuildDemo: %v; want a conflict", err)
	}
	if _, err := os.Stat(providerPath(db)); !os.IsNotExist(err) {
		t.Errorf("a refused demo created %s", providerPath(db))
	}
	if digest(t, db) != before {
		t.Error("a refused demo changed the ledger")
	}
}

// The demo's background reaches its sandbox provider over HTTP, through a
// `sandbox serve` process over the demo's provider file: the demo sent its
// delivery requests across the socket, and every delivery under a
// background operation's downstream key is in that file, dated on the
// played clock (the server stamped it with the demo's X-Sandbox-Time, not
// its own real time).
func TestDemoBackgroundGoesOverHTTPToSandboxServe(t *testing.T) {
	reexec.Setenv(t, asCLI, nil) // the sandbox server and the workers re-execute this test binary
	path := filepath.Join(t.TempDir(), "demo.db")
	rep, err := lab.BuildDemo(context.Background(), path, "", testRunner(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.HTTPDispatches == 0 {
		t.Fatal("the background sent no delivery request over HTTP")
	}
	open := func(p string) *sql.DB {
		db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	ledger, pdb := open(path), open(providerPath(path))
	rows, err := ledger.Query(`SELECT tenant, op_key, downstream_key FROM operations
		WHERE tenant != ? AND provider IS NOT NULL AND downstream_key IS NOT NULL`, lab.LabTenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	delivered, earliest := 0, rep.To
	for rows.Next() {
		var tenant, key, dk string
		if err := rows.Scan(&tenant, &key, &dk); err != nil {
			t.Fatal(err)
		}
		ats, err := pdb.Query(`SELECT created_at FROM deliveries WHERE downstream_key = ?`, dk)
		if err != nil {
			t.Fatal(err)
		}
		for ats.Next() {
			var ms int64
			if err := ats.Scan(&ms); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(ms)
			if at.Before(rep.From.Add(-time.Second)) || at.After(rep.To) {
				t.Errorf("%s/%s: delivery stamped %s, outside the played background %s–%s", tenant, key, at, rep.From, rep.To)
			}
			if at.Before(earliest) {
				earliest = at
			}
			delivered++
		}
		ats.Close()
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Every delivery came through the server: the demo's own requests,
	// plus the one a worker killed after its dispatch made.
	if delivered == 0 || delivered > rep.HTTPDispatches+1 {
		t.Errorf("%d background deliveries in the provider file, %d delivery requests over HTTP", delivered, rep.HTTPDispatches)
	}
	if rep.To.Sub(earliest) < 5*time.Hour {
		t.Errorf("the earliest background delivery is stamped %s, within %s of the background's end: not on the played clock", earliest, rep.To.Sub(earliest))
	}
	t.Logf("%d background deliveries, %d delivery requests over HTTP, from %s", delivered, rep.HTTPDispatches, earliest)

	// The built-in config's sandbox lookups read the file those requests
	// went to: triage answers every unknown operation the way the README
	// says (5 has it, 1 has nothing), none "cannot tell" because the
	// lookup would ask elsewhere than the claim's request went.
	out, errText, code := cli(t, "triage", "--db", path, "--json", "--read-only")
	var tr triageJSON
	if err := json.Unmarshal([]byte(out), &tr); err != nil || code != exitTriageOK ||
		tr.Totals.HasIt != 5 || tr.Totals.HasNothing != 1 || tr.Totals.CannotTell != 0 || tr.Totals.Errors != 0 {
		t.Fatalf("triage of the demo: exit %d %v %+v %s %s; want 5 has it, 1 has nothing", code, err, tr.Totals, errText, out)
	}
}

// demo --db in a directory that does not exist fails with one line naming
// that directory — not the demo's temporary build file — before it says it
// is building anything.
func TestDemoInAMissingDirectorySaysWhichDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nodir")
	_, errText, code := cli(t, "demo", "--db", filepath.Join(dir, "demo.db"), "--no-console")
	if code != 2 || !strings.Contains(oneErrorLine(t, "missing directory", errText), "directory "+dir+" does not exist") ||
		strings.Contains(errText, ".building-") {
		t.Fatalf("demo in a missing directory: exit %d %q", code, errText)
	}
}

// A ledger of the user's own is neither reused as "the demo ledger" nor
// deleted by --fresh: deleting it forgets every key, and the next call
// under one of them would run its effect again. Tokens alone (no
// operations yet) make a ledger the user's too.
func TestDemoRefusesALedgerOfTheUsersOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, db string)
		want  string
	}{
		{"another tenant", func(t *testing.T, db string) {
			if _, errText, code := cli(t, callArgs(db, "acme", "inv-1", "create_support_task", taskArgs("local"))...); code != 0 {
				t.Fatalf("setup call: exit %d: %s", code, errText)
			}
		}, `tenant "acme"`},
		{"a token", func(t *testing.T, db string) {
			if _, errText, code := cli(t, "tokens", "create", "--db", db, "--tenant", "acme-support"); code != 0 {
				t.Fatalf("setup token: exit %d: %s", code, errText)
			}
		}, "gateway token"},
	} {
		for _, fresh := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fresh=%t", tc.name, fresh), func(t *testing.T) {
				db := filepath.Join(t.TempDir(), "mine.db")
				tc.setup(t, db)
				before := digest(t, db)
				args := []string{"demo", "--no-console", "--db", db}
				if fresh {
					args = append(args, "--fresh")
				}
				_, errText, code := cli(t, args...)
				if code == 0 || !strings.Contains(errText, "is not a demo ledger") || !strings.Contains(errText, tc.want) {
					t.Fatalf("demo on a ledger of the user's own: exit %d, %q", code, errText)
				}
				if digest(t, db) != before {
					t.Error("the refused demo changed the ledger")
				}
				if _, err := os.Stat(providerPath(db)); !os.IsNotExist(err) {
					t.Errorf("the refused demo created %s", providerPath(db))
				}
			})
		}
	}
}
