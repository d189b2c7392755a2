package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// benchReport is what `retrysafe bench` prints; --json is stable for
// scripts and the README's numbers.
type benchReport struct {
	Ledger     string  `json:"ledger"`
	Mix        string  `json:"mix"`
	Workers    int     `json:"workers"`
	Ops        int     `json:"ops"`
	Durability string  `json:"durability"`
	Tool       string  `json:"tool"`
	args       string  // the arguments' template
	Seconds    float64 `json:"seconds"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	// Baseline is the bare database doing a new call's writes (on SQLite
	// the same file system, durability and workers; on PostgreSQL bare
	// pgx), one transaction each, the same number as the calls, same run:
	// the goals' yardstick.
	Baseline *benchBaseline `json:"baseline,omitempty"`
	// Floor is, on SQLite, bare single-row write transactions timed in the
	// same rounds: the cost of a durable commit with almost nothing in it,
	// shown beside the goal's yardstick. FloorRatio (over all rounds),
	// FloorMedianRatio, FloorRatioMin and FloorRatioMax are the call
	// path's rate against it.
	Floor            *benchBaseline `json:"floor,omitempty"`
	FloorRatio       float64        `json:"floor_ratio,omitempty"`
	FloorMedianRatio float64        `json:"floor_median_ratio,omitempty"`
	FloorRatioMin    float64        `json:"floor_ratio_min,omitempty"`
	FloorRatioMax    float64        `json:"floor_ratio_max,omitempty"`
	// Ratio is OpsPerSec / Baseline.TxPerSec (over all rounds).
	Ratio float64 `json:"ratio,omitempty"`
	// Rounds are the interleaved rounds (with a baseline): bare and call
	// path alternately, each timing its share of the ops, so the two halves
	// of each ratio ran a moment apart under the same load. MedianRatio,
	// RatioMin and RatioMax summarise the rounds' ratios.
	Rounds      []benchRound `json:"rounds,omitempty"`
	MedianRatio float64      `json:"median_ratio,omitempty"`
	RatioMin    float64      `json:"ratio_min,omitempty"`
	RatioMax    float64      `json:"ratio_max,omitempty"`
	// CPUMicrosPerCall is this process's CPU time (user + system) while the
	// calls ran, per call: in process it is the whole call path's cost, the
	// bench's own workers included (the bare rounds are not counted); over
	// HTTP it is the load generator's.
	CPUMicrosPerCall float64 `json:"cpu_us_per_call,omitempty"`
	// CallersPerCommit is the mean group-commit batch over the timed calls
	// (in process, on SQLite): how many calls shared each commit's fsync.
	CallersPerCommit float64       `json:"callers_per_commit,omitempty"`
	cpu              time.Duration // CPU time of the timed calls
}

// benchRound is one interleaved round: Ops calls and as many bare
// transactions, one right after the other (the order alternates).
type benchRound struct {
	Ops       int     `json:"ops"`
	OpsPerSec float64 `json:"ops_per_sec"`
	TxPerSec  float64 `json:"tx_per_sec"`
	Ratio     float64 `json:"ratio"`
	// FloorTxPerSec and FloorRatio: the round's single-row transactions.
	FloorTxPerSec float64 `json:"floor_tx_per_sec,omitempty"`
	FloorRatio    float64 `json:"floor_ratio,omitempty"`
}

// benchRun times the calls numbered from..to-1 (their latencies into the
// run's slice) and returns the wall time they took.
type benchRun func(from, to int) (time.Duration, error)

// benchBare times n bare transactions: wall time and sorted latencies.
type benchBare func(round, n int) (time.Duration, []time.Duration, error)

// runRounds splits rep.Ops into rounds; in each it times the bare
// transactions and the calls one after the other, bare first in even
// rounds and last in odd ones, so a load that swings during the run hits
// both halves alike; floor (optional) is timed between them. Without bare
// it is one round of the calls.
func (rep *benchReport) runRounds(rounds int, run benchRun, bare, floor benchBare, lat []time.Duration, errs *atomic.Int64, firstErr *atomic.Value) error {
	if bare == nil || rounds < 1 {
		rounds = 1
	}
	if bare == nil {
		floor = nil
	}
	rounds = min(rounds, rep.Ops)
	var callTime, bareTime, floorTime time.Duration
	var bareLat, floorLat []time.Duration
	for r := 0; r < rounds; r++ {
		from, to := rep.Ops*r/rounds, rep.Ops*(r+1)/rounds
		var ce, be, fe time.Duration
		doCalls := func() (err error) {
			c0 := processCPU()
			ce, err = run(from, to)
			rep.cpu += processCPU() - c0
			return err
		}
		doBare := func() error {
			if bare == nil {
				return nil
			}
			d, l, err := bare(r, to-from)
			be, bareLat = d, append(bareLat, l...)
			return err
		}
		doFloor := func() error {
			if floor == nil {
				return nil
			}
			d, l, err := floor(r, to-from)
			fe, floorLat = d, append(floorLat, l...)
			return err
		}
		steps := []func() error{doBare, doFloor, doCalls}
		if r%2 == 1 {
			steps = []func() error{doCalls, doFloor, doBare}
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		callTime, bareTime, floorTime = callTime+ce, bareTime+be, floorTime+fe
		if bare != nil {
			n := to - from
			rd := benchRound{Ops: n, OpsPerSec: float64(n) / ce.Seconds(), TxPerSec: float64(n) / be.Seconds()}
			rd.Ratio = rd.OpsPerSec / rd.TxPerSec
			if floor != nil {
				rd.FloorTxPerSec = float64(n) / fe.Seconds()
				rd.FloorRatio = rd.OpsPerSec / rd.FloorTxPerSec
			}
			rep.Rounds = append(rep.Rounds, rd)
		}
	}
	rep.finish(callTime, lat, errs, firstErr)
	if rep.cpu > 0 {
		rep.CPUMicrosPerCall = float64(rep.cpu.Microseconds()) / float64(rep.Ops)
	}
	if bare == nil {
		return nil
	}
	rep.Baseline = newBenchBaseline(bareLat, bareTime)
	rep.Ratio = rep.OpsPerSec / rep.Baseline.TxPerSec
	rep.MedianRatio, rep.RatioMin, rep.RatioMax = medianSpread(rep.Rounds, func(rd benchRound) float64 { return rd.Ratio })
	if floor != nil {
		rep.Floor = newBenchBaseline(floorLat, floorTime)
		rep.FloorRatio = rep.OpsPerSec / rep.Floor.TxPerSec
		rep.FloorMedianRatio, rep.FloorRatioMin, rep.FloorRatioMax = medianSpread(rep.Rounds, func(rd benchRound) float64 { return rd.FloorRatio })
	}
	return nil
}

// newBenchBaseline is a baseline's rate and percentiles from its
// transactions' latencies (sorted here) and their total wall time.
func newBenchBaseline(lat []time.Duration, elapsed time.Duration) *benchBaseline {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return &benchBaseline{Transactions: len(lat), TxPerSec: float64(len(lat)) / elapsed.Seconds(),
		P50Ms: ms(sqlite.Percentile(lat, 0.50)), P99Ms: ms(sqlite.Percentile(lat, 0.99))}
}

// medianSpread is the median, least and greatest of one ratio of every
// round (at least one round).
func medianSpread(rounds []benchRound, ratio func(benchRound) float64) (median, least, most float64) {
	ratios := make([]float64, len(rounds))
	for i, rd := range rounds {
		ratios[i] = ratio(rd)
	}
	sort.Float64s(ratios)
	n := len(ratios)
	if n%2 == 1 {
		median = ratios[n/2]
	} else {
		median = (ratios[n/2-1] + ratios[n/2]) / 2
	}
	return median, ratios[0], ratios[n-1]
}

// printRatios is the human report's rounds and their median.
func (rep *benchReport) printRatios(w io.Writer, bare string) {
	if rep.Errors > 0 {
		// A failed call is quick and writes nothing: its rate is not the
		// call path's, and a ratio of it would read as one.
		fmt.Fprintf(w, "  ratio        none: %d of %d calls failed, so the rate above is not the call path's (first error below)\n", rep.Errors, rep.Ops)
		return
	}
	for i, rd := range rep.Rounds {
		fmt.Fprintf(w, "  round %-2d     %9.0f calls/s  %9.0f tx/s  %.2f×", i+1, rd.OpsPerSec, rd.TxPerSec, rd.Ratio)
		if rep.Floor != nil {
			fmt.Fprintf(w, "   single-row %6.0f tx/s  %.2f×", rd.FloorTxPerSec, rd.FloorRatio)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  ratio        %.2f× %s (median of %d interleaved rounds; %.2f–%.2f×; over all rounds %.2f×)\n",
		rep.MedianRatio, bare, len(rep.Rounds), rep.RatioMin, rep.RatioMax, rep.Ratio)
	if rep.Floor != nil {
		fmt.Fprintf(w, "  single-row   %.2f× bare single-row SQLite commits (median of the same rounds; %.2f–%.2f×; over all rounds %.2f×)\n",
			rep.FloorMedianRatio, rep.FloorRatioMin, rep.FloorRatioMax, rep.FloorRatio)
	}
}

// printFloor is the human report's line of the single-row floor.
func (rep *benchReport) printFloor(w io.Writer) {
	if rep.Floor != nil {
		fmt.Fprintf(w, "  bare 1 row   %9.0f tx/s     p50 %6.2f ms  p99 %6.2f ms  (%d single-row write transactions)\n",
			rep.Floor.TxPerSec, rep.Floor.P50Ms, rep.Floor.P99Ms, rep.Floor.Transactions)
	}
}

type benchBaseline struct {
	Transactions int     `json:"transactions"`
	TxPerSec     float64 `json:"tx_per_sec"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench", stderr)
	db := fs.String("db", "", "the bench's ledger: a new file, or a postgres:// URL of an empty schema (required; --fresh replaces one)")
	workers := fs.Int("workers", 8, "concurrent callers (goroutines sharing one ledger, as workers of one process)")
	ops := fs.Int("ops", 5000, "calls to time")
	mix := fs.String("mix", "new", "new (every call a new key), replay (every call repeats a stored key) or conflict (stored key, changed arguments)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fresh := fs.Bool("fresh", false, "delete FILE (and its -wal, -shm and provider file) first")
	durability := fs.String("durability", "durable", "durable (synchronous=FULL, what calls rely on) or fast (synchronous=OFF, throw-away ledgers only)")
	baseline := fs.Bool("baseline", true, "also time the bare database for the ratio: transactions of a new call's writes, one each (SQLite: same durability and directory, and single-row transactions beside them; PostgreSQL: bare pgx)")
	rounds := fs.Int("rounds", 6, "with the baseline: interleave it with the calls in this many rounds (each a share of --ops, bare and calls back to back) and report each round's ratio and their median")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed calls to FILE (go tool pprof)")
	httpURL := fs.String("http", "", "drive a running gateway (retrysafe serve) at URL over HTTP instead of an in-process ledger; --db is then not used")
	token := fs.String("token", os.Getenv("RETRYSAFE_TOKEN"), "with --http: the bearer token (default $RETRYSAFE_TOKEN)")
	baselineDir := fs.String("baseline-dir", ".", "with --http: where the bare SQLite baseline writes its file (put it on the gateway ledger's file system)")
	cfgPath := configFlag(fs)
	tool := fs.String("tool", "create_support_task", "tool to call (from --config)")
	argsTmpl := fs.String("args", "", `arguments of each call, {i} replaced by the call's number (default for create_support_task: {"subject":"delayed delivery #{i}"})`)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	longRunGC()
	if *httpURL != "" {
		return runBenchHTTP(ctx, *httpURL, *token, *baselineDir, *workers, *ops, *rounds, *mix, *asJSON, *baseline, stdout, stderr)
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	if *argsTmpl == "" {
		if *tool != "create_support_task" {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--args is required for --tool %s (a JSON object; {i} is replaced by the call's number)", *tool))
		}
		*argsTmpl = defaultBenchArgs
	}
	if _, err := cfg.Tools.Prepare(model.Request{Tenant: "t", Key: "k", Tool: *tool, Args: benchArgs(*argsTmpl, 0, false)}); err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--tool/--args: %v", err))
	}
	var d store.Durability
	switch *durability {
	case "durable":
		d = store.Durable
	case "fast":
		d = store.Fast
	default:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--durability must be durable or fast"))
	}
	switch {
	case *db == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--db is required: the bench writes thousands of rows, give it a file of its own"))
	case *workers < 1 || *workers > 1024:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--workers must be between 1 and 1024"))
	case *ops < 1 || *ops > 10_000_000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--ops must be between 1 and 10000000"))
	case *mix != "new" && *mix != "replay" && *mix != "conflict":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--mix must be new, replay or conflict"))
	case *rounds < 1 || *rounds > 1000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--rounds must be between 1 and 1000"))
	}
	pdb := providerPath(*db)
	isPG := postgres.IsURL(*db)
	if isPG && postgres.SchemaOf(*db) == "public" {
		return fail(stderr, model.Errorf(model.CodeInvalid, "bench --db URL needs a schema of its own: add search_path=NAME to the URL"))
	}
	if isPG {
		if *fresh {
			if err := postgres.DropSchema(ctx, *db); err != nil {
				return fail(stderr, err)
			}
			if err := os.Remove(pdb); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(stderr, model.Wrap(model.CodeUnavailable, err, "--fresh: %v", err))
			}
		} else if st, err := ledger.OpenStore(*db, store.Options{ReadOnly: true}); err == nil {
			st.Close()
			return fail(stderr, model.Errorf(model.CodeInvalid, "%s holds a ledger; the bench wants a new one (add --fresh to replace it)", postgres.Redact(*db)))
		}
	} else if *fresh {
		for _, p := range []string{*db, pdb} {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Remove(p + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fail(stderr, model.Wrap(model.CodeUnavailable, err, "--fresh: %v", err))
				}
			}
		}
	} else if _, err := os.Stat(*db); err == nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "%s exists; the bench wants a new ledger (add --fresh to replace it)", *db))
	}
	l, err := openLedger(context.Background(), *db, cfg, opening{providerDB: pdb, store: store.Options{Create: true, Durability: d}, use: ledger.Dispatching})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()

	rep := benchReport{Ledger: l.Store().Path(), Mix: *mix, Workers: *workers, Ops: *ops, Durability: *durability, Tool: *tool, args: *argsTmpl}
	var bare, floor benchBare
	if *baseline && isPG {
		b, err := postgres.NewBaseliner(ctx, *db, *workers, d)
		if err != nil {
			return fail(stderr, err)
		}
		defer b.Close()
		bare = func(_, n int) (time.Duration, []time.Duration, error) {
			r, err := b.Run(ctx, n)
			return r.Elapsed, r.Latencies, err
		}
	} else if *baseline {
		path := filepath.Join(filepath.Dir(*db), "."+filepath.Base(*db)+".baseline-"+strconv.Itoa(os.Getpid()))
		bare, floor = sqliteBares(ctx, path, *workers, d)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail(stderr, model.Wrap(model.CodeUnavailable, err, "--cpuprofile: %v", err))
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(stderr, model.Wrap(model.CodeInternal, err, "--cpuprofile: %v", err))
		}
		defer pprof.StopCPUProfile()
	}
	if err := benchCalls(ctx, l.Service(), &rep, *rounds, bare, floor); err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
	} else {
		level := map[store.Durability]string{store.Durable: "synchronous=FULL", store.Fast: "synchronous=OFF"}[d]
		bare, bareWhat := "bare SQLite", "transactions of a new call's four writes, same durability and directory"
		if isPG {
			level = map[store.Durability]string{store.Durable: "synchronous_commit=on", store.Fast: "synchronous_commit=off"}[d]
			bare, bareWhat = "bare pgx", "transactions of a new call's four writes, same durability and pool size"
		}
		fmt.Fprintf(stdout, "bench: %d %s calls of %s, %d workers, %s (%s), ledger %s\n",
			rep.Ops, rep.Mix, rep.Tool, rep.Workers, rep.Durability, level, rep.Ledger)
		fmt.Fprintf(stdout, "  call path    %9.0f calls/s  p50 %6.2f ms  p99 %6.2f ms  errors %d\n", rep.OpsPerSec, rep.P50Ms, rep.P99Ms, rep.Errors)
		fmt.Fprintf(stdout, "  call path CPU  %6.1f µs/call (this process, user+system)", rep.CPUMicrosPerCall)
		if rep.CallersPerCommit > 0 {
			fmt.Fprintf(stdout, "; %.1f callers per commit", rep.CallersPerCommit)
		}
		fmt.Fprintln(stdout)
		if rep.Baseline != nil {
			fmt.Fprintf(stdout, "  %-11s  %9.0f tx/s     p50 %6.2f ms  p99 %6.2f ms  (%d %s)\n",
				bare, rep.Baseline.TxPerSec, rep.Baseline.P50Ms, rep.Baseline.P99Ms, rep.Baseline.Transactions, bareWhat)
			rep.printFloor(stdout)
			rep.printRatios(stdout, bare)
		}
		if rep.FirstError != "" {
			fmt.Fprintf(stdout, "  first error: %s\n", rep.FirstError)
		}
	}
	if rep.Errors > 0 {
		return exitInternal
	}
	return exitOK
}

