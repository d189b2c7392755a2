package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/labledger"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
)

// workerCommand is the internal subcommand the lab re-executes itself as.
const workerCommand = "__worker"

// labRunner is the lab's runner over this very binary: every worker is
// `retrysafe __worker …`.
func labRunner() (*lab.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, model.Wrap(model.CodeInternal, err, "cannot find this binary to run lab workers: %v", err)
	}
	return &lab.Runner{Exe: exe, WorkerArgs: []string{workerCommand}, Open: labOpen, Operator: "lab"}, nil
}

// labOpen is how the lab and the demo builder open their ledgers: the
// public API (ledger.OpenConfig), shared with the console's tests.
var labOpen lab.OpenFunc = labledger.Open

func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lab", stderr)
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	keep := fs.String("keep", "", "keep each scenario's ledger in DIR (DIR/SCENARIO.db) instead of a temporary directory")
	quiet := fs.Bool("quiet", false, "no progress on stderr (there is none where stderr is not a terminal)")
	db := fs.String("db", "", "run each scenario in a fresh schema of this PostgreSQL database (a postgres:// URL; default $RETRYSAFE_DB if it is one, else SQLite files)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	r, err := labRunner()
	if err != nil {
		return fail(stderr, err)
	}
	if *db == "" && postgres.IsURL(os.Getenv("RETRYSAFE_DB")) {
		*db = os.Getenv("RETRYSAFE_DB")
	}
	var schemas []string
	switch {
	case *db == "":
	case !postgres.IsURL(*db):
		return fail(stderr, model.Errorf(model.CodeInvalid, "lab --db takes a postgres:// URL (a schema per scenario); SQLite scenarios get files of their own"))
	default:
		base := *db
		var mu sync.Mutex
		r.NewLedger = func(ctx context.Context, id string) (string, func(), error) {
			schema := "lab_" + strings.ReplaceAll(id, "-", "_") + "_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
			where, err := postgres.WithSchema(base, schema)
			if err != nil {
				return "", nil, err
			}
			mu.Lock()
			schemas = append(schemas, schema)
			mu.Unlock()
			return where, func() {
				if *keep == "" {
					dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
					defer cancel()
					if err := postgres.DropSchema(dctx, where); err != nil {
						fmt.Fprintf(stderr, "retrysafe: %s\n", oneLine(err.Error()))
					}
				}
			}, nil
		}
	}
	dir := *keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "retrysafe-lab-"); err != nil {
			return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot make a scratch directory: %v", err))
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot make %s: %v", dir, err))
	} else if err := freshLabDir(dir); err != nil {
		return fail(stderr, err)
	}
	// Progress is for a person watching (as triage's): none where stderr
	// is a file or a pipe, which would otherwise keep every step.
	onTerminal := false
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		onTerminal = true
	}
	progress := func(s lab.Step) {
		if !*quiet && onTerminal {
			fmt.Fprintf(stderr, "  %-30s %s\n", show(s.Scenario), show(s.Text))
		}
	}
	start := time.Now()
	rows, err := r.Run(ctx, dir, progress)
	if err != nil {
		return fail(stderr, err)
	}
	elapsed := time.Since(start)
	ok := true
	for _, row := range rows {
		ok = ok && row.OK
	}
	if *asJSON {
		b, _ := json.MarshalIndent(struct {
			OK      bool      `json:"ok"`
			Seconds float64   `json:"seconds"`
			Dir     string    `json:"dir,omitempty"`
			Rows    []lab.Row `json:"rows"`
		}{ok, elapsed.Seconds(), *keep, rows}, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		lab.WriteTableWidth(stdout, rows, terminalWidth(stdout))
		verdict := "PASS"
		if !ok {
			verdict = "FAIL"
		}
		fmt.Fprintf(stdout, "\n%s: %d scenarios with real worker processes in %.1fs", verdict, len(rows), elapsed.Seconds())
		switch {
		case *keep != "" && *db != "":
			fmt.Fprintf(stdout, "; ledgers kept in schemas %s of %s (provider files in %s)", strings.Join(schemas, ", "), postgres.Redact(*db), *keep)
		case *keep != "":
			fmt.Fprintf(stdout, "; ledgers kept in %s (retrysafe --db %s/SCENARIO.db)", *keep, *keep)
		}
		fmt.Fprintln(stdout)
	}
	if !ok {
		return exitInternal
	}
	return exitOK
}

