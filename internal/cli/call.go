package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// callFlags are the flags of `retrysafe call` (and of the lab's worker).
type callFlags struct {
	db, providerDB, config, tenant, key, tool, args, trace, worker, prov, fault string
	payloadVersion                                                              int
	retry                                                                       bool
	timeout, lease                                                              time.Duration
}

func (c *callFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.StringVar(&c.db, "db", defaultDB(), dbUsage)
	fs.StringVar(&c.providerDB, "provider-db", "", "sandbox provider file (default: beside the ledger, NAME.provider.db)")
	fs.StringVar(&c.tenant, "tenant", "", "tenant (required)")
	fs.StringVar(&c.key, "key", "", "operation id, the idempotency key (required; same key for every retry)")
	fs.StringVar(&c.config, "config", "", "tools and providers config file (TOML; default $RETRYSAFE_CONFIG, else the built-in demo tools)")
	fs.StringVar(&c.tool, "tool", "", "tool name from the config (the built-in ones: create_support_task, create_report_job, send_notification)")
	fs.StringVar(&c.args, "args", "", "arguments as one JSON object (use @FILE to read a file, - for stdin)")
	fs.StringVar(&c.trace, "trace-id", "", "caller's trace id, e.g. the model's tool-call id (recorded, never identity)")
	fs.StringVar(&c.worker, "worker", "", "worker id recorded with the attempt (default host:pid)")
	fs.IntVar(&c.payloadVersion, "payload-version", 0, "payload version (part of the fingerprint; default the tool's)")
	fs.StringVar(&c.prov, "provider", "", "provider for a new external operation (default the tool's; the built-in config also has sandbox-idem)")
	fs.StringVar(&c.fault, "fault", "", "sandbox fault for this dispatch: lose-reply, fail-before, reject, delay=DURATION")
	fs.BoolVar(&c.retry, "retry", false, "retry retryable outcomes with backoff and jitter, same key (5 attempts within --timeout; never sooner than a busy provider's Retry-After)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "overall deadline of the call (waits out a busy ledger within it)")
	fs.DurationVar(&c.lease, "lease", reconcile.DefaultLease, "lease of an external dispatch before a sweep may call it unknown (default 30s, or the longest provider timeout + 5s where that is longer)")
}

func (c *callFlags) request(ctx context.Context) (model.Request, error) {
	raw := []byte(c.args)
	switch {
	case c.args == "-":
		b, err := readArgs(ctx, "stdin", func() (io.ReadCloser, error) { return io.NopCloser(os.Stdin), nil })
		if err != nil {
			return model.Request{}, err
		}
		raw = b
	case strings.HasPrefix(c.args, "@"):
		name := c.args[1:]
		b, err := readArgs(ctx, name, func() (io.ReadCloser, error) { return os.Open(name) })
		if err != nil {
			return model.Request{}, err
		}
		raw = b
	case c.args == "":
		return model.Request{}, model.Errorf(model.CodeInvalid, "--args is required (a JSON object)")
	}
	if c.tenant == "" {
		return model.Request{}, model.Errorf(model.CodeInvalid, "--tenant is required")
	}
	if c.key == "" {
		return model.Request{}, model.Errorf(model.CodeInvalid, "--key is required (the operation id; reuse it on every retry)")
	}
	if c.tool == "" {
		return model.Request{}, model.Errorf(model.CodeInvalid, "--tool is required")
	}
	worker := c.worker
	if worker == "" {
		host, _ := os.Hostname()
		worker = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	return model.Request{Tenant: c.tenant, Key: c.key, Tool: c.tool, PayloadVersion: c.payloadVersion,
		Args: raw, TraceID: c.trace, WorkerID: worker}, nil
}

// readArgs reads --args from a file, a FIFO or stdin through a limit of one
// byte over model.MaxArgsBytes, so a bigger input — a 300 MB file,
// /dev/zero, a FIFO that never ends — is refused having read 64 KiB, not
// all of it. Opening a FIFO and reading a pipe block in the kernel, out of
// reach of a context, so both happen on a goroutine: a signal (ctx) ends
// the wait and the process exits without having written anything.
func readArgs(ctx context.Context, name string, open func() (io.ReadCloser, error)) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := open()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, model.MaxArgsBytes+1))
		done <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return nil, model.Wrap(model.CodeInternal, ctx.Err(), "interrupted while reading --args from %s; nothing was written", name)
	case r := <-done:
		switch {
		case r.err != nil:
			return nil, model.Wrap(model.CodeInvalid, r.err, "reading --args from %s: %v", name, unwrapPathErr(r.err))
		case len(r.b) > model.MaxArgsBytes:
			return nil, model.Errorf(model.CodeInvalid, "--args from %s is larger than %d bytes (64 KiB), the limit of one call's arguments", name, model.MaxArgsBytes)
		}
		return r.b, nil
	}
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse turns the flags into a request and the sandbox faults to apply.
func (c *callFlags) parse(ctx context.Context) (model.Request, provider.Faults, error) {
	req, err := c.request(ctx)
	if err != nil {
		return req, provider.Faults{}, err
	}
	faults, err := parseFault(c.fault)
	return req, faults, err
}

