// Package cli is retrysafe's command line: one file per command, their
// flags, output and exit codes. main.go only hands it the process's
// arguments; the rules live in reconcile, the SQL in store, the screens in ui.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/config"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// Run dispatches a command line (without the program name) and returns the
// process's exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if cmd == "" && len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		// The commands first, then the console's flags.
		return runConsole(context.Background(), []string{"-h"}, stdout, textsafe.Writer(stdout))
	}
	if jsonRequested(args) {
		stderr = &jsonErrors{stderr: stderr, stdout: stdout}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "":
		return runConsole(ctx, args, stdout, stderr)
	case "call":
		return runCall(ctx, args, stdout, stderr)
	case "ops":
		return runOps(ctx, args, stdout, stderr)
	case "sweep":
		return runSweep(ctx, args, stdout, stderr)
	case "triage":
		return runTriage(ctx, args, stdout, stderr)
	case "lab":
		return runLab(ctx, args, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	case "gen":
		return runGen(ctx, args, stdout, stderr)
	case "sandbox":
		return runSandbox(ctx, args, stdout, stderr)
	case "serve":
		return runServe(ctx, args, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args, stdout, stderr)
	case "tokens":
		return runTokens(ctx, args, stdout, stderr)
	case workerCommand:
		return runWorker(ctx, args, stdout, stderr)
	case "version":
		return runVersion(ctx, args, stdout, stderr)
	case "completion":
		return runCompletion(ctx, args, stdout, stderr)
	case "help":
		if len(args) > 0 {
			// retrysafe help ops list == retrysafe ops list -h
			return Run(append(append([]string{}, args...), "-h"), stdout, stdout)
		}
		fmt.Fprint(stdout, topUsage())
		return exitOK
	default:
		fmt.Fprintf(stderr, "retrysafe: unknown command %q\n\n%s", cmd, topUsage())
		return exitInvalid
	}
}

// Exit codes shared by every command (call adds its class codes).
const (
	exitOK       = 0
	exitInternal = 1
	exitInvalid  = 2
)

// newFlags makes a FlagSet that reports errors once, on stderr, without
// printing usage twice.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package quotes a bad flag's name as typed.
	fs.SetOutput(textsafe.Writer(stderr))
	// A bad flag gets the flag package's one line; -h gets the full list
	// (printed by parseFlags).
	fs.Usage = func() {}
	return fs
}

// parseFlags parses and turns flag errors into exit codes: -h is 0, a bad
// flag is 2, stray positional arguments are 2.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs.Output(), fs, fs.Name())
			return exitOK, false
		}
		reportJSON(stderr, model.CodeInvalid, err.Error(), exitInvalid)
		return exitInvalid, false
	}
	if fs.NArg() > 0 {
		msg := fmt.Sprintf("unexpected argument %q", fs.Arg(0))
		reportJSON(stderr, model.CodeInvalid, msg, exitInvalid)
		fmt.Fprintf(stderr, "retrysafe %s: %s\n", fs.Name(), msg)
		return exitInvalid, false
	}
	return 0, true
}

// defaultDB is --db's default: $RETRYSAFE_DB, else ./retrysafe.db.
func defaultDB() string {
	if v := os.Getenv("RETRYSAFE_DB"); v != "" {
		return v
	}
	return "retrysafe.db"
}