// freshLabDir removes the ledgers an earlier `lab --keep DIR` left, so each
// scenario starts from an empty ledger; it touches nothing else in DIR.
func freshLabDir(dir string) error {
	for _, sc := range lab.Scenarios() {
		base := dir + "/" + sc.ID
		for _, f := range []string{".db", ".db-wal", ".db-shm", ".provider.db", ".provider.db-wal", ".provider.db-shm"} {
			if err := os.Remove(base + f); err != nil && !os.IsNotExist(err) {
				return model.Wrap(model.CodeUnavailable, err, "cannot clear %s: %v", base+f, err)
			}
		}
	}
	return nil
}

// runWorker is one lab worker process: `retrysafe call`'s flags plus where
// to die. It prints one lab.WorkerResult line per call and exits with the
// class's code — unless it dies first, which is the point.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c callFlags
	fs := newFlags(workerCommand, stderr)
	c.register(fs)
	dieAt := fs.String(lab.FlagDieAt, "", "point to die at: before-commit, after-commit, after-claim, after-dispatch")
	dieHow := fs.String(lab.FlagDieHow, lab.DieExit, "how to die: exit (os.Exit with the point's code) or kill (SIGKILL)")
	stallAt := fs.String(lab.FlagStallAt, "", "point to hang at until killed (a reply that never comes)")
	calls := fs.Int(lab.FlagCalls, 1, "concurrent calls of the same request in this process")
	clockOffset := fs.Duration(lab.FlagClockOffset, 0, "run the worker's clock this far behind real time (negative; the demo's earlier clock)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *clockOffset > 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--%s must not be positive: a worker never dates its rows in the future", lab.FlagClockOffset))
	}
	die, err := lab.ParsePoint(*dieAt)
	if err != nil {
		return fail(stderr, err)
	}
	stall, err := lab.ParsePoint(*stallAt)
	if err != nil {
		return fail(stderr, err)
	}
	hook, err := lab.Hook(die, *dieHow, stall, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	if *calls < 1 || *calls > 64 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--%s must be between 1 and 64", lab.FlagCalls))
	}
	cfg, code, ok := loadConfig(c.config, stderr)
	if !ok {
		return code
	}
	c.deriveLease(fs, cfg)
	req, faults, err := c.parse(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	// A worker never creates a ledger: the lab made it, and a typo must not
	// leave a stray file behind.
	var opts store.Options
	if off := *clockOffset; off != 0 {
		opts.Now = func() time.Time { return time.Now().Add(off) }
	}
	tool, _ := cfg.Tools.Lookup(req.Tool) // checked by parse
	l, err := openLedger(ctx, c.db, cfg, opening{providerDB: c.providerDB, store: opts, use: dispatchingIf(tool != nil && tool.Kind() == model.EffectExternal)})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	if opts.Now != nil && l.Sandbox() != nil {
		l.Sandbox().SetClock(opts.Now)
	}
	l.Service().Lease = c.lease
	l.Service().At = hook
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results := make([]lab.WorkerResult, *calls)
	var wg sync.WaitGroup
	for i := range *calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := req
			if *calls > 1 {
				r.WorkerID = fmt.Sprintf("%s/g%d", req.WorkerID, i+1)
				if r.TraceID != "" {
					r.TraceID = fmt.Sprintf("%s.%d", req.TraceID, i+1)
				}
			}
			res, err := l.Service().Call(ctx, r, reconcile.CallOptions{Provider: c.prov, Faults: faults})
			results[i] = lab.ResultOf(res, err)
		}()
	}
	wg.Wait()
	for _, r := range results {
		b, _ := json.Marshal(r)
		fmt.Fprintln(stdout, string(b))
	}
	return lab.WorkerExit(results)
}