// parseFault reads --fault.
func parseFault(s string) (provider.Faults, error) {
	var f provider.Faults
	for _, part := range strings.Split(s, ",") {
		switch part = strings.TrimSpace(part); {
		case part == "":
		case part == "lose-reply":
			f.LoseReply = true
		case part == "fail-before":
			f.FailBefore = true
		case part == "reject":
			f.Reject = true
		case strings.HasPrefix(part, "delay="):
			d, err := time.ParseDuration(strings.TrimPrefix(part, "delay="))
			if err != nil || d < 0 {
				return f, model.Errorf(model.CodeInvalid, "--fault delay=%s: not a duration", strings.TrimPrefix(part, "delay="))
			}
			f.Delay = d
		default:
			return f, model.Errorf(model.CodeInvalid, "unknown --fault %q (want lose-reply, fail-before, reject, delay=DURATION)", part)
		}
	}
	return f, nil
}

// callOutput is the one line of JSON `call` prints on stdout when done.
type callOutput struct {
	Class   model.Class    `json:"class"`
	Status  string         `json:"status,omitempty"`
	Receipt *model.Receipt `json:"receipt,omitempty"`
	NewKey  string         `json:"new_key,omitempty"`
	State   model.State    `json:"state,omitempty"`
	Message string         `json:"message,omitempty"`
	// RetryAfter: the seconds a busy provider asked to be left alone
	// (its Retry-After, at most reconcile.MaxRetryAfter).
	RetryAfter int `json:"retry_after,omitempty"`
}

