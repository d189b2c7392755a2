package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// The re-executed test binary's workers (internal/reexec): "child" runs a
// childSpec and exits, so crash tests kill a real process (os.Exit at a
// Point), not a goroutine; "host" runs a hostSpec.
const (
	childWorker = "child"
	hostWorker  = "host"
)

// exitDied is the exit code of a child that stopped at its Point.
const exitDied = 17

func TestMain(m *testing.M) {
	reexec.Main(m, map[string]func(string) int{childWorker: runChild, hostWorker: runHost})
}

// childSpec is what a worker process does.
type childSpec struct {
	Ledger, ProviderDB string
	// Requests are made in order; with Repeat > 0 the first request is made
	// Repeat times (same key), with Distinct > 0 that many new keys are
	// made from it (key + "-" + i).
	Requests []model.Request
	Repeat   int
	Distinct int
	Provider string
	Faults   provider.Faults
	Lease    time.Duration
	// DieAt stops the process for real (os.Exit, no cleanup) at this Point.
	DieAt reconcile.Point
	// FullAt fills the disk at this Point: from then on no file may grow
	// (RLIMIT_FSIZE at the ledger's WAL size), as when a disk fills up.
	FullAt reconcile.Point
	// Now pins the child's clock (Unix ms); 0 is the real clock.
	Now int64
	// StartAt (Unix ms) holds every worker until the same moment, so the
	// processes really contend instead of running one after another.
	StartAt int64
}

// childReport is what a worker prints: one JSON line per result (the
// acknowledgment the caller would have received) and a final summary.
type childReport struct {
	Results []reconcile.Result `json:"results"`
	Errors  []string           `json:"errors"`
}

func runChild(specJSON string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "child spec:", err)
		return 3
	}
	o := store.Options{Create: true}
	if spec.Now != 0 {
		now := time.UnixMilli(spec.Now)
		o.Now = func() time.Time { return now }
	}
	st, err := sqlite.Open(spec.Ledger, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	defer st.Close()
	sb, err := sandbox.Open(spec.ProviderDB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child sandbox:", err)
		return 3
	}
	defer sb.Close()
	svc := reconcile.New(st, config.Default().Tools, sb.Providers())
	if spec.Lease > 0 {
		svc.Lease = spec.Lease
	}
	svc.At = func(p reconcile.Point) {
		if p == spec.DieAt {
			os.Exit(exitDied) // no deferred cleanup, no acknowledgment
		}
		if p == spec.FullAt {
			fillDisk(spec.Ledger + "-wal")
		}
	}
	reqs := spec.Requests
	if spec.Repeat > 0 {
		for i := 1; i < spec.Repeat; i++ {
			reqs = append(reqs, spec.Requests[0])
		}
	}
	if spec.Distinct > 0 {
		base := spec.Requests[0]
		reqs = nil
		for i := 0; i < spec.Distinct; i++ {
			r := base
			r.Key = fmt.Sprintf("%s-%d", base.Key, i)
			reqs = append(reqs, r)
		}
	}
	if spec.StartAt > 0 {
		time.Sleep(time.Until(time.UnixMilli(spec.StartAt)))
	}
	var rep childReport
	for _, r := range reqs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := svc.Call(ctx, r, reconcile.CallOptions{Provider: spec.Provider, Faults: spec.Faults})
		cancel()
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
		res.Op = nil
		rep.Results = append(rep.Results, res)
	}
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return 0
}

// fillDisk makes every file of this process unable to grow past the size
// of file now: SQLite's next write past it fails with EFBIG, as on a full
// disk. SIGXFSZ is ignored so the write fails instead of killing us.
func fillDisk(file string) {
	st, err := os.Stat(file)
	if err != nil {
		panic(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	n := uint64(st.Size())
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		panic(err)
	}
}

// child is a started worker process.
type child struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	c := &child{cmd: reexec.Command(t, childWorker, spec)}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// wait returns the exit code and, if the child finished, its report.
func (c *child) wait(t *testing.T) (int, *childReport) {
	t.Helper()
	err := c.cmd.Wait()
	code := c.cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("child: %v\n%s", err, c.stderr.String())
	}
	if code != 0 {
		return code, nil
	}
	var rep childReport
	if err := json.Unmarshal(bytes.TrimSpace(c.stdout.Bytes()), &rep); err != nil {
		t.Fatalf("child report %q: %v (stderr %s)", c.stdout.String(), err, c.stderr.String())
	}
	return code, &rep
}

func runChildProcess(t *testing.T, spec childSpec) (int, *childReport) {
	t.Helper()
	return startChild(t, spec).wait(t)
}

// clock is the tests' pinned clock (internal/testledger).
type clock = testledger.Clock

func newClock() *clock { return testledger.NewClock(testledger.Start) }

// ledger is one test's ledger file, sandbox provider and service
// (internal/testledger), under the names these tests use.
type ledger struct {
	t         testing.TB
	tl        *testledger.Ledger
	path, pdb string
	st        store.Ledger
	sb        *sandbox.Sandbox
	svc       *reconcile.Service
	clock     *clock // nil: the real clock
}

type ledgerOpt = testledger.Option

func withClock(c *clock) ledgerOpt { return testledger.WithClock(c) }
func fast() ledgerOpt              { return testledger.Fast() }

// These tests run on the real clock unless they pin one (withClock), with
// the provider's file named provider.db.
var ledgerDefaults = []ledgerOpt{testledger.WithNow(time.Now), testledger.ProviderFile("provider.db")}