// runDemo builds the demo ledger (unless it exists) and opens the console
// on it.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", stderr)
	db := fs.String("db", "demo.db", "demo ledger file (its sandbox provider goes beside it) or postgres:// URL; without --db, a postgres:// URL in $RETRYSAFE_DB is used, in schema retrysafe_demo")
	fresh := fs.Bool("fresh", false, "rebuild the demo ledger even if it exists")
	noConsole := fs.Bool("no-console", false, "build the ledger and exit without opening the console")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	var err error
	path := *db
	forceSchema := false
	if env := os.Getenv("RETRYSAFE_DB"); !flagGiven(fs, "db") && postgres.IsURL(env) {
		// $RETRYSAFE_DB names the team's ledger: the demo goes beside it,
		// in a schema of its own, never into it (--fresh replaces).
		// A file in $RETRYSAFE_DB is left alone: the demo is demo.db.
		path, forceSchema = env, true
	}
	if postgres.IsURL(path) && (forceSchema || postgres.SchemaOf(path) == "public") {
		// The demo is built beside and then renamed into place, which a
		// public schema cannot be: it gets a schema of its own.
		if path, err = postgres.WithSchema(path, "retrysafe_demo"); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "the demo ledger lives in schema retrysafe_demo: retrysafe%s\n", show(demoFlags(path)))
	}
	if dir := filepath.Dir(path); !postgres.IsURL(path) && !isDir(dir) {
		// Said before anything is built, and of the path given: the build
		// goes through a temporary file beside it.
		return fail(stderr, model.Errorf(model.CodeUnavailable, "cannot build the demo ledger %s: directory %s does not exist", path, dir))
	}
	exists, err := demoExists(ctx, path)
	if err != nil {
		return fail(stderr, err)
	}
	if *fresh || !exists {
		if !postgres.IsURL(path) {
			if err := removeLedgerFiles(path); err != nil {
				return fail(stderr, err)
			}
		}
		if err := buildDemo(ctx, path, stderr); err != nil {
			if ctx.Err() != nil {
				// SIGINT/SIGTERM: the error is whichever step the
				// cancellation cut ("context canceled before the
				// transaction finished"); say what happened.
				return fail(stderr, model.Wrap(model.CodeInternal, err, "demo: interrupted: the demo ledger %s was not built, and nothing half-built was left (retrysafe demo builds it again)", ledgerName(path)))
			}
			return fail(stderr, err)
		}
	} else {
		fmt.Fprintf(stderr, "reusing the demo ledger %s (retrysafe demo --fresh rebuilds it)\n", ledgerName(path))
	}
	if postgres.IsURL(path) {
		// The sandbox provider's file is in this directory: named by its
		// absolute path, the commands work from any other.
		fmt.Fprintf(stderr, "open it from any directory: retrysafe%s   (ops list, ops check, triage and sweep take the same --db and --provider-db)\n", show(demoFlags(path)))
	}
	if *noConsole {
		return exitOK
	}
	l, err := openLedger(context.Background(), path, config.Default(), opening{use: ledger.LookupsOnly})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	return openConsole(ctx, l, consoleOptions{Operator: defaultOperator()}, stderr)
}

// demoExists reports whether path is a ledger that already holds
// operations. A file that is not a ledger is an error: the demo never
// overwrites something it did not make.
func demoExists(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) && !postgres.IsURL(path) {
		return false, nil
	}
	st, err := ledger.OpenStore(path, store.Options{ReadOnly: true})
	if model.IsCode(err, model.CodeNotFound) && postgres.IsURL(path) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer st.Close()
	if err := demoOnly(ctx, st, path); err != nil {
		return false, err
	}
	c, err := st.Counts(ctx, "")
	return c.Total > 0, err
}