func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c callFlags
	if j, ok := stderr.(*jsonErrors); ok {
		j.call = true // errors in call's own shape, with a class
	}
	fs := newFlags("call", stderr)
	c.register(fs)
	asJSON := fs.Bool("json", false, "every outcome as one JSON line on stdout, errors and refusals included (done and stored failures always are)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := explicitPayloadVersion(fs, c.payloadVersion); err != nil {
		return fail(stderr, err)
	}
	cfg, code, ok := loadConfig(c.config, stderr)
	if !ok {
		return code
	}
	req, faults, err := c.parse(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	// Validate before opening (let alone creating) anything: bad input
	// writes nothing, not even a new empty ledger file.
	prep, err := cfg.Tools.Prepare(req)
	if err != nil {
		rp, ok := recordedRequest(ctx, c.db, cfg, req, err)
		if !ok {
			return fail(stderr, builtinToolsHint(cfg, req.Tool, err))
		}
		prep = rp
	}
	if prep.Tool.Kind() == model.EffectLocal {
		// Nothing is sent for a local tool: a fault or a provider for it
		// would be ignored, and the caller told nothing.
		for _, f := range []struct{ name, v string }{{"--fault", c.fault}, {"--provider", c.prov}} {
			if f.v != "" {
				return fail(stderr, model.Errorf(model.CodeInvalid, "%s applies to external tools only: %s is a local tool (its effect commits with the operation; nothing is sent to a provider)", f.name, req.Tool))
			}
		}
	}
	if c.timeout <= 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--timeout must be positive, got %v", c.timeout))
	}
	if c.lease <= 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--lease must be positive, got %v", c.lease))
	}
	c.deriveLease(fs, cfg)
	if c.providerDB != "" {
		// Refused before the ledger is created, not after.
		if dir := filepath.Dir(c.providerDB); !isDir(dir) {
			return fail(stderr, model.Errorf(model.CodeUnavailable, "cannot open sandbox provider %s: directory %s does not exist", c.providerDB, dir))
		}
	}
	if err := checkProviderName(cfg, c.prov); err != nil {
		return fail(stderr, err)
	}
	if c.fault != "" && prep.Tool.Kind() == model.EffectExternal {
		// Faults are the sandbox's: a real API would be sent the real
		// request, and the caller believe it tested a failure.
		name := c.prov
		if name == "" {
			name = prep.Tool.Effect.Provider
		}
		for _, p := range cfg.Providers {
			if p.Name == name && p.Kind != config.KindSandbox {
				return fail(stderr, model.Errorf(model.CodeInvalid, "--fault applies to sandbox providers only: %s goes to provider %s (kind %s), which would be sent the real request", req.Tool, name, p.Kind))
			}
		}
	}
	var l *ledger.Ledger
	if prep.Tool.Kind() == model.EffectExternal {
		// A dispatch that could not send (its secret unset) would still
		// claim the key and record an attempt: refuse before anything is
		// opened — unless the key is settled, whose answer needs no
		// provider.
		if why := missingDispatchEnv(cfg, c.prov, prep.Tool.Effect.Provider); why != nil {
			// A key already used is sent to the provider its operation
			// recorded, whatever the tool's or --provider: its check is
			// the one that stands.
			if rec := recordedProvider(ctx, c.db, cfg, req); rec != "" {
				why = missingDispatchEnv(cfg, rec, "")
			}
			if why != nil {
				if l = openForReplay(ctx, c.db, cfg, req, why); l == nil {
					return fail(stderr, why)
				}
			}
		}
	}
	// From here on the request is valid: whatever goes wrong is the
	// machine's (class internal, retry the same key), never invalid — but
	// for a provider file the ledger refuses (openFailure).
	if l == nil {
		l, err = openLedger(ctx, c.db, cfg, opening{providerDB: c.providerDB, store: store.Options{Create: true, LeaveWAL: true, ReadOnWriter: true}, use: dispatchingIf(prep.Tool.Kind() == model.EffectExternal)})
	}
	if err != nil && model.IsCode(err, model.CodeInvalid) && prep.Tool.Kind() == model.EffectExternal {
		if rl := openForReplay(ctx, c.db, cfg, req, err); rl != nil {
			l, err = rl, nil
		}
	}
	if err != nil {
		return printResult(openFailure(c.db, err), err, stdout, stderr, *asJSON)
	}
	defer l.Close()
	if prep.Tool.Kind() == model.EffectExternal {
		// The tool's (or --provider's) secrets are set; the key's
		// operation may have recorded another provider, whose are not.
		if why := recordedMissingEnv(ctx, l, cfg, req, dispatchName(c.prov, prep.Tool.Effect.Provider)); why != nil {
			return fail(stderr, why)
		}
	}
	l.Service().Lease = c.lease
	l.Service().HintFlags = ledgerFlags(c.db, c.providerDB, c.config)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	opt := reconcile.CallOptions{Provider: c.prov, Faults: faults}
	var res reconcile.Result
	if c.retry {
		p := reconcile.DefaultPolicy()
		p.Deadline = c.timeout
		res, _, err = l.Service().CallWithRetry(ctx, req, opt, p)
	} else {
		res, err = l.Service().Call(ctx, req, opt)
	}
	if errors.Is(err, reconcile.ErrCannotDispatch) {
		// This process's setup (a secret unset, or unsendable), found
		// after the early check: exit 2 like it, nothing was written.
		res.Class = model.ClassInvalid
	}
	return printResult(res, err, stdout, stderr, *asJSON)
}