func newLedger(t testing.TB, opts ...ledgerOpt) *ledger {
	t.Helper()
	return wrap(t, testledger.New(t, append(ledgerDefaults, opts...)...))
}

func wrap(t testing.TB, tl *testledger.Ledger) *ledger {
	l := &ledger{t: t, tl: tl}
	l.sync()
	return l
}

func (l *ledger) sync() {
	l.path, l.pdb, l.clock = l.tl.Path, l.tl.ProviderDB, l.tl.Clock
	l.st, l.sb, l.svc = nil, nil, nil
	if l.tl.Store != nil {
		l.st, l.sb, l.svc = l.tl.Store, l.tl.Sandbox, l.tl.Svc
	}
}

func (l *ledger) open()   { l.tl.Open(); l.sync() }
func (l *ledger) close()  { l.tl.Close(); l.sync() }
func (l *ledger) reopen() { l.tl.Reopen(); l.sync() }

// spec describes a child process on this ledger. A ledger with a pinned
// clock pins the child's to the same instant: on the real clock a child
// that started slowly (a loaded machine) took a lease ending after the
// parent's "lease + 1s", and the sweep found nothing to expire.
func (l *ledger) spec(reqs ...model.Request) childSpec {
	s := childSpec{Ledger: l.path, ProviderDB: l.pdb, Requests: reqs}
	if l.clock != nil {
		s.Now = l.clock.Now().UnixMilli()
	}
	return s
}

func (l *ledger) call(r model.Request, opt reconcile.CallOptions) reconcile.Result {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := l.svc.Call(ctx, r, opt)
	if err != nil && res.Class != model.ClassInvalid {
		l.t.Fatalf("Call(%s/%s): %v", r.Tenant, r.Key, err)
	}
	return res
}

func (l *ledger) snapshot(skip ...string) string {
	l.t.Helper()
	s, err := l.st.Snapshot(context.Background(), skip...)
	if err != nil {
		l.t.Fatal(err)
	}
	return s
}

func (l *ledger) effects(tool string) int {
	l.t.Helper()
	n, err := l.svc.EffectCount(context.Background(), tool, "")
	if err != nil {
		l.t.Fatal(err)
	}
	return n
}

// dk is the downstream key of tenant's key in this ledger.
func (l *ledger) dk(tenant, key string) string {
	l.t.Helper()
	id, err := l.st.LedgerID(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	return reconcile.DownstreamKey(id, tenant, key)
}

func (l *ledger) deliveries(tenant, key string) int {
	l.t.Helper()
	n, err := l.sb.Deliveries(context.Background(), l.dk(tenant, key))
	if err != nil {
		l.t.Fatal(err)
	}
	return n
}

func (l *ledger) detail(tenant, key string) *model.Detail {
	l.t.Helper()
	d, err := l.st.Detail(context.Background(), tenant, key)
	if err != nil {
		l.t.Fatalf("Detail(%s/%s): %v", tenant, key, err)
	}
	return d
}

func (l *ledger) op(tenant, key string) *model.Operation { return &l.detail(tenant, key).Operation }

// audit fails the test on any broken ledger invariant.
func (l *ledger) audit() {
	l.t.Helper()
	problems, err := l.st.Audit(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	for _, p := range problems {
		l.t.Errorf("audit: %s", p)
	}
}

func task(tenant, key, subject string) model.Request {
	return model.Request{Tenant: tenant, Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: mustJSON(map[string]string{"subject": subject}), WorkerID: "test"}
}

func report(key, name string) model.Request {
	return model.Request{Tenant: "lab", Key: key, Tool: "create_report_job", PayloadVersion: 1,
		Args: mustJSON(map[string]string{"report": name}), WorkerID: "test"}
}

func notify(tenant, key, to string) model.Request {
	return model.Request{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
		Args: mustJSON(map[string]string{"to": to, "body": "your delivery is delayed"}), WorkerID: "test"}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// resultID is the effect id a local receipt names (task_id or job_id).
func resultID(t testing.TB, rc *model.Receipt) int64 {
	t.Helper()
	if rc == nil {
		t.Fatal("no receipt")
	}
	var r map[string]any
	if err := json.Unmarshal(rc.Result, &r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"task_id", "job_id"} {
		if v, ok := r[k].(float64); ok {
			return int64(v)
		}
	}
	t.Fatalf("receipt result %s names no effect", rc.Result)
	return 0
}

// crash is the panic value tests use to stop a call in-process at a Point
// (the caller "never hears back"); real process deaths use a child.
type crash struct{ at reconcile.Point }

func (c crash) String() string { return "crash at " + string(c.at) }

// callDying makes a call whose worker stops at point (in-process, by
// panic): like a process death, nothing after that point runs.
func (l *ledger) callDying(r model.Request, opt reconcile.CallOptions, point reconcile.Point) (died bool, res reconcile.Result) {
	l.t.Helper()
	l.svc.At = func(p reconcile.Point) {
		if p == point {
			panic(crash{p})
		}
	}
	defer func() {
		l.svc.At = nil
		if v := recover(); v != nil {
			if _, ok := v.(crash); !ok {
				panic(v)
			}
			died = true
		}
	}()
	return false, l.call(r, opt)
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
}

func storeAll() store.ListQuery { return store.ListQuery{Limit: 10000} }

func storeContradicted() store.ListQuery { return store.ListQuery{Contradicted: true, Limit: 100} }
