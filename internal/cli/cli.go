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
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
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
	case "", "console":
		// "console" is what people type; bare retrysafe opens it too.
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
	case "migrate":
		return runMigrate(ctx, args, stdout, stderr)
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
// flag is 2, stray positional arguments are 2, and so is a single-valued
// flag given twice (it used to take the last value silently: `call --key K
// --key Z` made Z). Only a flag whose value is a list (ops resolve --key)
// repeats. Help asked for goes to stdout (retrysafe call -h | less), as
// retrysafe --help's does. An error is one line, "retrysafe CMD: …", with
// flags spelled --name as the help spells them.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	repeated := onceEach(fs)
	fs.SetOutput(io.Discard) // the error is printed below, once
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, fs.Name())
			return exitOK, false
		}
		msg := dashDash(err.Error())
		// --against-finding stands alone or takes a digest: not "boolean".
		msg = strings.Replace(msg, "invalid boolean value", "invalid value", 1)
		if *repeated != "" {
			msg = fmt.Sprintf("--%s was given more than once: give each flag once (nothing was done)", *repeated)
		}
		reportJSON(stderr, model.CodeInvalid, msg, exitInvalid)
		fmt.Fprintf(textsafe.Writer(stderr), "retrysafe %s: %s\n", fs.Name(), msg)
		return exitInvalid, false
	}
	if fs.NArg() > 0 {
		msg := fmt.Sprintf("unexpected argument %q", fs.Arg(0))
		if fs.Name() == "console" && isCommand(fs.Arg(0)) {
			// retrysafe --db X call …: the flags were taken as the console's.
			msg = fmt.Sprintf("unexpected argument %q: flags go after the command: retrysafe %s %s …", fs.Arg(0), fs.Arg(0), strings.Join(args[:len(args)-fs.NArg()], " "))
		}
		reportJSON(stderr, model.CodeInvalid, msg, exitInvalid)
		fmt.Fprintf(textsafe.Writer(stderr), "retrysafe %s: %s\n", fs.Name(), msg)
		return exitInvalid, false
	}
	return 0, true
}

// isCommand reports whether name is one of retrysafe's commands.
func isCommand(name string) bool {
	switch name {
	case "call", "ops", "sweep", "triage", "lab", "demo", "bench", "gen", "sandbox", "serve", "mcp", "tokens", "migrate", "version", "completion", "help":
		return true
	}
	return false
}

// flagDash matches a flag's name as the flag package writes it in an
// error: one dash.
var flagDash = regexp.MustCompile(`(^|[ :])-([A-Za-z][A-Za-z0-9-]*)`)

// dashDash rewrites the flag package's "-key" in an error to "--key".
func dashDash(msg string) string { return flagDash.ReplaceAllString(msg, "$1--$2") }

// onceEach makes every flag of fs refuse a second value, but for lists
// (a flag.Value that appends, like keyList); the name of the first flag
// given twice is left in *repeated.
func onceEach(fs *flag.FlagSet) *string {
	repeated := new(string)
	seen := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Value.(type) {
		case *keyList, *onceValue, *onceBool:
			return
		}
		name := f.Name
		o := onceValue{Value: f.Value, check: func() error {
			if seen[name] {
				if *repeated == "" {
					*repeated = name
				}
				return errRepeated
			}
			seen[name] = true
			return nil
		}}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = &onceBool{o}
		} else {
			f.Value = &o
		}
	})
	return repeated
}

var errRepeated = errors.New("given more than once")

// onceValue is a flag.Value that takes one value.
type onceValue struct {
	flag.Value
	check func() error
}

func (o *onceValue) Set(s string) error {
	if err := o.check(); err != nil {
		return err
	}
	return o.Value.Set(s)
}

// Get keeps flag.Getter for code that reads a flag's value through it.
func (o *onceValue) Get() any {
	if g, ok := o.Value.(flag.Getter); ok {
		return g.Get()
	}
	return o.Value.String()
}

// onceBool is a onceValue of a boolean flag (--json needs no value).
type onceBool struct{ onceValue }

func (*onceBool) IsBoolFlag() bool { return true }

// dbUsage is --db's help. It names the default rather than letting the
// flag package print it: $RETRYSAFE_DB may be a URL with a password.
const dbUsage = "the ledger: a file or a postgres:// URL (default $RETRYSAFE_DB, else ./retrysafe.db)"

// defaultDB is --db's default: $RETRYSAFE_DB, else ./retrysafe.db.
func defaultDB() string {
	if v := os.Getenv("RETRYSAFE_DB"); v != "" {
		return v
	}
	return "retrysafe.db"
}