// defaultOperator is $USER, else the login name of this process's user
// (cron and containers often leave $USER unset), else "operator".
func defaultOperator() string {
	if v := os.Getenv("USER"); v != "" {
		return v
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "operator"
}

// providerPath is where the sandbox provider keeps its file: beside a
// ledger file (NAME.provider.db), or — for a PostgreSQL ledger, which has no
// directory — SCHEMA.provider.db in the current directory (public's is
// retrysafe.provider.db). --provider-db chooses another.
func providerPath(ledger string) string {
	if postgres.IsURL(ledger) {
		schema := postgres.SchemaOf(ledger)
		if schema == "public" {
			schema = "retrysafe"
		}
		return schema + ".provider.db"
	}
	return strings.TrimSuffix(ledger, ".db") + ".provider.db"
}

// ledger is an open store with its providers and the service over both.
type ledger struct {
	Store   store.Ledger
	Sandbox *sandbox.Sandbox // the sandbox providers' file, when one is open
	// ProviderDB is the sandbox provider's file, open or not (a missing
	// one is never created to be asked).
	ProviderDB string
	Svc        *reconcile.Service
	// Where is the location it was opened at, password and all (Store.Path
	// is for people and has none).
	Where string
	// sandboxNames are the config's sandbox providers (they share one file).
	sandboxNames []string
}

func (l *ledger) Close() {
	if l.Sandbox != nil {
		l.Sandbox.Close()
	}
	l.Store.Close()
}

// providerUse says what a command will do with its providers.
type providerUse int

const (
	// noProviders: reads and decisions ask no provider.
	noProviders providerUse = iota
	// lookupOnly: asks providers (ops check, the console's c) but never
	// creates a provider's store to do so: a sandbox file that does not
	// exist answers "cannot tell".
	lookupOnly
	// dispatching: calls send; the sandbox file is created if need be.
	dispatching
	// resending: a sweep sends again only what the ledger already sent: on
	// a ledger that has sent nothing to a sandbox it opens no sandbox file
	// (neither made nor tied — a tie would vouch for a file the ledger's
	// later calls may never use); otherwise as dispatching.
	resending
	// noSandbox: resending on a ledger that has sent nothing to a sandbox:
	// HTTP providers as dispatching, sandbox ones not opened.
	noSandbox
)

// openLedger opens the ledger with cfg's providers ready to dispatch
// (unless read-only).
func openLedger(path, providerDB string, cfg *config.Config, o store.Options) (*ledger, error) {
	return openLedgerCtx(context.Background(), path, providerDB, cfg, o, !o.ReadOnly)
}

// openLedgerCtx opens the ledger, and its providers only when
// withProvider: a call of a local tool, a decision or a read needs none,
// and must not pay for it — nor fail on it. A sandbox file that another
// process is creating at the same moment is waited for within ctx (and at
// most sandboxOpenWait): racing first calls on a new ledger all succeed.
func openLedgerCtx(ctx context.Context, path, providerDB string, cfg *config.Config, o store.Options, withProvider bool) (*ledger, error) {
	use := noProviders
	if withProvider {
		use = dispatching
	}
	return openWith(ctx, path, providerDB, cfg, o, use)
}

// openForLookups opens a ledger whose providers are only asked, never sent
// anything: the console and ops check. A sandbox provider's file must exist
// already: opening a missing one would create an empty store, whose lookup
// "holds no delivery" would read as evidence that nothing was sent. When it
// is missing, the sandbox providers answer every lookup "cannot tell"
// instead (and nothing is created); an HTTP provider that does not answer
// cannot tell either. A read-only ledger opens no provider at all.
func openForLookups(path, providerDB string, cfg *config.Config, o store.Options) (*ledger, error) {
	use := lookupOnly
	if o.ReadOnly {
		use = noProviders
	}
	return openWith(context.Background(), path, providerDB, cfg, o, use)
}

func openWith(ctx context.Context, path, providerDB string, cfg *config.Config, o store.Options, use providerUse) (*ledger, error) {
	st, err := openStore(path, o)
	if err != nil {
		return nil, err
	}
	l := &ledger{Store: st, Where: path}
	for _, p := range cfg.Providers {
		if p.Kind == config.KindSandbox {
			l.sandboxNames = append(l.sandboxNames, p.Name)
		}
	}
	providers := provider.Registry{}
	if use == resending {
		use = dispatching
		sent, err := st.SentTo(ctx, l.sandboxNames...)
		if err != nil {
			st.Close()
			return nil, err
		}
		if !sent {
			use = noSandbox
		}
	}
	// Read-only ledgers open providers only to be asked (openAsking).
	if use != noProviders {
		if providerDB == "" {
			providerDB = providerPath(path)
		}
		l.ProviderDB = providerDB
		for _, p := range cfg.Providers {
			built, err := l.buildProvider(ctx, p, providerDB, use)
			if err != nil {
				l.Close()
				return nil, err
			}
			providers[p.Name] = built
		}
	}
	l.Svc = reconcile.New(st, cfg.Tools, providers)
	l.Svc.AuthoritativeLookups = authoritativeLookups(cfg)
	l.Svc.LookupRates = lookupRates(cfg)
	return l, nil
}

// openAsking opens the ledger (read-only if o says so) with its providers
// ready to be asked, never sent anything, as openForLookups does for a
// writable ledger: ops check and triage ask even with --read-only — they
// show the findings then, and record nothing.
func openAsking(path, providerDB string, cfg *config.Config, o store.Options) (*ledger, error) {
	return openWith(context.Background(), path, providerDB, cfg, o, lookupOnly)
}

// authoritativeLookups names the providers whose config entry declares
// their lookup authoritative (authoritative_lookup = true): only their "has
// nothing" may lead to a bulk "mark not applied". Never assumed from the
// kind.
func authoritativeLookups(cfg *config.Config) map[string]bool {
	out := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.AuthoritativeLookup {
			out[p.Name] = true
		}
	}
	return out
}

// lookupRates are the lookups a second the providers' config entries
// allow ([providers.lookup] rate); triage and the console's triage keep
// them unless a command line's --rate overrides them.
func lookupRates(cfg *config.Config) map[string]float64 {
	out := map[string]float64{}
	for _, p := range cfg.Providers {
		if p.LookupRate > 0 {
			out[p.Name] = p.LookupRate
		}
	}
	return out
}

