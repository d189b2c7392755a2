// Package gateway is retrysafe's long-running front door for agents and
// services: HTTP with the IETF Idempotency-Key semantics, and MCP. It runs
// every call through reconcile.Service — the same classification, the same
// ledger, the same words as `retrysafe call` — and maps each class to one
// HTTP status and one RFC 9457 problem type. It never imports a ledger
// driver: the command line hands it a store.Ledger and a Service.
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Catalog is all the gateway needs of the tool registry: which tools it
// serves and each one's JSON Schema of arguments. The command line adapts
// the registry to it, so the gateway does not care where tools come from.
type Catalog interface {
	// Names lists the tools, in a stable order.
	Names() []string
	// Schema is a tool's JSON Schema of its arguments (an object schema);
	// false if there is no such tool.
	Schema(name string) (json.RawMessage, bool)
	// Description says in one line what the tool does (MCP shows it to
	// the model).
	Description(name string) string
}

// Config is a gateway's wiring and limits. Zero limits take the defaults.
type Config struct {
	Service *reconcile.Service
	Tools   Catalog
	Logger  *slog.Logger
	// Worker is recorded with every attempt (default "gateway").
	Worker string

	// MaxBody bounds a request body (default model.MaxArgsBytes, 64 KiB:
	// larger arguments could never be accepted anyway).
	MaxBody int64
	// MaxInFlight caps the calls being worked on at once (default 256);
	// QueueWait is how long one more waits for a slot before it is told 503
	// with Retry-After (default 1 s).
	MaxInFlight int
	QueueWait   time.Duration
	// CallTimeout bounds one call, a busy ledger included (default 30 s).
	CallTimeout time.Duration
	// RetryAfter is what 409 and 503 tell the caller to wait (default 1 s).
	RetryAfter time.Duration
	// TokenTTL is how long a token found live is trusted without reading
	// the ledger again: a revocation takes effect within it. 0 takes the
	// default (1 s); negative reads the ledger on every request.
	TokenTTL time.Duration
	// MCPAllowedHosts are Host names /mcp answers besides loopback ones
	// when the gateway listens on loopback: a reverse proxy on the same
	// host that keeps the client's Host header. Any other Host on a
	// loopback listener is refused (DNS-rebinding protection: a page in a
	// browser on this machine must not reach the gateway under its own
	// name). Compared without the port, case-insensitively.
	MCPAllowedHosts []string
}

// Gateway serves HTTP and MCP over one ledger.
type Gateway struct {
	cfg     Config
	svc     *reconcile.Service
	ledger  store.Ledger
	log     *slog.Logger
	slots   chan struct{}
	metrics *metrics
	tokens  *tokenCache
	// checked are arguments found to declare nothing unknown before.
	checked argsChecked
	// receipts are answer bodies of receipts answered before.
	receipts receiptBodies
	// mcpServers are the tenants' MCP servers for POST /mcp.
	mcpServers mcpServers
	// tools are the catalog's tools read once at New: a request looks its
	// tool up here instead of asking the catalog (which may build a schema
	// per call) every time.
	tools map[string]toolInfo
	// active counts the requests being handled (InFlight).
	active atomic.Int64
}

// InFlight is how many requests the handler is working on now: at the
// end of a graceful stop's deadline, the ones about to be cut.
func (g *Gateway) InFlight() int64 { return g.active.Load() }

// toolInfo is what the gateway keeps of one tool of the catalog.
type toolInfo struct {
	schema json.RawMessage
	// args is the schema decoded, for unknownArgument.
	args map[string]any
}

