// Package lab reproduces, for real, the lost responses and crashes of the
// seeds: worker processes (the retrysafe binary re-executed) that die before
// or after commit, replies lost after the provider applied, and the next
// attempt, with the effects counted before → after.
//
// Every call a scenario makes goes through a worker process, so a "crash"
// is a process that really ended (os.Exit or SIGKILL) with its connection,
// and every retry is a new process with a new connection. The parent only
// reads the ledger, sweeps its own operations, asks the provider and takes
// operator decisions — through the same
// store and reconcile functions the console uses.
package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Scenario is one reproducible case.
type Scenario struct {
	ID          string // stable id, e.g. "before-commit-same-key"
	Name        string // one line for people
	FirstCall   string // what the first call does, e.g. "stops before commit"
	NextAttempt string // e.g. "same key, same report"
	Expected    string // effects before → after and the verdict, e.g. "0 → 1"
	Tool        string // the tool the scenario calls
}

// Step is a progress report while a scenario runs.
type Step struct {
	Scenario string
	Text     string
	// Why narrates the step for an audience (the console's step mode):
	// what is about to happen and why it matters. Empty for bookkeeping.
	Why string
	// Final: the run's last step (its verdict); nothing runs after it.
	Final bool
}

// Row is one scenario's result: the line of the lab's table.
type Row struct {
	Scenario    string   `json:"scenario"`
	Name        string   `json:"name"`
	FirstCall   string   `json:"first_call"`
	NextAttempt string   `json:"next_attempt"`
	Before      int      `json:"effects_before"`
	After       int      `json:"effects_after"`
	Ledger      string   `json:"ledger"`   // what the ledger says, e.g. "applied, 2 attempts"
	Expected    string   `json:"expected"` // e.g. "0 → 1"
	OK          bool     `json:"ok"`
	Tenant      string   `json:"tenant"`
	Keys        []string `json:"keys"` // operations the scenario created, to jump to
	Detail      string   `json:"detail,omitempty"`

	// FirstResult is what the first call observably did: "exit 17 (died
	// before commit)", "killed by SIGKILL after dispatch", "done: created".
	FirstResult string `json:"first_result"`
	// NextResult is what the next attempt(s) returned.
	NextResult string `json:"next_result"`
	// Failures lists every check that did not hold (empty when OK).
	Failures []string `json:"failures,omitempty"`
	// Elapsed is the scenario's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Runner runs scenarios.
type Runner struct {
	// Exe is the binary re-executed as worker processes (os.Executable()).
	Exe string
	// WorkerArgs prefix the worker's arguments (the internal subcommand).
	WorkerArgs []string
	// Env is added to the worker's environment (tests set their re-exec switch).
	Env []string
	// ServeArgs start the sandbox server with Exe; nil means "sandbox serve".
	// The external scenarios reach it over a real socket through the HTTP
	// provider.
	ServeArgs []string
	// Open opens a ledger by path or URL (ledger.OpenConfig through the
	// command line's wiring), so the lab runs on whatever driver the ledger
	// uses without importing one.
	Open OpenFunc
	// NewLedger makes the fresh ledger one scenario of Run runs in and says
	// where it is and how to remove it afterwards; nil means a file
	// dir/ID.db. The command line sets it for a lab on PostgreSQL: a
	// schema of its own per scenario.
	NewLedger func(ctx context.Context, scenarioID string) (where string, remove func(), err error)

	// ProviderDB is the sandbox provider's file; "" means beside the
	// ledger (NAME.provider.db), where every retrysafe command looks.
	ProviderDB string
	// Operator signs the decisions the scenarios take; "" means "lab".
	Operator string
	// Lease is the short lease the scenarios' external calls take, so an
	// abandoned claim expires within the run; 0 means 1s (long enough that a loaded machine still sends the request before the lease ends — the worker never sends past its lease).
	Lease time.Duration
	// WorkerTimeout bounds each worker process; 0 means 30s.
	WorkerTimeout time.Duration
}

// Ledger is an open ledger as the lab uses it; *ledger.Ledger is one.
type Ledger interface {
	// Store is the ledger's store (reads, counts, the tie to the sandbox).
	Store() store.Ledger
	// Service is the rules over the store and the providers opened.
	Service() *reconcile.Service
	// Sandbox is the sandbox providers' file when Config had sandbox
	// providers (nil otherwise).
	Sandbox() *sandbox.Sandbox
	Close() error
}

// OpenOptions say how the lab opens a ledger.
type OpenOptions struct {
	// Config is the registry whose providers are built, ready to dispatch
	// (ledger.Dispatching); nil means the built-in tools and no provider
	// (the ledger is only created or read).
	Config *config.Config
	// ProviderDB is the file of Config's sandbox providers.
	ProviderDB string
	// Store are the store's options.
	Store store.Options
}

// OpenFunc opens the ledger at a path or URL.
type OpenFunc func(ctx context.Context, where string, o OpenOptions) (Ledger, error)

func (r *Runner) open(ctx context.Context, where string, o OpenOptions) (Ledger, error) {
	if r.Open == nil {
		return nil, model.Errorf(model.CodeInvalid, "lab: no way to open a ledger configured")
	}
	return r.Open(ctx, where, o)
}

// ProviderPathFor is where retrysafe keeps the sandbox provider's file
// beside a ledger file (kept in step with ledger.ProviderPath, which the
// lab cannot import: it names a driver). A PostgreSQL ledger has no
// "beside": its runner is given ProviderDB.
func ProviderPathFor(ledger string) string {
	return strings.TrimSuffix(ledger, ".db") + ".provider.db"
}

// LabTenant is the tenant the lab and the demo run scenarios under.
const LabTenant = "lab"

// Scenarios lists every scenario, in the table's order.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Scenario
	}
	return out
}