// missingDispatchEnv is the refusal of a call whose provider (override,
// else the tool's) is an HTTP one whose dispatch reads a ${NAME} that is
// not set now; nil when nothing is missing. For a key already used, the
// provider is the one its operation recorded (recordedProvider,
// recordedMissingEnv): a call dispatches there, whatever the tool's.
func missingDispatchEnv(cfg *config.Config, override, tools string) error {
	name := dispatchName(override, tools)
	for _, p := range cfg.Providers {
		if p.Name != name || p.HTTP == nil {
			continue
		}
		if missing := p.HTTP.MissingEnv("dispatch"); len(missing) > 0 {
			return model.Errorf(model.CodeInvalid, "%s: provider %s: dispatch needs $%s, which is not set; nothing was sent or written (set it and call again with the same key)", cfg.File, name, strings.Join(missing, ", $"))
		}
	}
	return nil
}

// dispatchName is the provider a new key's call dispatches to: --provider,
// else the tool's.
func dispatchName(override, tools string) string {
	if override != "" {
		return override
	}
	return tools
}

// recordedProvider is the provider the operation under req's key recorded,
// read from the ledger opened without its providers (nothing is created
// or sent), or "" if there is none — or it cannot be read: the call's
// own transaction decides then.
func recordedProvider(ctx context.Context, where string, cfg *config.Config, req model.Request) string {
	l, err := openLedger(ctx, where, cfg, opening{store: store.Options{LeaveWAL: true, ReadOnWriter: true}, use: ledger.NoProviders})
	if err != nil {
		return ""
	}
	defer l.Close()
	op, err := l.Get(ctx, req.Tenant, req.Key)
	if err != nil {
		return ""
	}
	return op.Provider
}

// deriveLease: without --lease, a call leases its claim past the longest
// provider timeout, as serve does — a dispatch to a provider slower than
// the default lease would be cut at its end and answered unknown. An
// explicit --lease stands (a person running one call chooses).
func (c *callFlags) deriveLease(fs *flag.FlagSet, cfg *config.Config) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "lease" })
	if !given {
		_, longest := longestTimeout(cfg)
		c.lease = max(c.lease, longest+leaseMargin)
	}
}

// recordedRequest: req, which this build refuses (why: the tool's
// arguments changed, a number a double cannot hold, a key with stacked
// marks), is exactly the request an older build or the tool as it was
// recorded under its key (reconcile.RecordedRequest), read from the
// ledger opened read-only — a ledger that does not exist is not created.
// A ledger an older build left at an older schema cannot be read so: it
// is opened as any call opens it (and migrated), without creating one —
// the first retry after an upgrade is the one that must get its answer.
func recordedRequest(ctx context.Context, where string, cfg *config.Config, req model.Request, why error) (*model.Prepared, bool) {
	if !model.IsCode(why, model.CodeInvalid) {
		return nil, false
	}
	l, err := openLedger(ctx, where, cfg, opening{store: store.Options{ReadOnly: true}, use: ledger.NoProviders})
	if model.IsCode(err, model.CodeUnsupported) {
		l, err = openLedger(ctx, where, cfg, opening{use: ledger.NoProviders})
	}
	if err != nil {
		return nil, false
	}
	defer l.Close()
	return reconcile.RecordedRequest(ctx, l, cfg.Tools, req, why)
}