// demoOnly refuses a ledger the demo did not build: one holding a tenant
// the demo never writes, or a gateway token. Both reusing it ("the demo
// ledger") and --fresh (which deletes it) would be wrong there: deleting a
// real ledger forgets every key it recorded, and the next call under one
// of them runs its effect a second time.
func demoOnly(ctx context.Context, st store.Ledger, path string) error {
	demo := map[string]bool{lab.LabTenant: true}
	for _, t := range lab.DemoTenants() {
		demo[t] = true
	}
	tenants, err := st.Tenants(ctx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		if !demo[t] {
			return model.Errorf(model.CodeInvalid, "%s is not a demo ledger: it holds tenant %q, which the demo never writes; the demo neither reuses nor rebuilds a ledger of yours — give it a path of its own (retrysafe demo --db NEW.db, a file that does not exist yet)", ledgerName(path), textsafe.Visible(t))
		}
	}
	tokens, err := st.ListTokens(ctx, "")
	if err != nil {
		return err
	}
	if len(tokens) > 0 {
		return model.Errorf(model.CodeInvalid, "%s is not a demo ledger: it holds %d gateway token(s), which the demo never makes; the demo neither reuses nor rebuilds a ledger of yours — give it a path of its own (retrysafe demo --db NEW.db, a file that does not exist yet)", ledgerName(path), len(tokens))
	}
	return nil
}

// removeLedgerFiles deletes a ledger and its sandbox provider (with their
// WAL and shared-memory files) — only after checking each is SQLite or
// absent, so --fresh on a wrong path cannot destroy anything else.
func removeLedgerFiles(path string) error {
	var files []string
	for _, base := range []string{path, providerPath(path)} {
		if err := isSQLiteOrAbsent(base); err != nil {
			return err
		}
		files = append(files, base, base+"-wal", base+"-shm")
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return model.Wrap(model.CodeUnavailable, err, "cannot remove %s: %v", f, err)
		}
	}
	return nil
}

func isSQLiteOrAbsent(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot read %s: %v", path, err)
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if n == 0 || string(head[:n]) == "SQLite format 3\x00" {
		return nil
	}
	return model.Errorf(model.CodeUnsupported, "%s is not a SQLite database; the demo will not overwrite it", path)
}

// demoFlags are --db and --provider-db of the demo ledger at path, for
// the commands it prints: the URL without its password, the provider
// file by its absolute path (a PostgreSQL ledger's is in the current
// directory), each shell-quoted, with a leading space.
func demoFlags(path string) string {
	return " --db " + textsafe.ShellWord(redactedDB(path)) + " --provider-db " + textsafe.ShellWord(absPath(providerPath(path)))
}

// buildingPID is the process id in name when name is prefix followed by
// digits and then suffix (a demo build's temporary name), else 0.
func buildingPID(name, prefix, suffix string) int {
	digits, ok := strings.CutPrefix(name, prefix)
	if digits, ok = strings.CutSuffix(digits, suffix); !ok || digits == "" {
		return 0
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0
		}
	}
	pid, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return pid
}

// removeGoneBuilds removes what demo builds of path whose process is gone
// left (killed where they could not clean up: SIGKILL, a closed
// terminal) — only the demo's own building names of this path, and never
// a build still running. Best effort: a leftover it cannot remove stays.
func removeGoneBuilds(ctx context.Context, path string) {
	if postgres.IsURL(path) {
		prefix := postgres.SchemaOf(path) + "_building_"
		names, err := postgres.SchemasWithPrefix(ctx, path, prefix)
		if err != nil {
			return
		}
		for _, n := range names {
			if pid := buildingPID(n, prefix, ""); pid != 0 && pid != os.Getpid() && processGone(pid) {
				if tmp, err := postgres.WithSchema(path, n); err == nil && postgres.DropSchema(ctx, tmp) == nil {
					removeLedgerFiles(providerPath(tmp))
				}
			}
		}
		// A provider file whose schema is gone already.
		files, _ := filepath.Glob(prefix + "*.provider.db")
		for _, f := range files {
			if pid := buildingPID(filepath.Base(f), prefix, ".provider.db"); pid != 0 && pid != os.Getpid() && processGone(pid) {
				removeLedgerFiles(strings.TrimSuffix(f, ".provider.db"))
			}
		}
		return
	}
	prefix := strings.TrimSuffix(path, ".db") + ".building-"
	files, _ := filepath.Glob(prefix + "*.db")
	for _, f := range files {
		if pid := buildingPID(f, prefix, ".db"); pid != 0 && pid != os.Getpid() && processGone(pid) {
			removeLedgerFiles(f)
		}
	}
}