// benchCalls drives the real call path (reconcile.Service.Call, the code
// `retrysafe call` runs) from rep.Workers goroutines and fills in the rate,
// the latency percentiles and the errors. An error is any call that did not
// end as the mix expects: new → created, replay → replayed, conflict →
// conflict.
func benchCalls(ctx context.Context, svc *reconcile.Service, rep *benchReport, rounds int, bare, floor benchBare) error {
	tool := rep.Tool
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	// Replay and conflict need stored keys: a pool the calls cycle through,
	// made before the clock starts.
	pool := min(rep.Ops, 1000)
	if rep.Mix != "new" {
		for i := 0; i < pool; i++ {
			req := model.Request{Tenant: benchTenant(i), Key: fmt.Sprintf("bench-%s-%d", run, i), Tool: tool,
				PayloadVersion: 1, Args: benchArgs(rep.args, i, false), WorkerID: "bench-setup"}
			if res, err := svc.Call(ctx, req, reconcile.CallOptions{}); err != nil || res.Outcome != model.OutcomeCreated {
				return model.Errorf(model.CodeInternal, "bench setup: key %s: %v %s", req.Key, err, res.Message)
			}
		}
	}
	// The group commit's batches, from here on (the pool's setup calls
	// commit one by one).
	var commits, callers atomic.Int64
	if bo, ok := svc.Store.(interface{ ObserveBatches(func(size int)) }); ok {
		bo.ObserveBatches(func(n int) { commits.Add(1); callers.Add(int64(n)) })
		defer func() {
			if n := commits.Load(); n > 0 {
				rep.CallersPerCommit = float64(callers.Load()) / float64(n)
			}
		}()
	}
	want := map[string]model.Outcome{"new": model.OutcomeCreated, "replay": model.OutcomeReplayed, "conflict": model.OutcomeConflict}[rep.Mix]
	lat := make([]time.Duration, rep.Ops)
	var (
		errs     atomic.Int64
		firstErr atomic.Value
	)
	workers := make([]string, rep.Workers)
	for w := range workers {
		workers[w] = "bench-" + strconv.Itoa(w)
	}
	timed := func(from, to int) (time.Duration, error) {
		return timeWorkers(ctx, rep.Workers, from, to, func(w, i int) {
			req := model.Request{Tool: tool, PayloadVersion: 1, WorkerID: workers[w], TraceID: "call-" + strconv.Itoa(i)}
			if rep.Mix == "new" {
				req.Tenant, req.Key, req.Args = benchTenant(i), fmt.Sprintf("bench-%s-new-%d", run, i), benchArgs(rep.args, i, false)
			} else {
				j := i % pool
				req.Tenant, req.Key, req.Args = benchTenant(j), fmt.Sprintf("bench-%s-%d", run, j), benchArgs(rep.args, j, rep.Mix == "conflict")
			}
			t0 := time.Now()
			res, err := svc.Call(ctx, req, reconcile.CallOptions{})
			lat[i] = time.Since(t0)
			if err != nil || res.Outcome != want {
				errs.Add(1)
				msg := res.Message
				if err != nil {
					msg = err.Error()
				}
				firstErr.CompareAndSwap(nil, fmt.Sprintf("%s: %s %s", req.Key, res.Class, msg))
			}
		})
	}
	return rep.runRounds(rounds, timed, bare, floor, lat, &errs, &firstErr)
}

