package cli

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// runMCP is `retrysafe mcp`: an MCP server on stdin/stdout for one tenant
// (an MCP client starts it as a subprocess). Logs go to stderr; stdout is
// the protocol's.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", stderr)
	db := fs.String("db", defaultDB(), dbUsage+"; created if missing")
	pdb := fs.String("provider-db", "", "sandbox provider file (default beside the ledger)")
	tenant := fs.String("tenant", "", "the tenant every call acts for (required)")
	callTimeout := fs.Duration("call-timeout", 30*time.Second, "deadline of one call, a busy ledger included")
	lease := leaseFlag(fs)
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (on stderr)")
	cfgPath := configFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	outliveClosedPipes()
	cfg, code, ok := loadConfig(*cfgPath, stderr)
	if !ok {
		return code
	}
	if err := model.ValidateTenant(*tenant); err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--tenant: %v", err))
	}
	leaseD, err := leaseFor(fs, *lease, cfg)
	if err != nil {
		return fail(stderr, err)
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return fail(stderr, err)
	}
	// net/http's own lines (routeStdLog) are records of this log.
	defer routeStdLog(log)()
	warnUnsetDispatchEnv(log, cfg)
	warnCallTimeout(log, cfg, *callTimeout)
	l, err := openLedger(context.Background(), *db, cfg, opening{providerDB: *pdb, store: store.Options{Create: true}, use: ledger.Dispatching})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	l.Service().Lease = leaseD
	g, err := newGateway(l, log, gateway.Config{CallTimeout: *callTimeout})
	if err != nil {
		return fail(stderr, err)
	}
	srv, err := g.MCPServer(*tenant)
	if err != nil {
		return fail(stderr, err)
	}
	// stdout carries the protocol and nothing else (logs go to stderr). A
	// malformed line is answered with a JSON-RPC error and the session
	// goes on (see gateway.StdioTransport).
	transport := gateway.StdioTransport(os.Stdin, stdout, 0)
	if err := srv.Run(ctx, transport); err != nil && ctx.Err() == nil && err != io.EOF {
		log.Error("mcp", "err", err)
		return fail(stderr, model.Wrap(model.CodeInternal, err, "mcp: %v", err))
	}
	return exitOK
}