// buildDemo builds the demo ledger under a temporary name beside path and
// renames it into place only when complete, so an interrupted build never
// leaves a half demo that a later run would reuse.
func buildDemo(ctx context.Context, path string, stderr io.Writer) error {
	r, err := labRunner()
	if err != nil {
		return err
	}
	removeGoneBuilds(ctx, path)
	if postgres.IsURL(path) {
		return buildDemoPostgres(ctx, path, r, stderr)
	}
	tmp := strings.TrimSuffix(path, ".db") + fmt.Sprintf(".building-%d.db", os.Getpid())
	defer removeLedgerFiles(tmp)
	fmt.Fprintf(stderr, "building the demo ledger %s through the real code paths…\n", show(path))
	rep, err := lab.BuildDemo(ctx, tmp, providerPath(tmp), r, func(s string) { fmt.Fprintf(stderr, "  %s\n", s) })
	if err != nil {
		return err
	}
	for _, pair := range [][2]string{{tmp, path}, {providerPath(tmp), providerPath(path)}} {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(pair[0]+suffix, pair[1]+suffix); err != nil && !os.IsNotExist(err) {
				return model.Wrap(model.CodeUnavailable, err, "cannot move the demo ledger into place: %v", err)
			}
		}
	}
	fmt.Fprintf(stderr, "built %s in %.1fs: %d operations in %d tenants (the background's and the lab's)\n", show(path), rep.Elapsed.Seconds(), rep.Operations, len(lab.DemoTenants())+1)
	demoHints(stderr, rep)
	return nil
}

// demoHints names the demo's operations worth opening first, on either
// driver.
func demoHints(stderr io.Writer, rep *lab.DemoReport) {
	fmt.Fprintf(stderr, "  waiting for a person (unknown): %s\n", strings.Join(rep.Unknown, ", "))
	fmt.Fprintf(stderr, "  in flight (in_progress, leases held until %s; a sweep after that makes them unknown): %s\n",
		rep.LeaseUntil.Local().Format("15:04"), strings.Join(rep.InFlight, ", "))
}

// buildDemoPostgres builds the demo in a schema of its own beside the
// target and renames it into place in one transaction (dropping an older
// demo ledger there), so an interrupted build is never what people open.
// The sandbox provider's file follows the same steps in the current
// directory.
func buildDemoPostgres(ctx context.Context, path string, r *lab.Runner, stderr io.Writer) error {
	target := postgres.SchemaOf(path)
	building := target + "_building_" + strconv.Itoa(os.Getpid())
	tmp, err := postgres.WithSchema(path, building)
	if err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		postgres.DropSchema(dctx, tmp)
		removeLedgerFiles(providerPath(tmp))
	}()
	if err := removeLedgerFiles(providerPath(tmp)); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "building the demo ledger %s through the real code paths…\n", postgres.Redact(path))
	rep, err := lab.BuildDemo(ctx, tmp, providerPath(tmp), r, func(s string) { fmt.Fprintf(stderr, "  %s\n", s) })
	if err != nil {
		return err
	}
	if err := removeLedgerFiles(providerPath(path)); err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(providerPath(tmp)+suffix, providerPath(path)+suffix); err != nil && !os.IsNotExist(err) {
			return model.Wrap(model.CodeUnavailable, err, "cannot move the demo provider into place: %v", err)
		}
	}
	if err := postgres.MoveSchema(ctx, path, building, target); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "built %s in %.1fs: %d operations in %d tenants (the background's and the lab's)\n", postgres.Redact(path), rep.Elapsed.Seconds(), rep.Operations, len(lab.DemoTenants())+1)
	demoHints(stderr, rep)
	return nil
}

// terminalWidth is the width of w in columns where it is a terminal, else
// 0 (a file or a pipe keeps every line whole, for grep).
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return 0
	}
	width, _, err := term.GetSize(f.Fd())
	if err != nil || width <= 0 {
		return 0
	}
	return width
}