// recordedMissingEnv is missingDispatchEnv for the provider the operation
// under req's key recorded, when it is not name (whose check passed) and
// the operation is not settled (a replay sends nothing); nil otherwise. It
// reads the ledger only when another configured provider misses a
// variable.
func recordedMissingEnv(ctx context.Context, l *ledger.Ledger, cfg *config.Config, req model.Request, name string) error {
	other := false
	for _, p := range cfg.Providers {
		if p.Name != name && p.HTTP != nil && len(p.HTTP.MissingEnv("dispatch")) > 0 {
			other = true
		}
	}
	if !other {
		return nil
	}
	op, err := l.Get(ctx, req.Tenant, req.Key)
	if err != nil || op.Provider == "" || op.Provider == name || op.State == model.StateApplied || op.State == model.StateFailed {
		return nil
	}
	return missingDispatchEnv(cfg, op.Provider, "")
}

// openForReplay opens the ledger without its providers for a call whose
// key is settled (applied or failed): its answer — a replay, a conflict, an
// expiry — reads the ledger only, so a provider file the ledger refused
// (why: missing, another ledger's) does not stop it. The providers are
// unreachable ones, which send nothing should the key have moved on since
// it was read. nil: not such a key; the refusal stands.
func openForReplay(ctx context.Context, where string, cfg *config.Config, req model.Request, why error) *ledger.Ledger {
	l, err := openLedger(ctx, where, cfg, opening{store: store.Options{LeaveWAL: true, ReadOnWriter: true}, use: ledger.NoProviders})
	if err != nil {
		return nil
	}
	op, err := l.Get(ctx, req.Tenant, req.Key)
	if err != nil || (op.State != model.StateApplied && op.State != model.StateFailed) {
		l.Close()
		return nil
	}
	reg := provider.Registry{}
	for _, p := range cfg.Providers {
		reg[p.Name] = provider.Unreachable(p.Name, p.HonoursKeys, "the provider was not opened for a replay: "+why.Error())
	}
	l.Service().Providers = reg
	return l
}