// New checks cfg and builds a gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Service == nil || cfg.Service.Store == nil {
		return nil, model.Errorf(model.CodeInvalid, "gateway: no ledger")
	}
	if cfg.Tools == nil {
		return nil, model.Errorf(model.CodeInvalid, "gateway: no tools")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Worker == "" {
		cfg.Worker = "gateway"
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = model.MaxArgsBytes
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 256
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.RetryAfter < time.Second {
		cfg.RetryAfter = time.Second
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = time.Second
	}
	g := &Gateway{cfg: cfg, svc: cfg.Service, ledger: cfg.Service.Store, log: cfg.Logger,
		slots: make(chan struct{}, cfg.MaxInFlight), tokens: &tokenCache{ttl: cfg.TokenTTL}, tools: map[string]toolInfo{}}
	for _, name := range cfg.Tools.Names() {
		schema, ok := cfg.Tools.Schema(name)
		if !ok {
			return nil, model.Errorf(model.CodeInvalid, "gateway: tool %s is listed but has no schema", name)
		}
		if _, err := withKey(schema); err != nil {
			return nil, model.Errorf(model.CodeInvalid, "gateway: tool %s: %v", name, err)
		}
		var args map[string]any
		json.Unmarshal(schema, &args) // an object: withKey read it
		g.tools[name] = toolInfo{schema: schema, args: args}
	}
	if u, ok := g.ledger.(unplacer); ok {
		u.Unplace()
	}
	g.metrics = newMetrics(g.ledger, cfg.Tools.Names())
	return g, nil
}

// unplacer is a ledger that can leave where it lives (its file's path, or
// its URL's host, user, database and schema) out of its errors: the
// operator's to know (the console and ops show say it), and the gateway's
// answers — /healthz's too — go to anyone. The place is left out where the
// store would have put it: replacing its letters in a whole message
// afterwards also rewrote the caller's own words (serve --db e turned
// create_support_task into "crthe ledgeratthe ledger_support_task").
type unplacer interface{ Unplace() }

// retryAfter is the Retry-After value in whole seconds.
func (g *Gateway) retryAfter() int { return seconds(g.cfg.RetryAfter) }

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// Handler is the gateway's HTTP interface:
//
//	POST /v1/tools/{tool}        a call (Idempotency-Key, Bearer token)
//	GET  /v1/operations/{key}    one of the token's tenant's operations
//	GET  /v1/operations?state=S  a page of them, newest first
//	POST /mcp                    MCP, streamable HTTP (stateless)
//	GET  /healthz, /metrics      liveness, Prometheus
//	GET  /problems/{kind}        what a problem type means
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tools/{tool}", g.bodyFirst(g.cfg.MaxBody, g.postTool))
	mux.HandleFunc("/v1/tools/{tool}", g.methodNotAllowed("POST"))
	mux.HandleFunc("GET /v1/operations/{key...}", g.limited(g.authed(g.getOperation)))
	mux.HandleFunc("/v1/operations/{key...}", g.methodNotAllowed("GET"))
	mux.HandleFunc("GET /v1/operations", g.limited(g.authed(g.listOperations)))
	mux.HandleFunc("/v1/operations", g.methodNotAllowed("GET"))
	mux.Handle("/mcp", g.bodyFirst(g.mcpMaxBody(), g.mcpHTTP()))
	mux.HandleFunc("GET /healthz", g.healthz)
	mux.HandleFunc("/healthz", g.methodNotAllowed("GET"))
	mux.Handle("GET /metrics", g.metrics.handler())
	mux.HandleFunc("/metrics", g.methodNotAllowed("GET"))
	mux.HandleFunc("GET /problems/{kind}", problemDocs)
	mux.HandleFunc("/problems/{kind}", g.methodNotAllowed("GET"))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		newProblem(KindNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path).write(w)
	})
	h := g.observe(asSent(mux))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.active.Add(1)
		defer g.active.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// asSent serves a request whose path is clean — no empty, "." or ".."
// segment — and answers any other 404 "no such endpoint": the ServeMux
// answered it with a redirect to the cleaned path (307, text/html), which
// a client follows to another resource than it named (a key "." or ".."
// is spelt %2E, see operationPath).
func asSent(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); p != cleanPath(p) {
			newProblem(KindNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path+
				" (a path with an empty, . or .. segment is not cleaned or redirected; a key . or .. is spelt %2E)").write(w)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is p as the ServeMux cleans it (path.Clean, a trailing slash
// kept).
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// Server is an http.Server for the handler with the gateway's timeouts:
// slow or stalled clients cannot hold connections and slots for long.
func (g *Gateway) Server(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           g.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		// A call may wait out a busy ledger and an external dispatch
		// (reconcile's dispatch timeout) before it answers.
		WriteTimeout:   g.cfg.CallTimeout + 15*time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 32 << 10,
		ErrorLog:       slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
	}
}

func (g *Gateway) methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		p := newProblem(KindInvalid, r.Method+" is not allowed here; use "+allow)
		p.Status = http.StatusMethodNotAllowed
		p.write(w)
	}
}

