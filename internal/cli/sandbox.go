package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

const sandboxUsage = `Usage:
  retrysafe sandbox serve [--listen 127.0.0.1:8025] [--db FILE] [--fault F] [--honour-keys NAMES]

Serves the sandbox provider over HTTP, a stand-in third party for the HTTP
provider (kind = "http"):
  POST   /v1/{provider}/deliveries        JSON body, Idempotency-Key header → 201 {"id": "sbx_N"}
  GET    /v1/{provider}/deliveries/{key}  → 200 {"id", "count", "created_at"} or 404
  POST   /_sandbox/faults                 {"fault": "drop-after-apply", "count": 1} queues faults
  DELETE /_sandbox/faults                 clears them
Faults: drop-after-apply, delay=DURATION, reject (422), 5xx (500), busy (429),
  fail-before (503, nothing applied), stall=DURATION (then drop, nothing applied).
A delivery request may pick its own fault with X-Sandbox-Fault: FAULT, and
date the delivery with X-Sandbox-Time: RFC3339 (not later than now, at most
7 days back) — sandbox-only headers, for a caller playing an earlier clock.
`

func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, groupHelp("sandbox", sandboxUsage))
			return exitOK
		}
		fmt.Fprint(stderr, "retrysafe sandbox: which one? serve\n\n"+sandboxUsage)
		return exitInvalid
	}
	fs := newFlags("sandbox serve", stderr)
	listen := fs.String("listen", "127.0.0.1:8025", "address to listen on (port 0 picks a free one; the address is printed)")
	db := fs.String("db", "sandbox.db", "the sandbox's deliveries file (created if missing)")
	faultFlag := fs.String("fault", "", "a fault every dispatch meets: drop-after-apply, delay=DURATION, reject, 5xx, busy")
	honour := fs.String("honour-keys", "sandbox-idem", "comma-separated provider names that answer a repeated key with the first delivery")
	if code, ok := parseFlags(fs, args[1:], stdout, stderr); !ok {
		return code
	}
	outliveClosedPipes()
	fault, err := sandbox.ParseFault(*faultFlag)
	if err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--fault: %v", err))
	}
	if dir := filepath.Dir(*db); !isDir(dir) {
		return fail(stderr, model.Errorf(model.CodeUnavailable, "--db %s: directory %s does not exist", *db, dir))
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "--listen %q: %v", *listen, err))
	}
	var names []string
	for _, n := range strings.Split(*honour, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(stderr, model.Wrap(model.CodeUnavailable, err, "--listen %s: %v", *listen, err))
	}
	sb, err := sandbox.Open(*db)
	if err != nil {
		ln.Close()
		return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox %s: %v", *db, err))
	}
	defer sb.Close()
	srv := &http.Server{Handler: sandbox.NewServer(sb, names, fault).Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "sandbox serving http://%s (deliveries in %s; honouring keys: %s)\n", ln.Addr(), show(*db), strings.Join(names, ", "))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(stderr, model.Wrap(model.CodeUnavailable, err, "sandbox: %v", err))
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}
	return exitOK
}
