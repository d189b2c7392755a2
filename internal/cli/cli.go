// Package cli is retrysafe's command line: one file per command, their
// flags, output and exit codes. main.go only hands it the process's
// arguments; the rules live in reconcile, the SQL in store, the screens in ui.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
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

// providerPath is where the sandbox provider keeps its file beside a ledger.
func providerPath(ledger string) string {
	return strings.TrimSuffix(ledger, ".db") + ".provider.db"
}

// ledger is an open store with its sandbox provider and the service over
// both.
type ledger struct {
	Store   store.Ledger
	Sandbox *provider.Sandbox
	// ProviderDB is the sandbox provider's file, open or not (a missing
	// one is never created to be asked).
	ProviderDB string
	Svc        *reconcile.Service
}

func (l *ledger) Close() {
	if l.Sandbox != nil {
		l.Sandbox.Close()
	}
	l.Store.Close()
}

// openLedger opens the ledger (and its sandbox provider unless read-only).
func openLedger(path, providerDB string, o store.Options) (*ledger, error) {
	return openLedgerCtx(context.Background(), path, providerDB, o, !o.ReadOnly)
}

// openLedgerCtx opens the ledger, and its sandbox provider only when
// withProvider: a call of a local tool, a decision or a read needs none,
// and must not pay for it — nor fail on it. A sandbox file that another
// process is creating at the same moment is waited for within ctx (and at
// most sandboxOpenWait): racing first calls on a new ledger all succeed.
func openLedgerCtx(ctx context.Context, path, providerDB string, o store.Options, withProvider bool) (*ledger, error) {
	st, err := openStore(path, o)
	if err != nil {
		return nil, err
	}
	l := &ledger{Store: st}
	providers := provider.Registry{}
	if withProvider {
		if providerDB == "" {
			providerDB = providerPath(path)
		}
		sb, err := openSandbox(ctx, providerDB)
		if err != nil {
			st.Close()
			return nil, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox provider %s: %v", providerDB, err)
		}
		l.Sandbox, l.ProviderDB = sb, providerDB
		providers = sb.Providers()
	}
	l.Svc = reconcile.New(st, providers)
	l.Svc.AuthoritativeLookups = sandboxAuthoritative()
	return l, nil
}

// openForLookups opens a ledger whose provider is only asked, never sent
// anything: the console and ops check. The provider's file must exist
// already: opening a missing one would create an empty store, whose lookup
// "holds no delivery" would read as evidence that nothing was sent. When it
// is missing, the providers answer every lookup "cannot tell" instead (and
// nothing is created). A read-only ledger opens no provider at all.
func openForLookups(path, providerDB string, o store.Options) (*ledger, error) {
	if o.ReadOnly {
		return openLedger(path, "", o)
	}
	return openAsking(path, providerDB, o)
}

// openAsking opens the ledger (read-only if o says so) and its provider to
// be asked, as openForLookups does for a writable ledger: ops check and
// triage ask even with --read-only — they show the findings then, and
// record nothing. The provider's file is the provider's, not the ledger:
// asking opens it as it is.
func openAsking(path, providerDB string, o store.Options) (*ledger, error) {
	st, err := openStore(path, o)
	if err != nil {
		return nil, err
	}
	if providerDB == "" {
		providerDB = providerPath(path)
	}
	if _, err := os.Stat(providerDB); err != nil {
		l := &ledger{Store: st, ProviderDB: providerDB}
		l.Svc = reconcile.New(st, unreachableSandbox(providerDB, unwrapPath(err)))
		return l, nil
	}
	sb, err := provider.OpenSandbox(providerDB)
	if err != nil {
		st.Close()
		return nil, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox provider %s: %v", providerDB, err)
	}
	l := &ledger{Store: st, Sandbox: sb, ProviderDB: providerDB, Svc: reconcile.New(st, sb.Providers())}
	l.Svc.AuthoritativeLookups = sandboxAuthoritative()
	return l, nil
}

// sandboxAuthoritative declares the sandbox providers' lookups
// authoritative: the sandbox keeps every delivery it ever made in its one
// file, so "holds nothing" there means it never took the request.
func sandboxAuthoritative() map[string]bool {
	return map[string]bool{"sandbox": true, "sandbox-idem": true}
}

// unreachable is a provider whose store cannot be reached: it answers
// every lookup "cannot tell" and sends nothing.
type unreachable struct {
	name, why string
}

func unreachableSandbox(path string, err error) provider.Registry {
	why := fmt.Sprintf("cannot tell: the sandbox provider's file %s is not there (%v); pass --provider-db with the file the calls used (nothing was created: an empty one would prove nothing)", path, err)
	return provider.Registry{
		"sandbox":      unreachable{name: "sandbox", why: why},
		"sandbox-idem": unreachable{name: "sandbox-idem", why: why},
	}
}

func (u unreachable) Name() string      { return u.name }
func (u unreachable) HonoursKeys() bool { return false }

func (u unreachable) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	return provider.Response{}, fmt.Errorf("%s", u.why)
}

func (u unreachable) Lookup(_ context.Context, downstreamKey string) (provider.Evidence, error) {
	return provider.Evidence{Provider: u.name, DownstreamKey: downstreamKey}, model.Errorf(model.CodeUnavailable, "%s", u.why)
}

// sandboxOpenWait bounds how long opening the sandbox waits out another
// process that is creating it.
const sandboxOpenWait = 10 * time.Second

// openSandbox opens the sandbox provider's file, retrying while SQLite says
// another connection holds it (a brand-new file being set up by a
// concurrent first call reports "database is locked" without waiting).
func openSandbox(ctx context.Context, path string) (*provider.Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, sandboxOpenWait)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		sb, err := provider.OpenSandbox(path)
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
func openStore(where string, o store.Options) (store.Ledger, error) {
	return sqlite.OpenLedger(where, o)
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