func (g *Gateway) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if wr, ok := g.ledger.(store.WriteRefuser); ok {
		if err := wr.WritesRefused(); err != nil {
			noteErr(r.Context(), err)
			p := newProblem(KindBusy, "ledger refuses writes: "+err.Error())
			p.RetryAfter = g.retryAfter()
			p.write(w)
			return
		}
	}
	if _, err := g.ledger.Counts(ctx, ""); err != nil {
		noteErr(r.Context(), err)
		p := newProblem(KindBusy, "ledger not readable: "+err.Error())
		p.RetryAfter = g.retryAfter()
		p.write(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// limited caps the calls in flight. One more waits up to QueueWait for a
// slot, then gets 503 with Retry-After — before anything is read or written.
func (g *Gateway) limited(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !g.acquire(w, r) {
			return
		}
		defer g.release()
		next(w, r)
	}
}

// acquire takes a slot: false, with the 503 written, if none frees up
// within QueueWait (or the client left).
func (g *Gateway) acquire(w http.ResponseWriter, r *http.Request) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.cfg.QueueWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
		g.metrics.shed.Inc()
		p := newProblem(KindBusy, "the gateway is at its limit of concurrent requests; retry later with the same key")
		p.RetryAfter = g.retryAfter()
		p.write(w)
	case <-r.Context().Done():
	}
	return false
}

func (g *Gateway) release() { <-g.slots }

// bodyFirst is limited(authed(next)) for a request whose body is the
// work's input, with the body read in between, outside any slot: a client
// that sends its headers and then trickles its body (up to the server's
// read timeout) holds a connection, never one of the MaxInFlight slots —
// else as many slow clients as slots turned every other caller away. The
// token is checked within a slot (a miss reads the ledger), the body is
// read through a limit of max bytes, and next gets a slot again with the
// body in memory. A body over max, or one that fails to arrive, is left
// to next to refuse in its own words: r.Body then yields what arrived and
// the read's error.
func (g *Gateway) bodyFirst(max int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !g.acquire(w, r) {
			return
		}
		ok := g.authenticate(w, r)
		g.release()
		if !ok {
			return
		}
		if r.ContentLength <= max { // a declared length over it: refused unread
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
			r.Body = &bufferedBody{Reader: bytes.NewReader(b), b: b, err: err}
		}
		if !g.acquire(w, r) {
			return
		}
		defer g.release()
		next(w, r)
	}
}

// bufferedBody is a request body read by bodyFirst: its bytes, then the
// read's error, if any, in place of io.EOF.
type bufferedBody struct {
	*bytes.Reader
	b   []byte
	err error
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *bufferedBody) Close() error { return nil }

// readBody is r's body read through a limit of max bytes: bodyFirst's
// bytes as they are when it read them whole within that limit.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if b, ok := r.Body.(*bufferedBody); ok && b.err == nil && int64(len(b.b)) <= max {
		return b.b, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

// call runs one attempt through the service: the one path HTTP and MCP
// share. The call is not cancelled when the client goes away: once its
// request is accepted it finishes and is recorded (the client may come back
// with the same key), bounded by CallTimeout. why, when set, is the
// gateway's own refusal of its arguments, which only the very request
// recorded under its key passes — to be answered, never made
// (reconcile.Service.CallRecorded).
func (g *Gateway) call(ctx context.Context, req model.Request, why error) (reconcile.Result, error) {
	req.WorkerID = g.cfg.Worker
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	var (
		res reconcile.Result
		err error
	)
	if why != nil {
		res, err = g.svc.CallRecorded(ctx, req, reconcile.CallOptions{}, why)
	} else {
		res, err = g.svc.Call(ctx, req, reconcile.CallOptions{})
	}
	if err != nil && res.Class == "" {
		res = reconcile.Result{Class: model.ClassInternal, Message: err.Error()}
	}
	g.metrics.observeCall(req.Tool, res, time.Since(start))
	return res, err
}