// timeWorkers runs do for every i in from..to-1 on workers goroutines (each
// claims the next i; do gets its worker's number) and returns the wall
// time they took, or the interruption when ctx ended first.
func timeWorkers(ctx context.Context, workers, from, to int, do func(w, i int)) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	next.Store(int64(from))
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= to || ctx.Err() != nil {
					return
				}
				do(w, i)
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return 0, model.Wrap(model.CodeInternal, err, "bench interrupted: %v", err)
	}
	return elapsed, nil
}

// sqliteBare is a bare SQLite baseline as rounds: each a new file next to
// path (removed after it), same durability and workers, each transaction
// doing writes.
func sqliteBare(ctx context.Context, path string, workers int, d store.Durability, writes sqlite.BareWrites) benchBare {
	return func(round, n int) (time.Duration, []time.Duration, error) {
		b, err := sqlite.Baseline(ctx, path+"-"+strconv.Itoa(round)+"-"+strconv.Itoa(int(writes)), n, workers, d, writes)
		return b.Elapsed, b.Latencies, err
	}
}

// sqliteBares are the SQLite bench's two yardsticks next to path: a new
// call's writes (the goal's) and the single-row floor.
func sqliteBares(ctx context.Context, path string, workers int, d store.Durability) (bare, floor benchBare) {
	return sqliteBare(ctx, path, workers, d, sqlite.BareCallWrites), sqliteBare(ctx, path, workers, d, sqlite.BareOneRow)
}