// sandboxOpenWait bounds how long opening the sandbox waits out another
// process that is creating it.
const sandboxOpenWait = 10 * time.Second

// openSandbox opens the sandbox provider's file, retrying while SQLite says
// another connection holds it (a brand-new file being set up by a
// concurrent first call reports "database is locked" without waiting).
func openSandbox(ctx context.Context, path string) (*sandbox.Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, sandboxOpenWait)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		sb, err := sandbox.Open(path)
		if err == nil || !isBusy(err) {
			return sb, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// isBusy reports SQLite's "locked by another connection" by result code.
func isBusy(err error) bool {
	var se *msqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// openStore is the one place a ledger's location becomes a ledger: every
// command opens through it.
// A postgres:// or postgresql:// URL is a PostgreSQL ledger (in the schema
// its search_path names first); anything else is a SQLite file.
func openStore(where string, o store.Options) (store.Ledger, error) {
	if postgres.IsURL(where) {
		return postgres.OpenLedger(where, o)
	}
	return sqlite.OpenLedger(where, o)
}

func (l *ledger) buildProvider(ctx context.Context, p config.Provider, providerDB string, use providerUse) (provider.Provider, error) {
	switch p.Kind {
	case config.KindSandbox:
		if use == noSandbox {
			return provider.Unreachable(p.Name, p.HonoursKeys, "no sandbox provider file was opened: the ledger has sent nothing to a sandbox, so a sweep has nothing to send again"), nil
		}
		if l.Sandbox == nil {
			if _, err := os.Stat(providerDB); err != nil && use == lookupOnly {
				// Opening would create an empty provider file, whose lookup
				// "holds no delivery" would read as evidence that nothing
				// was sent.
				return provider.Unreachable(p.Name, p.HonoursKeys, fmt.Sprintf(
					"the sandbox provider's file %s is not there (%v); pass --provider-db with the file the calls used (nothing was created: an empty one would prove nothing)", providerDB, unwrapPathErr(err))), nil
			}
			if use == dispatching {
				if err := l.refuseNewSandboxWithHistory(ctx, providerDB); err != nil {
					return nil, err
				}
			}
			sb, err := openSandbox(ctx, providerDB)
			if err != nil {
				return nil, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox provider %s: %v", providerDB, err)
			}
			l.Sandbox = sb
			if err := l.tieSandbox(ctx, providerDB, use); err != nil {
				return nil, err
			}
		}
		if use == lookupOnly {
			// A file that never served this ledger for this provider
			// (another ledger's, an empty one made elsewhere, one made for
			// another config's sandbox provider) holds none of its
			// deliveries through it: its "has nothing" would read as
			// evidence that nothing was sent.
			id, err := l.Store.LedgerID(ctx)
			if err != nil {
				return nil, err
			}
			serves, err := l.Sandbox.Serves(ctx, id, p.Name)
			if err != nil {
				return nil, err
			}
			sent := false
			if !serves {
				if sent, err = l.Store.SentTo(ctx, p.Name); err != nil {
					return nil, err
				}
			}
			if sent {
				return provider.Unreachable(p.Name, p.HonoursKeys, fmt.Sprintf(
					"the sandbox provider's file %s has never served this ledger (id %s), which has operations sent to %s: it is another ledger's file, a new one, or one made before ledgers had ids; pass --provider-db with the file the calls used", providerDB, id, p.Name)), nil
			}
		}
		return l.Sandbox.Provider(p.Name, p.HonoursKeys), nil
	case config.KindHTTP:
		// Opens nothing: a connection is made per request, and a provider
		// that does not answer a lookup cannot tell.
		hp, err := httpapi.New(p.HTTP.Config)
		if err != nil {
			return nil, model.Errorf(model.CodeInvalid, "provider %s: %v", p.Name, err)
		}
		return hp, nil
	}
	return nil, model.Errorf(model.CodeInvalid, "provider %s: kind %q cannot be built", p.Name, p.Kind)
}

// tieSandbox ties the open sandbox file to this ledger before a command
// that dispatches sends anything through it (sandbox.Tie: refused when
// the file never served this ledger for a provider the ledger has already
// sent to); one that only asks ties nothing (buildProvider asks the file
// whom it serves).
func (l *ledger) tieSandbox(ctx context.Context, providerDB string, use providerUse) error {
	if use != dispatching {
		return nil
	}
	err := l.Sandbox.Tie(ctx, l.Store, l.sandboxNames...)
	if errors.Is(err, sandbox.ErrNotThisLedgers) {
		return model.Errorf(model.CodeInvalid,
			"the sandbox provider's file %s: %v: pass --provider-db with the file the calls used (nothing was sent: its \"has nothing\" would prove nothing about them)", providerDB, err)
	}
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot tie sandbox provider %s to this ledger: %v", providerDB, err)
	}
	return nil
}

// refuseNewSandboxWithHistory refuses to create a sandbox provider's file
// beside a ledger that already sent operations to a sandbox (a ledger moved
// or restored without its provider file, or a wrong --provider-db): the
// new, empty file would answer every later lookup of those operations
// "has nothing" — an authoritative "not applied" for effects that may well
// have happened. A file that is there settles it without a query (every
// call of an external tool comes here, and the query costs a connection of
// its own). A missing one is looked for again after the ledger is asked: a
// concurrent first call creates the file before it claims anything, so a
// claim seen here means the file is there by now.
func (l *ledger) refuseNewSandboxWithHistory(ctx context.Context, providerDB string) error {
	missing := func() bool {
		_, err := os.Stat(providerDB)
		return errors.Is(err, fs.ErrNotExist)
	}
	if !missing() {
		return nil
	}
	sent, err := l.Store.SentTo(ctx, l.sandboxNames...)
	if err != nil || !sent || !missing() {
		return err
	}
	return model.Errorf(model.CodeInvalid,
		"the sandbox provider's file %s is not there, but this ledger has operations sent to the sandbox: pass --provider-db with the file the calls used (nothing was created: a new, empty one would answer their lookups \"has nothing\")",
		providerDB)
}

// loadConfig resolves the config a command runs with (--config, else
// $RETRYSAFE_CONFIG, else the built-in default). A config error prints
// FILE:LINE: what is wrong, and the command exits 2 before any file is
// opened.
func loadConfig(path string, stderr io.Writer) (*config.Config, int, bool) {
	cfg, err := config.Resolve(path, os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err.Error()))
		return nil, exitInvalid, false
	}
	return cfg, 0, true
}

