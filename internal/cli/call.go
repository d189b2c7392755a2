package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/config"
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
	fs.StringVar(&c.db, "db", defaultDB(), "ledger file")
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
	fs.BoolVar(&c.retry, "retry", false, "retry retryable outcomes with backoff and jitter, same key (5 attempts within 30s)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "overall deadline of the call (waits out a busy ledger within it)")
	fs.DurationVar(&c.lease, "lease", reconcile.DefaultLease, "lease of an external dispatch before a sweep may call it unknown")
}

func (c *callFlags) request() (model.Request, error) {
	raw := []byte(c.args)
	switch {
	case c.args == "-":
		b, err := io.ReadAll(io.LimitReader(os.Stdin, model.MaxArgsBytes+1))
		if err != nil {
			return model.Request{}, model.Errorf(model.CodeInvalid, "reading --args from stdin: %v", err)
		}
		raw = b
	case strings.HasPrefix(c.args, "@"):
		b, err := os.ReadFile(c.args[1:])
		if err != nil {
			return model.Request{}, model.Errorf(model.CodeInvalid, "reading --args file: %v", err)
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

// parse turns the flags into a request and the sandbox faults to apply.
func (c *callFlags) parse() (model.Request, provider.Faults, error) {
	req, err := c.request()
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
}

func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c callFlags
	fs := newFlags("call", stderr)
	c.register(fs)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := explicitPayloadVersion(fs, c.payloadVersion); err != nil {
		return fail(stderr, err)
	}
	cfg, code, ok := loadConfig(c.config, stderr)
	if !ok {
		return code
	}
	req, faults, err := c.parse()
	if err != nil {
		return fail(stderr, err)
	}
	// Validate before opening (let alone creating) anything: bad input
	// writes nothing, not even a new empty ledger file.
	if _, err := cfg.Tools.Prepare(req); err != nil {
		return fail(stderr, err)
	}
	if c.timeout <= 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--timeout must be positive, got %v", c.timeout))
	}
	if c.lease <= 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--lease must be positive, got %v", c.lease))
	}
	if c.providerDB != "" {
		// Refused before the ledger is created, not after.
		if dir := filepath.Dir(c.providerDB); !isDir(dir) {
			return fail(stderr, model.Errorf(model.CodeUnavailable, "cannot open sandbox provider %s: directory %s does not exist", c.providerDB, dir))
		}
	}
	if err := checkProviderName(cfg, c.prov); err != nil {
		return fail(stderr, err)
	}
	l, err := openLedger(c.db, c.providerDB, cfg, dispatching, store.Options{Create: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Svc.Lease = c.lease
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	opt := reconcile.CallOptions{Provider: c.prov, Faults: faults}
	var res reconcile.Result
	if c.retry {
		p := reconcile.DefaultPolicy()
		p.Deadline = c.timeout
		res, _, err = l.Svc.CallWithRetry(ctx, req, opt, p)
	} else {
		res, err = l.Svc.Call(ctx, req, opt)
	}
	return printResult(res, err, stdout, stderr)
}

// printResult writes a call's outcome: the receipt line on stdout when done
// (or a stored failure), one clear line on stderr otherwise; the exit code
// is the class's.
func printResult(res reconcile.Result, err error, stdout, stderr io.Writer) int {
	if err != nil && res.Class == "" {
		res = reconcile.Result{Class: model.ClassInternal, Message: err.Error()}
	}
	out := callOutput{Class: res.Class, Receipt: res.Receipt, NewKey: res.NewKey, State: res.State, Message: res.Message}
	if res.Receipt != nil {
		out.Status = res.Receipt.Status
	}
	switch res.Class {
	case model.ClassDone, model.ClassFailed, model.ClassSuperseded:
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
		if res.Class != model.ClassDone {
			fmt.Fprintf(stderr, "retrysafe: %s\n", oneLine(res.Message))
		}
	default:
		fmt.Fprintf(stderr, "retrysafe: %s: %s\n", res.Class, oneLine(res.Message))
	}
	return res.Class.ExitCode()
}

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sweep", stderr)
	db := fs.String("db", defaultDB(), "ledger file")
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	replay := fs.Duration("replay-window", reconcile.DefaultReplayWindow, "how long receipts replay (operations record their own expiry when settled)")
	tomb := fs.Duration("tombstone-window", reconcile.DefaultTombstoneWindow, "how long a tombstone answers 'expired' after compaction")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	l, err := openLedger(*db, *pdb, cfg, dispatching, store.Options{})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Svc.ReplayWindow, l.Svc.TombstoneWindow = *replay, *tomb
	rep, err := l.Svc.Sweep(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "swept %s: %d lease(s) ended → unknown, %d re-dispatched under their downstream key, %d receipt(s) compacted to tombstones, %d tombstone(s) forgotten\n",
			*db, rep.Unknown, rep.Redispatched, rep.Compacted, rep.Forgotten)
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
