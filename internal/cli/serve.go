package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// runServe is `retrysafe serve`: the gateway over HTTP (and MCP at /mcp)
// until SIGTERM or SIGINT, then a graceful stop: no new connections, the
// calls in flight finish and are answered, then the ledger closes.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	db := fs.String("db", defaultDB(), dbUsage+"; created if missing")
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free one; the address is printed)")
	maxInFlight := fs.Int("max-in-flight", 256, "requests worked on at once; more wait --queue-wait, then get 503 + Retry-After")
	queueWait := fs.Duration("queue-wait", time.Second, "how long a request waits for a free slot")
	callTimeout := fs.Duration("call-timeout", 30*time.Second, "deadline of one call, a busy ledger included")
	lease := leaseFlag(fs)
	tokenTTL := fs.Duration("token-ttl", time.Second, "how long a token found live is trusted before the ledger is read again (a revocation takes effect within it; 0 reads every time)")
	grace := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGTERM, how long in-flight requests may take to finish")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to FILE (go tool pprof)")
	var allowedHosts keyList
	fs.Var(&allowedHosts, "mcp-allowed-host", "a Host name /mcp also answers when listening on loopback (repeatable): a reverse proxy on this host that keeps the client's Host header; any other non-loopback Host is refused 403 (DNS-rebinding protection)")
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	outliveClosedPipes()
	for _, h := range allowedHosts {
		if h == "" || strings.ContainsAny(h, " \t/\\@?#,") || !textsafe.Clean(h) {
			return fail(stderr, model.Errorf(model.CodeInvalid, "--mcp-allowed-host must be a host name (optionally :port), got %q", h))
		}
	}
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	leaseD, err := leaseFor(fs, *lease, cfg)
	if err != nil {
		return fail(stderr, err)
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
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return fail(stderr, err)
	}
	// net/http's own lines (routeStdLog) are records of this log.
	defer routeStdLog(log)()
	if *maxInFlight < 1 || *queueWait <= 0 || *callTimeout <= 0 || *grace <= 0 || *tokenTTL < 0 {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--max-in-flight, --queue-wait, --call-timeout and --shutdown-timeout must be positive, --token-ttl not negative"))
	}
	// The address first: one it cannot listen on is bad input, which
	// creates no ledger (nor a provider file beside it).
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot listen on %s: %v", *listen, err))
	}
	defer ln.Close()
	l, err := openLedger(context.WithoutCancel(ctx), *db, cfg, opening{providerDB: *pdb, store: store.Options{Create: true}, use: ledger.Dispatching})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Service().Lease = leaseD
	// This host's clock against the database server's (PostgreSQL): said
	// in the log when more than 1 s off, at open and as it changes.
	stopClock := watchClock(l.Store(), log)
	defer stopClock()
	ttl := *tokenTTL
	if ttl == 0 {
		ttl = -1 // the gateway's "never trust a cached token"
	}
	g, err := newGateway(l, log, gateway.Config{MaxInFlight: *maxInFlight, QueueWait: *queueWait, CallTimeout: *callTimeout, TokenTTL: ttl,
		MCPAllowedHosts: allowedHosts})
	if err != nil {
		return fail(stderr, err)
	}
	longRunGC()
	srv := g.Server(*listen)
	// The one line on stdout: scripts (and the tests) read the address.
	// The ledger as people may see it: a postgres:// URL without its
	// password (stdout and the log go where the password must not).
	where := l.Store().Path()
	warnUnsetDispatchEnv(log, cfg)
	warnCallTimeout(log, cfg, *callTimeout)
	// The log line first: whoever reads the address may stop serve at once.
	log.Info("listening", append([]any{"addr", ln.Addr().String(), "ledger", where, "tools", len(l.Service().Tools.Names()), "lease", leaseD.String()}, clockAttrs(l.Store())...)...)
	fmt.Fprintf(stdout, "retrysafe serve: listening on http://%s (ledger %s)\n", ln.Addr(), textsafe.Visible(where))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fail(stderr, model.Wrap(model.CodeUnavailable, err, "serve: %v", err))
	case <-ctx.Done():
	}
	log.Info("stopping: no new connections; finishing requests in flight", "grace", grace.String())
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	cut := int64(-1)
	if err := srv.Shutdown(sctx); err != nil {
		// Past the grace period: connections still open are cut. Their calls
		// were not acknowledged; a retry with the same key is safe.
		cut = g.InFlight()
		log.Warn("shutdown grace period ended with requests still open", "err", err, "cut", cut)
		srv.Close()
		// Their calls go on (detached from the cut connections, each
		// bounded by --call-timeout): wait for them before the ledger
		// closes, so what a provider answered is recorded, not left in
		// progress for a sweep.
		if left := waitCalls(g, *callTimeout+time.Second); left > 0 {
			log.Warn("calls still running at --call-timeout; closing the ledger under them (a sweep settles them)", "calls", left)
		}
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
	}
	log.Info("stopped")
	if cut >= 0 {
		// Not a clean stop: a service manager (or a deploy script) must
		// not read it as one.
		fmt.Fprintf(stderr, "retrysafe: serve: --shutdown-timeout (%s) ended with connections still open; they were cut, %d request(s) among them still being worked on, unanswered (their callers may retry with the same key)\n", grace, cut)
		return exitInternal
	}
	return exitOK
}

// newGateway wires a gateway to an open ledger and the tool registry.
func newGateway(l *ledger.Ledger, log *slog.Logger, cfg gateway.Config) (*gateway.Gateway, error) {
	host, _ := os.Hostname()
	cfg.Service, cfg.Tools, cfg.Logger = l.Service(), toolCatalog{l.Service().Tools}, log
	cfg.Worker = fmt.Sprintf("gateway:%s:%d", host, os.Getpid())
	return gateway.New(cfg)
}

// newLogger is the gateway's slog logger on stderr: JSON when stderr is not
// a terminal (a service manager, a log shipper), text when a person reads it.
func newLogger(stderr io.Writer, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, model.Errorf(model.CodeInvalid, "--log-level must be debug, info, warn or error")
	}
	opts := &slog.HandlerOptions{Level: lv}
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	}
	return slog.New(slog.NewJSONHandler(jsonLines{stderr}, opts)), nil
}

// jsonLines escapes the C1 and bidirectional controls slog's JSON leaves
// raw (a refused key or trace id as the client sent it), for whoever reads
// the log with tail or less. slog writes each record whole, in one Write.
type jsonLines struct{ w io.Writer }

func (j jsonLines) Write(p []byte) (int, error) {
	if _, err := j.w.Write(textsafe.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// waitCalls waits up to d for the gateway's calls in flight to end and
// says how many had not.
func waitCalls(g *gateway.Gateway, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for g.InFlight() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return g.InFlight()
}

// warnUnsetDispatchEnv warns, once at startup, of every provider whose
// dispatch reads a ${NAME} this process does not have: serve and mcp
// start (other tools work), and each call to it is refused — 503
// /problems/misconfigured, nothing written — until the variable is set and
// the server restarted. It names the variables, never a value.
func warnUnsetDispatchEnv(log *slog.Logger, cfg *config.Config) {
	for _, p := range cfg.Providers {
		if p.HTTP == nil {
			continue
		}
		if missing := p.HTTP.MissingEnv("dispatch"); len(missing) > 0 {
			log.Warn("provider cannot dispatch: its dispatch reads environment variables not set for this process; every call to it is refused (503 misconfigured, nothing written) until they are set and the server restarted",
				"provider", p.Name, "unset", "$"+strings.Join(missing, ", $"))
		}
	}
}