// configFlag registers --config on fs.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "tools and providers config file (TOML; default $"+config.EnvVar+", else the built-in demo tools)")
}

// exitFor maps an error to the exit code of the non-call commands.
func exitFor(err error) int {
	switch model.CodeOf(err) {
	case "":
		return exitOK
	case model.CodeInvalid, model.CodeNotFound, model.CodeConflict, model.CodeStale, model.CodeIllegal,
		model.CodeUnsupported, model.CodeUnavailable:
		return exitInvalid
	}
	return exitInternal
}

// fail prints one line for err and returns its exit code; under --json the
// error is also one JSON object on stdout (see jsonErrors).
func fail(stderr io.Writer, err error) int {
	code := exitFor(err)
	reportJSON(stderr, model.CodeOf(err), err.Error(), code)
	fmt.Fprintf(stderr, "retrysafe: %s\n", oneLine(err.Error()))
	return code
}

// jsonErrors is stderr when a command line asks for --json: every error is
// then also written to stdout as one JSON object, so a script reading
// stdout always gets JSON — the result, or
//
//	{"error":{"code":"not_found","message":"…","exit":2}}
//
// (call reports its errors in its own result shape, with a class).
type jsonErrors struct {
	stderr, stdout io.Writer
	call           bool // written by call: its result shape
}

func (j *jsonErrors) Write(p []byte) (int, error) { return j.stderr.Write(p) }

// errorJSON is the shape of an error under --json.
type errorJSON struct {
	Error struct {
		Code    model.Code `json:"code"`
		Message string     `json:"message"`
		Exit    int        `json:"exit"`
	} `json:"error"`
}

// reportJSON writes an error to stdout as JSON when stderr is a
// jsonErrors; otherwise it does nothing.
func reportJSON(stderr io.Writer, code model.Code, msg string, exit int) {
	j, ok := stderr.(*jsonErrors)
	if !ok {
		return
	}
	if j.call {
		class := model.ClassInternal
		if code == model.CodeInvalid {
			class = model.ClassInvalid
		}
		fmt.Fprintln(j.stdout, jsonLine(callOutput{Class: class, Message: collapse(msg)}))
		return
	}
	var e errorJSON
	e.Error.Code, e.Error.Message, e.Error.Exit = code, collapse(msg), exit
	fmt.Fprintln(j.stdout, jsonLine(e))
}

// jsonRequested reports whether a command line asks for JSON output.
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--json", "-json", "--json=true", "-json=true":
			return true
		case "--":
			return false
		}
	}
	return false
}

// oneLine is s for a person's terminal on one line: whitespace runs become
// one space and every control, format or bidirectional character is shown
// as an inert escape (textsafe.Visible).
func oneLine(s string) string {
	return textsafe.Visible(collapse(s))
}

// collapse turns every run of whitespace into one space: a message on one
// line, its text otherwise as it is (JSON escapes it its own way).
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// show is a stored value for a person's terminal: every character that
// could act on it is shown as an inert escape. Every value the text output
// prints from a ledger, a flag or an error passes through it.
func show(s string) string { return textsafe.Visible(s) }