// printResult writes a call's outcome: the receipt line on stdout when done
// (or a stored failure), one clear line on stderr otherwise; the exit code
// is the class's.
func printResult(res reconcile.Result, err error, stdout, stderr io.Writer, asJSON bool) int {
	if err != nil && res.Class == "" {
		res = reconcile.Result{Class: model.ClassInternal, Message: err.Error()}
	}
	out := callOutput{Class: res.Class, Receipt: res.Receipt, NewKey: res.NewKey, State: res.State, Message: res.Message,
		RetryAfter: int((res.RetryAfter + time.Second - 1) / time.Second)}
	if res.Receipt != nil {
		out.Status = res.Receipt.Status
	}
	switch res.Class {
	case model.ClassDone, model.ClassFailed, model.ClassSuperseded:
		fmt.Fprintln(stdout, jsonLine(out))
		if res.Class != model.ClassDone {
			fmt.Fprintf(stderr, "retrysafe: %s\n", oneLine(res.Message))
		}
	default:
		if asJSON {
			out.Message = collapse(out.Message)
			fmt.Fprintln(stdout, jsonLine(out))
		}
		fmt.Fprintf(stderr, "retrysafe: %s: %s\n", res.Class, oneLine(res.Message))
	}
	return res.Class.ExitCode()
}

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sweep", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	lease := leaseFlag(fs)
	tomb := fs.Duration("tombstone-window", reconcile.DefaultTombstoneWindow,
		"how long a tombstone answers 'expired' after compaction: at least the replay window each compacted operation recorded when it settled (24h for calls)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	// The replay window is not a flag: each operation records its own when
	// it settles (the calls' 24 h), and the sweep checks the tombstone
	// window against those, before it writes anything.
	if err := reconcile.ValidateRetention(reconcile.DefaultReplayWindow, *tomb); err != nil {
		return fail(stderr, err) // before the ledger is opened: nothing touched
	}
	leaseD, err := leaseFor(fs, *lease, cfg)
	if err != nil {
		return fail(stderr, err)
	}
	l, err := openLedger(ctx, *db, cfg, opening{providerDB: *pdb, use: ledger.Resending})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Service().TombstoneWindow, l.Service().Lease = *tomb, leaseD
	rep, err := l.Service().Sweep(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		fmt.Fprintln(stdout, jsonLine(rep))
	} else {
		fmt.Fprintf(stdout, "swept %s: %d lease(s) ended → unknown, %d re-dispatched under their downstream key, %d receipt(s) compacted to tombstones, %d tombstone(s) forgotten\n",
			ledgerName(*db), rep.Unknown, rep.Redispatched, rep.Compacted, rep.Forgotten)
		if rep.NotSent > 0 {
			// Left as they are (or answered "not sent"): nothing left
			// this process for them, and they wait for the next sweep.
			fmt.Fprintf(stdout, "not sent: %d lease(s) left in progress, nothing sent for them — %s; fix that and sweep again\n",
				rep.NotSent, oneLine(rep.NotSentWhy))
		}
		if rep.Waiting > 0 {
			fmt.Fprintf(stdout, "waiting: %d lease(s) left in progress, nothing sent for them — their provider answered busy and asked to be left alone a while yet (its Retry-After, at most 5 minutes); a later sweep or call sends them\n", rep.Waiting)
		}
		if rep.OtherRequest > 0 {
			fmt.Fprintf(stdout, "not re-sent: %d of those lease(s), made unknown instead — the latest lookup of each one's downstream key found a different request there (the provider would answer with that request's result); check each at the provider, and authorize a new key to send it (they are listed by retrysafe ops list%s --state unknown --finding has-other; a new key for each: retrysafe ops supersede%s --tenant T --key K --reason TEXT)\n",
				rep.OtherRequest, show(storeFlags(*db, "")), show(ledgerFlags(*db, *pdb, *cfgPath)))
		}
		if rep.NotResent > 0 {
			// This config alone would have re-sent them: say why it did not.
			fmt.Fprintf(stdout, "not re-sent: %d of those lease(s), made unknown instead — %s; a person must reconcile them (retrysafe triage%s)\n",
				rep.NotResent, oneLine(rep.NotResentWhy), show(ledgerFlags(*db, *pdb, *cfgPath)))
		}
	}
	return exitOK
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// checkProviderName checks --provider against the config, opening nothing.
func checkProviderName(cfg *config.Config, name string) error {
	if name == "" {
		return nil
	}
	var names []string
	for _, p := range cfg.Providers {
		if p.Name == name {
			return nil
		}
		names = append(names, p.Name)
	}
	return model.Errorf(model.CodeInvalid, "--provider: no provider %q in %s (declared: %s)", name, cfg.File, strings.Join(names, ", "))
}

// explicitPayloadVersion refuses a --payload-version given below 1 (left
// out, it is the tool's).
func explicitPayloadVersion(fs *flag.FlagSet, v int) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "payload-version" && v < 1 {
			err = model.Errorf(model.CodeInvalid, "--payload-version must be between 1 and %d, got %d", model.MaxPayloadVers, v)
		}
	})
	return err
}

// builtinToolsHint adds to err, a call of a tool the config does not know,
// that no config was named — neither --config nor $RETRYSAFE_CONFIG — so
// the tools are the built-in demo ones, and how to name yours: a call
// meant for your own tools would otherwise be told only the demo's names.
func builtinToolsHint(cfg *config.Config, tool string, err error) error {
	if cfg.File != config.DefaultName || slices.Contains(cfg.Tools.Names(), tool) {
		return err
	}
	return model.Wrap(model.CodeOf(err), err, "%v — no --config was given and $%s is not set, so these are the built-in demo tools: name the config that declares yours with --config FILE (or set %s=FILE)",
		err, config.EnvVar, config.EnvVar)
}