// finish fills in a run's rate, latency percentiles and errors (the
// in-process and the HTTP bench report alike).
func (rep *benchReport) finish(elapsed time.Duration, lat []time.Duration, errs *atomic.Int64, firstErr *atomic.Value) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	rep.Seconds = elapsed.Seconds()
	rep.OpsPerSec = float64(rep.Ops) / elapsed.Seconds()
	rep.P50Ms, rep.P99Ms = ms(sqlite.Percentile(lat, 0.50)), ms(sqlite.Percentile(lat, 0.99))
	rep.Errors = int(errs.Load())
	if s, ok := firstErr.Load().(string); ok {
		rep.FirstError = s
	}
}

func benchTenant(i int) string { return "bench-t" + strconv.Itoa(i%8) }

// defaultBenchArgs are create_support_task's arguments (the HTTP gateway
// bench calls that tool).
const defaultBenchArgs = `{"subject":"delayed delivery #{i}"}`

// benchArgs fills the template: {i} becomes the call's number ("N-changed"
// for the conflict mix, so the fingerprint differs).
func benchArgs(tmpl string, i int, changed bool) []byte {
	n := strconv.Itoa(i)
	if changed {
		n += "-changed"
	}
	return []byte(strings.ReplaceAll(tmpl, "{i}", n))
}