// tenantLocks serialises scenarios on one tenant inside this process: the
// local-effect counts are the tenant's effect rows before and after, which
// only mean "this scenario's effects" while no other scenario writes there.
var tenantLocks sync.Map // ledger+tenant → *sync.Mutex

// RunIn runs one scenario against an existing ledger (the console's Lab
// screen) under tenant, reporting steps as they happen.
//
// Keys are unique per run (scenario/run-id/name), and effects are counted
// for the scenario's own operations (the provider's deliveries under their
// downstream keys; the tenant's local effect rows, before and after, with
// scenarios on one tenant serialised), so running a scenario again in the
// same ledger shows the same before → after numbers. Scenarios with an
// external effect sweep the run's own operations only
// (reconcile.SweepKeys): other tenants' claims — and the tenant's own under
// other keys — are left as they are, expired or not. Its provider lookups
// are recorded findings (reconcile.CheckAndRecord), as `ops check` records
// them: what the run says it found, `ops show` shows.
//
// The error is for what stops the scenario from running at all (the ledger
// cannot be opened, a worker cannot be started); a check that does not hold
// is a Row with OK false and its Failures.
func (r *Runner) RunIn(ctx context.Context, ledgerPath, tenant, scenarioID string, progress func(Step)) (Row, error) {
	var sc *scenario
	for i := range scenarios {
		if scenarios[i].ID == scenarioID {
			sc = &scenarios[i]
		}
	}
	if sc == nil {
		return Row{}, model.Errorf(model.CodeInvalid, "no lab scenario %q (want one of %s)", scenarioID, strings.Join(ids(), ", "))
	}
	if err := model.ValidateIdentity(tenant, "k"); err != nil {
		return Row{}, err
	}
	if r.Exe == "" {
		return Row{}, model.Errorf(model.CodeInvalid, "lab: no worker binary configured")
	}
	mu, _ := tenantLocks.LoadOrStore(ledgerPath+"\x00"+tenant, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	// The ledger first, without providers: a missing one fails here,
	// before a provider file or a server is made beside it.
	pre, err := r.open(ctx, ledgerPath, OpenOptions{})
	if err != nil {
		return Row{}, err
	}
	pdb := r.ProviderDB
	if pdb == "" {
		pdb = ProviderPathFor(ledgerPath)
	}
	pre.Close()
	// The file is this ledger's provider file, tied and recorded as every
	// command that dispatches does it (the opener with the built-in
	// config's sandbox providers): the server started over it below takes
	// the scenario's deliveries, and an operator's lookups on the ledger
	// afterwards trust it. A refusal (a file that never served a ledger
	// with history, one missing beside it) is the product's.
	tied, err := r.open(ctx, ledgerPath, OpenOptions{Config: config.Default(), ProviderDB: pdb})
	if err != nil {
		return Row{}, err
	}
	defer tied.Close()
	sb := tied.Sandbox()
	if sb == nil {
		return Row{}, model.Errorf(model.CodeInternal, "lab: the built-in registry opened no sandbox provider")
	}
	if progress == nil {
		progress = func(Step) {}
	}
	// The provider is a server in a process of its own, over the same
	// provider file; the workers and this run reach it through the HTTP
	// provider (the ledger is opened again with the server's config). sb
	// only counts the deliveries it holds.
	srv, err := r.startSandboxServer(ctx, pdb)
	if err != nil {
		return Row{}, err
	}
	defer srv.stop()
	l, err := r.open(ctx, ledgerPath, OpenOptions{Config: srv.cfg, ProviderDB: pdb})
	if err != nil {
		return Row{}, err
	}
	defer l.Close()
	x := &run{
		spawner: spawner{r: r, ctx: ctx, ledger: ledgerPath, providerDB: pdb, config: srv.config, tenant: tenant}, sc: sc, id: runID(),
		st: l.Store(), sb: sb, svc: l.Service(), progress: progress,
	}
	start := time.Now()
	row := Row{Scenario: sc.ID, Name: sc.Name, FirstCall: sc.FirstCall, NextAttempt: sc.NextAttempt,
		Expected: sc.Expected, Tenant: tenant}
	if x.baseline, err = x.localEffects(); err != nil {
		return row, err
	}
	if err := sc.run(x, &row); err != nil {
		row.Keys = x.keys
		return row, err
	}
	row.Keys, row.Failures, row.Elapsed = x.keys, x.failures, time.Since(start)
	row.OK = len(x.failures) == 0
	if !row.OK {
		row.Detail = strings.Join(x.failures, "; ")
	}
	x.progress(Step{Scenario: sc.ID, Final: true,
		Text: fmt.Sprintf("done: %d → %d, %s", row.Before, row.After, map[bool]string{true: "ok", false: "FAILED"}[row.OK])})
	return row, nil
}

func ids() []string {
	var out []string
	for _, s := range scenarios {
		out = append(out, s.ID)
	}
	return out
}

// runID tells runs apart inside one tenant: six hex digits are plenty for
// the handful of runs a person makes, and the key stays short to read.
func runID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run runs every scenario, each in a fresh ledger of its own under dir
// (dir/ID.db and dir/ID.provider.db), and returns the table's rows in
// order. A scenario that could not run at all is a failed row saying why,
// so one broken scenario never hides the others; the error is only for a
// ledger that cannot be made.
func (r *Runner) Run(ctx context.Context, dir string, progress func(Step)) ([]Row, error) {
	rows := make([]Row, len(scenarios))
	errs := make([]error, len(scenarios))
	// Two at a time: the scenarios are mostly waiting on worker processes
	// and leases, and each has its own files, so they overlap well on two
	// cores without the workers starving one another.
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	var pmu sync.Mutex
	report := func(s Step) {
		if progress != nil {
			pmu.Lock()
			progress(s)
			pmu.Unlock()
		}
	}
	for i, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			path := filepath.Join(dir, sc.ID+".db")
			pdb := ProviderPathFor(path)
			if r.NewLedger != nil {
				where, remove, err := r.NewLedger(ctx, sc.ID)
				if err != nil {
					errs[i] = err
					return
				}
				defer remove()
				path = where
			}
			l, err := r.open(ctx, path, OpenOptions{Store: store.Options{Create: true}})
			if err != nil {
				errs[i] = err
				return
			}
			l.Close()
			rr := *r
			rr.ProviderDB = pdb
			row, err := rr.RunIn(ctx, path, LabTenant, sc.ID, report)
			if err != nil {
				row.Scenario, row.Name, row.FirstCall, row.NextAttempt, row.Expected, row.Tenant =
					sc.ID, sc.Name, sc.FirstCall, sc.NextAttempt, sc.Expected, LabTenant
				row.OK, row.Failures = false, append(row.Failures, "could not run: "+err.Error())
				row.Detail = strings.Join(row.Failures, "; ")
			}
			rows[i] = row
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return rows, fmt.Errorf("lab scenario %s: %w", scenarios[i].ID, err)
		}
	}
	return rows, nil
}