// validOperator checks an --operator name as the ledger will when it records
// it (model.ValidateText: printable, one line, no control, format or
// bidirectional characters) and refuses a blank one; why says what records
// the name.
func validOperator(name, why string) error {
	if strings.TrimSpace(name) == "" {
		return model.Errorf(model.CodeInvalid, "--operator must not be empty: %s", why)
	}
	if err := model.ValidateText("operator name", name, reconcile.MaxOperatorLen); err != nil {
		return model.Errorf(model.CodeInvalid, "--operator: %v", err)
	}
	return nil
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

// providerPath is where the sandbox provider keeps its file for a ledger
// (ledger.ProviderPath); --provider-db chooses another.
func providerPath(where string) string { return ledger.ProviderPath(where) }

// Every command opens its ledger through the public API: openLedger
// (ledger.OpenConfig) for a ledger with its rules and providers,
// ledger.OpenStore for the bare store (tokens, a look at the counts).

// opening is how a command opens its ledger. The zero opening opens an
// existing ledger (the store creates none without store.Create) and no
// provider: what ops's reads and decisions need.
type opening struct {
	// providerDB is --provider-db ("": the sandbox file beside the
	// ledger, ledger.ProviderPath).
	providerDB string
	store      store.Options
	// use is what the command does with the providers: NoProviders for
	// reads and decisions (and a call of a local tool: it must not pay for
	// a provider, nor fail on one); LookupsOnly to ask them (the console,
	// ops check, triage: a missing sandbox file is never created, it
	// answers "cannot tell"); Dispatching to send; Resending for a sweep.
	use ledger.ProviderUse
	// askReadOnly: a read-only ledger still asks its providers (ops check
	// and triage show the findings then, and record nothing). Otherwise a
	// read-only ledger opens no provider at all.
	askReadOnly bool
}

// providers is the ProviderUse the ledger is opened with.
func (o opening) providers() ledger.ProviderUse {
	if o.store.ReadOnly && !(o.askReadOnly && o.use == ledger.LookupsOnly) {
		return ledger.NoProviders
	}
	return o.use
}

// openLedger opens the ledger at path (a file or a postgres:// URL) with
// cfg's tools and providers, as o says; a PostgreSQL ledger measures its
// clock against ctx's host clock (withHostClock: tests), else time.Now.
func openLedger(ctx context.Context, path string, cfg *config.Config, o opening) (*ledger.Ledger, error) {
	if o.store.HostClock == nil {
		o.store.HostClock = hostClock(ctx)
	}
	return ledger.OpenConfig(ctx, path, cfg, ledger.ConfigOptions{ProviderDB: o.providerDB, Use: o.providers(), Store: o.store})
}

// dispatchingIf is Dispatching for a command that may send (an external
// tool's call), else NoProviders.
func dispatchingIf(sends bool) ledger.ProviderUse {
	if sends {
		return ledger.Dispatching
	}
	return ledger.NoProviders
}

// openFailure is the result of a call whose ledger could not be opened. A
// refusal of the setup is class invalid, exit 2: nothing was written or
// sent, and retrying the same key will not help until --provider-db or --db
// is fixed. That is ledger.OpenConfig's model.CodeInvalid (a sandbox file
// that never served this ledger, a missing one beside a ledger that has
// sent to it), model.CodeUnsupported (a --db that is no ledger: a text
// file, another application's database, /dev/null, a newer schema) and,
// for a ledger file, model.CodeUnavailable (a directory, a missing
// directory, no permission) — the same exit 2 every other command gives
// them. Anything else is the machine's (class internal, exit 1: retry the
// same key later), as is a PostgreSQL server that does not answer.
func openFailure(where string, err error) reconcile.Result {
	switch model.CodeOf(err) {
	case model.CodeInvalid, model.CodeUnsupported:
		return reconcile.Result{Class: model.ClassInvalid, Message: err.Error()}
	case model.CodeUnavailable:
		if !postgres.IsURL(where) {
			return reconcile.Result{Class: model.ClassInvalid, Message: err.Error()}
		}
	}
	return reconcile.Result{}
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

// flagGiven reports whether the command line set the flag (a default is
// not a choice).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// ledgerName is --db for a person's terminal: a PostgreSQL URL without its
// password (redactedDB), every character inert.
func ledgerName(db string) string { return show(redactedDB(db)) }

// redactedDB is --db without a PostgreSQL URL's password (postgres.Redact),
// for a log (which escapes it its own way) or a terminal (ledgerName).
func redactedDB(db string) string {
	if postgres.IsURL(db) {
		return postgres.Redact(db)
	}
	return db
}

// ledgerFlags are the flags a command printed for a person to run next
// needs to act on the ledger this one did, pasted in another directory or
// a clean shell: --db always (a SQLite file by its absolute path, the
// default retrysafe.db too — else it names another ledger with the same
// tenant and key there; a PostgreSQL URL without its password),
// --provider-db where it was given and --config where it was given or
// came from $RETRYSAFE_CONFIG (without it the provider is not in the
// config and nothing is asked), both absolute — each shell-quoted, with a
// leading space. The caller makes the line inert (show).
func ledgerFlags(db, providerDB, configPath string) string {
	var b strings.Builder
	b.WriteString(storeFlags(db, providerDB))
	if configPath == "" {
		configPath = os.Getenv(config.EnvVar)
	}
	if configPath != "" {
		b.WriteString(" --config " + textsafe.ShellWord(absPath(configPath)))
	}
	return b.String()
}

// storeFlags are ledgerFlags' --db and --provider-db, without --config.
func storeFlags(db, providerDB string) string {
	var b strings.Builder
	switch {
	case postgres.IsURL(db):
		b.WriteString(" --db " + textsafe.ShellWord(redactedDB(db)))
	case db != "":
		b.WriteString(" --db " + textsafe.ShellWord(absPath(db)))
	}
	if providerDB != "" {
		b.WriteString(" --provider-db " + textsafe.ShellWord(absPath(providerDB)))
	}
	return b.String()
}

// absPath is p made absolute against the working directory (p as given if
// that cannot be known).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
