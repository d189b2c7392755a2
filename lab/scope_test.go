package lab_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/cli"
	"github.com/retrysafe/retrysafe/internal/labledger"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// These tests run the scenarios with real workers: this test binary
// re-executed as the retrysafe command line (the lab's own tests cannot
// import it; these, outside the package, can).
func init() {
	lab.CLIWorker = func(args []string) int { return cli.Run(args, os.Stdout, os.Stderr) }
}

func realRunner(t *testing.T) *lab.Runner {
	t.Helper()
	return &lab.Runner{Exe: reexec.Executable(t), WorkerArgs: []string{"__worker"}, Open: labledger.Open,
		Env: reexec.Env("cli", nil), Operator: "lab-test"}
}

// claimed leaves tenant/key in_progress with a lease that has long ended
// (the ledger's clock is months behind real time): what a sweep settles.
func claimed(t *testing.T, l *testledger.Ledger, tenant, key string) {
	t.Helper()
	p, err := config.Default().Tools.Prepare(model.Request{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":"ops@globex.example","body":"invoice run"}`), WorkerID: "worker-9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Store.WithTx(context.Background(), func(tx store.Tx) error {
		_, err := l.Svc.ClaimTx(tx, p, "", time.Hour, l.Clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// The console runs scenarios in the ledger it has open, which holds other
// people's operations: a run writes under its tenant and touches nothing
// else. Its sweep used to be the whole ledger's — another tenant's
// in-flight claims (and the lab tenant's own from before) became unknown,
// with lease_expired attempts by "sweep".
func TestALabRunLeavesOtherOperationsInFlightAlone(t *testing.T) {
	l := testledger.New(t)
	claimed(t, l, "globex-billing", "op_01JGT6RFJXR27VM")
	claimed(t, l, lab.LabTenant, "someone-elses-key")
	r := realRunner(t)
	for _, id := range []string{"external-unknown-mark-applied", "authorize-new-key"} {
		row, err := r.RunIn(context.Background(), l.Path, lab.LabTenant, id, nil)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !row.OK {
			t.Errorf("%s: did not hold: %s", id, strings.Join(row.Failures, "; "))
		}
	}
	for _, k := range [][2]string{{"globex-billing", "op_01JGT6RFJXR27VM"}, {lab.LabTenant, "someone-elses-key"}} {
		d, err := l.Store.Detail(context.Background(), k[0], k[1])
		if err != nil {
			t.Fatal(err)
		}
		if d.Operation.State != model.StateInProgress || len(d.Attempts) != 1 {
			t.Errorf("%s/%s is %s with %d attempts (%s); the lab must leave it in_progress with its one claim",
				k[0], k[1], d.Operation.State, len(d.Attempts), outcomesOf(d.Attempts))
		}
	}
}

func outcomesOf(as []model.Attempt) string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.Outcome)+" by "+a.WorkerID)
	}
	return strings.Join(out, ", ")
}

// goStruct is Go's %v of a struct or pointer, which no person should read.
var goStruct = regexp.MustCompile(`&\{|<nil>|\{[A-Z][A-Za-z]*:`)

// rowText is everything a row shows: the console's lines and the table's.
func rowText(r lab.Row, steps []lab.Step) string {
	parts := []string{r.Ledger, r.FirstResult, r.NextResult, r.Detail}
	parts = append(parts, r.Failures...)
	for _, s := range steps {
		parts = append(parts, s.Text, s.Why)
	}
	return strings.Join(parts, "\n")
}

// The reviewer's run: step mode held the scenario before its first retry
// while someone in another shell marked op-a not applied; the retry then
// sent the notification again, and the lab's own decision was refused as
// stale. Its summary used to read "refused: done, exit 0; lookup found …;
// marked applied; retry: done" against ✗ lines saying otherwise, one of
// them a Go struct (&{Status:replayed … Result:[123 34 …]}). Each part of
// the summary now comes from the check its ✗ line comes from.
func TestALabRunsSummarySaysWhatItsChecksSay(t *testing.T) {
	path := testledger.File(t, "l.db")
	ctx := context.Background()
	var steps []lab.Step
	var interfered bool
	row, err := realRunner(t).RunIn(ctx, path, lab.LabTenant, "external-unknown-mark-applied", func(s lab.Step) {
		steps = append(steps, s)
		if s.Text != "retry, same key" || interfered {
			return
		}
		interfered = true
		other, err := ledger.OpenConfig(ctx, path, config.Default(), ledger.ConfigOptions{Use: ledger.NoProviders})
		if err != nil {
			t.Error(err)
			return
		}
		defer other.Close()
		ops, err := other.Store().List(ctx, store.ListQuery{Tenant: lab.LabTenant, State: model.StateUnknown})
		if err != nil || len(ops) != 1 {
			t.Errorf("want the lab's one unknown operation, got %d: %v", len(ops), err)
			return
		}
		if _, err := other.Service().MarkNotApplied(ctx, reconcile.Decision{Tenant: lab.LabTenant, Key: ops[0].Key,
			Operator: "someone-else", Reason: "another shell", Evidence: "ticket OPS-1: the provider's console shows nothing", ExpectState: model.StateUnknown, ExpectVersion: ops[0].Version}); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !interfered {
		t.Fatal("the run never reached its first retry")
	}
	if row.OK {
		t.Fatalf("the run held although its op-a was decided under it: %+v", row)
	}
	failures := strings.Join(row.Failures, "\n")
	for _, want := range []string{"mark applied refused", "changed since you looked"} {
		if !strings.Contains(failures, want) {
			t.Errorf("the failures do not say the decision was refused (%q):\n%s", want, failures)
		}
	}
	sum := row.NextResult
	t.Logf("summary: %s", sum)
	if !strings.Contains(sum, "✗") {
		t.Errorf("the summary shows no failed step: %s", sum)
	}
	for _, lie := range []string{"refused: done", "; marked applied", "retry: done"} {
		if strings.Contains(sum, lie) {
			t.Errorf("the summary says %q, which its checks contradict: %s", lie, sum)
		}
	}
	if !regexp.MustCompile(`✗ mark applied refused`).MatchString(sum) {
		t.Errorf("the summary does not say the decision was refused: %s", sum)
	}
	if s := rowText(row, steps); goStruct.MatchString(s) {
		t.Errorf("Go formatting reaches the screen: %q", goStruct.FindAllString(s, -1))
	}
	// What the lab says it found, the ledger says too: its lookup is a
	// recorded finding, as `ops check` records one.
	checkLookupRecorded(t, path, row)
}

// checkLookupRecorded: the row's "lookup found REF" is op-a's recorded
// finding (ops show: has it · REF), by the lab.
func checkLookupRecorded(t *testing.T, path string, row lab.Row) {
	t.Helper()
	m := regexp.MustCompile(`lookup found (\S+?)[;, ]`).FindStringSubmatch(row.NextResult + " ")
	if m == nil {
		t.Fatalf("the summary names no lookup: %s", row.NextResult)
	}
	st, err := ledger.OpenStore(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Detail(context.Background(), lab.LabTenant, row.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	f := d.Operation.Finding
	if f == nil || f.Kind != model.FindingHasIt || f.Ref != m[1] || !strings.HasPrefix(f.By, "lab") {
		t.Errorf("the lab says its lookup found %s; the ledger's finding is %+v (%s)", m[1], f, outcomesOf(d.Attempts))
	}
}

// Without interference the run holds, and its lookup is recorded all the
// same.
func TestALabRunsLookupIsARecordedFinding(t *testing.T) {
	path := testledger.File(t, "l.db")
	var steps []lab.Step
	row, err := realRunner(t).RunIn(context.Background(), path, lab.LabTenant, "external-unknown-mark-applied", func(s lab.Step) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !row.OK || strings.Contains(row.NextResult, "✗") {
		t.Fatalf("did not hold: %s / %s", strings.Join(row.Failures, "; "), row.NextResult)
	}
	if s := rowText(row, steps); goStruct.MatchString(s) {
		t.Errorf("Go formatting reaches the screen: %q", goStruct.FindAllString(s, -1))
	}
	checkLookupRecorded(t, path, row)
}

// The step narration says where the worker dies: authorize-new-key's
// worker dies after its claim, before it sends anything, and the story
// must not say it sent the notification (the next step counts 0
// deliveries).
func TestTheNarrationOfAWorkerKilledAfterItsClaimSaysNothingWasSent(t *testing.T) {
	path := testledger.File(t, "l.db")
	var steps []lab.Step
	row, err := realRunner(t).RunIn(context.Background(), path, lab.LabTenant, "authorize-new-key", func(s lab.Step) { steps = append(steps, s) })
	if err != nil || !row.OK {
		t.Fatalf("run: %v %v", err, row.Failures)
	}
	var told bool
	for _, s := range steps {
		if strings.Contains(s.Text, "the worker is killed") {
			told = true
			if strings.Contains(s.Why, "sends the notification") || !strings.Contains(s.Why, "before it sends anything") {
				t.Errorf("the kill step's story %q; want one that says nothing was sent", s.Why)
			}
		}
	}
	if !told {
		t.Fatalf("no step says the worker is killed: %+v", steps)
	}
}
