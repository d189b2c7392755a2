package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// Version is what the MCP server reports as its implementation version.
const Version = "0.1.0"

// keyArgument is the argument every MCP tool adds to its tool's schema: the
// idempotency key, chosen by the model and reused on every retry.
const keyArgument = "idempotency_key"

// MCPServer is an MCP server acting for one tenant: every tool of the
// catalog, each taking its own arguments plus a required idempotency_key.
func (g *Gateway) MCPServer(tenant string) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "retrysafe", Version: Version}, &mcp.ServerOptions{
		Instructions: "Every tool here is a write that is safe to call again. Choose a new idempotency_key for each new intended action " +
			"and reuse the same key when you retry that action (after a timeout, an error or a restart): the same key never acts twice. " +
			"When a tool result is an error, do what its text says.",
		Logger: g.log,
	})
	for _, name := range g.cfg.Tools.Names() {
		in, err := withKey(g.tools[name].schema)
		if err != nil {
			return nil, model.Errorf(model.CodeInvalid, "tool %s: %v", name, err)
		}
		// Idempotent: a call with the same idempotency_key has no further
		// effect (the hint speaks of same arguments; the key is one of
		// them). Whether a tool is destructive is the tool's business: the
		// hint is left to its default.
		s.AddTool(&mcp.Tool{Name: name, Description: g.cfg.Tools.Description(name), InputSchema: in,
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, g.mcpHandler(tenant, name))
	}
	return s, nil
}

// withKey is a tool's schema plus the required idempotency_key string.
func withKey(schema json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %v", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("schema type must be object, got %v", t)
	}
	m["type"] = "object"
	_, declared := m["properties"]
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, taken := props[keyArgument]; taken {
		return nil, fmt.Errorf("the tool already has an argument named %s", keyArgument)
	}
	props[keyArgument] = map[string]any{
		"type": "string", "minLength": 1, "maxLength": model.MaxKeyLen,
		"description": "The operation id: new for each new action you intend, the same on every retry of that action. The same key never acts twice.",
	}
	m["properties"] = props
	// The gateway refuses arguments the tool does not declare (see
	// unknownArgument): say so to the model where the schema is silent.
	// Not where the schema decides itself or composes (a property declared
	// in a oneOf branch would be "additional" to a JSON Schema validator).
	if declared && closedByDefault(m) {
		m["additionalProperties"] = false
	}
	req, _ := m["required"].([]any)
	m["required"] = append(append([]any{}, req...), keyArgument)
	return m, nil
}

// mcpHandler runs one MCP tool call through the same call path as HTTP.
func (g *Gateway) mcpHandler(tenant, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		trace := mcpTrace(req)
		log := g.log.With("trace_id", trace)
		key, args, err := splitKey(req.Params.Arguments)
		if err != nil {
			g.metrics.refused(tool, KindInvalid)
			log.Info("mcp call", "tenant", tenant, "tool", tool, "class", model.ClassInvalid)
			return toolError(reconcile.Result{Class: model.ClassInvalid, Message: err.Error()}, ""), nil
		}
		var why error
		if path, known := unknownArgument(g.tools[tool].args, args); path != "" {
			if !g.svc.Recorded(ctx, model.Request{Tenant: tenant, Key: key, Tool: tool, Args: args}) {
				g.metrics.refused(tool, KindInvalid)
				log.Info("mcp call", "tenant", tenant, "tool", tool, "key", key, "class", model.ClassInvalid)
				return toolError(reconcile.Result{Class: model.ClassInvalid, Message: unknownArgumentMessage(tool, path, known) + "; nothing was written"}, key), nil
			}
			why = model.Errorf(model.CodeInvalid, "%s", unknownArgumentMessage(tool, path, known))
		}
		res, err := g.call(ctx, model.Request{Tenant: tenant, Key: key, Tool: tool, Args: args, TraceID: trace}, why)
		if err != nil && (res.Class == model.ClassInternal || res.Class == model.ClassUnknown) {
			log.Warn("mcp call", "tenant", tenant, "tool", tool, "key", key, "class", res.Class, "outcome", res.Outcome, "err", withCause(err))
		} else {
			log.Info("mcp call", "tenant", tenant, "tool", tool, "key", key, "class", res.Class, "outcome", res.Outcome)
		}
		if res.Class == model.ClassDone && res.Receipt != nil {
			b, _ := json.Marshal(res.Receipt)
			var structured map[string]any
			json.Unmarshal(b, &structured)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(textsafe.JSON(b))}}, StructuredContent: structured}, nil
		}
		if errors.Is(err, reconcile.ErrCannotDispatch) {
			res.Message = misconfiguredDetail // the log has the reason, for the operator
			return toolErrorSaying(misconfiguredToDo, res, key), nil
		}
		return toolError(res, key), nil
	}
}

// misconfiguredToDo is what a model is told of a call this server cannot
// dispatch as configured (reconcile.ErrCannotDispatch).
const misconfiguredToDo = "Retry later with the same idempotency_key: this server is misconfigured (the operator must fix it) and did nothing; the request itself is fine."

// misconfiguredDetail is what the caller of a call this server cannot
// dispatch as configured (reconcile.ErrCannotDispatch) is told, over HTTP
// and MCP: the caller cannot set the server's environment, so it is told
// that the server's operator must, and not which variable or header is
// missing — that is the server's setup, said in its log (a warning per
// call, and at startup).
const misconfiguredDetail = "this server cannot send the request to the tool's provider as it is configured: its operator must fix the server's setup (its log says what is missing); nothing was sent or written; retry later with the same key"

// splitKey takes idempotency_key out of the arguments; the rest are the
// tool's arguments, byte for byte (numbers keep their spelling).
func splitKey(raw json.RawMessage) (string, []byte, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return "", nil, model.Errorf(model.CodeInvalid, "arguments must be one JSON object")
	}
	if name := twiceNamed(raw, len(m)); name != "" {
		return "", nil, model.Errorf(model.CodeInvalid, "arguments name %q twice; send each once", name)
	}
	kr, ok := m[keyArgument]
	if !ok {
		return "", nil, model.Errorf(model.CodeInvalid, "%s is required: a new id for a new action, the same id on every retry of it", keyArgument)
	}
	var key string
	if err := json.Unmarshal(kr, &key); err != nil {
		return "", nil, model.Errorf(model.CodeInvalid, "%s must be a string", keyArgument)
	}
	delete(m, keyArgument)
	args, err := json.Marshal(m)
	if err != nil {
		return "", nil, model.Errorf(model.CodeInvalid, "arguments: %v", err)
	}
	return key, args, nil
}

// twiceNamed is a member name the object raw (n distinct names, valid
// JSON) gives more than once, "" if none: the map above kept only the last
// of each, which the call (and the HTTP path, which refuses the same body)
// must not act on. Nested objects keep their bytes, and the call refuses
// duplicates in them.
func twiceNamed(raw []byte, n int) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	seen := make(map[string]bool, n)
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[name] {
			return name
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// mcpTrace is the client's id for this tool call, where it sends one: a
// W3C traceparent, or an id in the request's _meta, or the HTTP headers of
// a streamable request. The id is optional metadata the model cannot fix:
// one that is not printable UTF-8 of at most model.MaxTraceLen bytes is
// dropped, as a malformed traceparent is, and the next source (in the end
// a new random id) is used — the call runs.
func mcpTrace(req *mcp.CallToolRequest) string {
	meta := req.Params.GetMeta()
	if s, ok := meta["traceparent"].(string); ok {
		if id, ok := parseTraceparent(s); ok {
			return id
		}
	}
	for _, k := range []string{"tool_call_id", "toolCallId", "trace_id", "traceId"} {
		if s, ok := meta[k].(string); ok && s != "" && model.ValidTraceID(s) {
			return s
		}
	}
	h := http.Header{}
	if req.Extra != nil && req.Extra.Header != nil {
		h = req.Extra.Header.Clone()
		if !model.ValidTraceID(h.Get("X-Trace-Id")) {
			h.Del("X-Trace-Id")
		}
	}
	return traceID(h)
}

// whatToDo is the instruction an MCP tool error starts with: the model
// reads it and acts.
func whatToDo(res reconcile.Result) string {
	switch res.Class {
	case model.ClassInProgress:
		if heldElsewhere(res) {
			return "Retry later with the same idempotency_key: another attempt of this operation is in progress."
		}
		if res.RetryAfter > 0 {
			return fmt.Sprintf("Retry in %d seconds with the same idempotency_key: the provider answered busy, and this key is held until then (its Retry-After, at most %d seconds); this operation has not finished, and sending it again with the same key is safe.", seconds(res.RetryAfter), int(reconcile.MaxRetryAfter.Seconds()))
		}
		return "Retry later with the same idempotency_key: this operation has not finished (the provider has not answered for good), and sending it again with the same key is safe."
	case model.ClassUnknown:
		return "Stop: the outcome of this operation is unknown and a person must reconcile it. Do not retry it and do not use a new key for it."
	case model.ClassSuperseded:
		return fmt.Sprintf("Use the new key %q: an operator authorized it in place of this one.", res.NewKey)
	case model.ClassConflict:
		if reconcile.Unsettled(res.Op) {
			return "Stop: this idempotency_key was first used for another request (other arguments, or another tool), and the first request's outcome is not settled (it may have taken effect). " +
				"Resend the original request with this key; do not use a new key until a person has reconciled it."
		}
		return "Fix the request: this idempotency_key was first used for another request (other arguments, or another tool). Send the original request, or use a new key for a new action."
	case model.ClassInvalid:
		return "Fix the arguments: the request is invalid and nothing was done."
	case model.ClassExpired:
		return "Stop: this key is past its replay window; a person must reconcile it. Do not retry under a fresh key."
	case model.ClassFailed:
		return "Do not retry: the provider rejected this request for good."
	}
	return "Retry later with the same idempotency_key: the service had an internal problem."
}

// heldElsewhere reports an in_progress answer that is another attempt's
// claim, still held — not this call's own attempt, which ended without a
// final answer from the provider (not applied, busy, or no answer from a
// provider that honours keys) and left nothing in flight.
func heldElsewhere(res reconcile.Result) bool {
	return res.Outcome == model.OutcomeInProgress && res.Op != nil && res.Op.State == model.StateInProgress &&
		res.Op.LeaseOwner != "released" && res.Op.LeaseOwner != ""
}

func toolError(res reconcile.Result, key string) *mcp.CallToolResult {
	return toolErrorSaying(whatToDo(res), res, key)
}

// toolErrorSaying is toolError with its instruction, text.
func toolErrorSaying(text string, res reconcile.Result, key string) *mcp.CallToolResult {
	if msg := strings.TrimSpace(res.Message); msg != "" {
		text += " (" + string(res.Class) + ": " + msg + ")"
	}
	structured := map[string]any{"class": res.Class}
	if key != "" {
		structured["key"] = key
	}
	if res.NewKey != "" {
		structured["new_key"] = res.NewKey
	}
	if res.State != "" {
		structured["state"] = res.State
	}
	if res.Receipt != nil {
		structured["receipt"] = res.Receipt
	}
	if res.RetryAfter > 0 {
		structured["retry_after"] = seconds(res.RetryAfter)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: textsafe.Visible(text)}}, StructuredContent: structured}
}

// mcpHTTP is /mcp: streamable HTTP, stateless, so every request carries
// (and is checked for) its bearer token and the token's tenant picks the
// server.
func (g *Gateway) mcpHTTP() http.HandlerFunc {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		s, err := g.mcpServers.get(tenantOf(r.Context()), g.MCPServer)
		if err != nil {
			logger(r.Context()).Error("mcp server", "err", err)
			return nil
		}
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: g.log, MaxRequestBodyBytes: g.mcpMaxBody(),
		// The SDK's own check answered 403 text/plain; hostAllowed is the
		// same check, with the operator's proxy names, answered as every
		// other refusal.
		DisableLocalhostProtection: true})
	return func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r) {
			p := newProblem(KindInvalid, "Host "+strconv.Quote(r.Host)+" is not a loopback name, and this gateway listens on loopback: /mcp refuses it "+
				"(DNS-rebinding protection); a reverse proxy on this host that keeps the Host header is allowed with serve --mcp-allowed-host NAME; nothing was run")
			p.Status = http.StatusForbidden
			p.write(w)
			return
		}
		// Stateless: no GET stream, no session to DELETE (the SDK's
		// 405 was text/plain).
		if r.Method != http.MethodPost {
			g.methodNotAllowed("POST")(w, r)
			return
		}
		// A body over the limit is the gateway's 413, as on
		// /v1/tools (the SDK's was text/plain).
		if max := g.mcpMaxBody(); r.ContentLength > max {
			tooLarge(r.ContentLength, max).write(w)
			return
		}
		// The content type as on /v1/tools: one header, application/json
		// or a +json type, in UTF-8 (the SDK took two headers, and
		// refused a +json type in text/plain). The SDK then reads it as
		// application/json.
		if n := len(r.Header.Values("Content-Type")); n > 1 {
			newProblem(KindInvalid, "Content-Type header given "+strconv.Itoa(n)+" times; send it once; nothing was run").write(w)
			return
		}
		if p := checkContentType(r.Header.Get("Content-Type")); p != nil {
			w.Header().Set("Accept-Post", "application/json")
			p.write(w)
			return
		}
		r.Header.Set("Content-Type", "application/json")
		// Every message is checked before the SDK reads it, as on stdio
		// (checkMessage): a batch is one request — one slot of MaxInFlight
		// — that the SDK ran as many tool calls at once as fit in the body;
		// an id the SDK cannot answer under exactly was answered under
		// another (the call ran); a message without a method it took for a
		// response and dropped (202 and nothing); and what it could not
		// decode it answered 400 text/plain, repeating the body. Each gets
		// a JSON-RPC error object here, and nothing runs. bodyFirst has
		// the body in memory.
		if b, ok := r.Body.(*bufferedBody); ok && r.Method == http.MethodPost {
			if p := unreadBody(b.err); p != nil {
				p.write(w)
				return
			}
			if b.err != nil { // over the limit (chunked, or no length declared)
				tooLarge(-1, g.mcpMaxBody()).write(w)
				return
			}
			bad := checkMessage(b.b, "request")
			if bad != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(bad)
				return
			}
		}
		sw := &sdkRefusal{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		sw.finish()
	}
}

// sdkRefusal passes the SDK's answers through, except a refusal it writes
// as text/plain (an Accept without application/json and
// text/event-stream, an unsupported MCP-Protocol-Version, whatever a
// newer SDK adds): that becomes the gateway's problem document, with the
// same status and the SDK's words as its detail.
type sdkRefusal struct {
	http.ResponseWriter
	status int
	text   []byte
}

// maxSDKText bounds the SDK's words kept for a detail.
const maxSDKText = 512

func (s *sdkRefusal) WriteHeader(code int) {
	if s.status == 0 && code >= 400 && strings.HasPrefix(s.Header().Get("Content-Type"), "text/plain") {
		s.status = code
		return
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sdkRefusal) Write(b []byte) (int, error) {
	if s.status == 0 {
		return s.ResponseWriter.Write(b)
	}
	if room := maxSDKText - len(s.text); room > 0 {
		s.text = append(s.text, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (s *sdkRefusal) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok && s.status == 0 {
		f.Flush()
	}
}

func (s *sdkRefusal) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// finish writes the problem document of a refusal it held back.
func (s *sdkRefusal) finish() {
	if s.status == 0 {
		return
	}
	h := s.Header()
	h.Del("Content-Type")
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	k := KindInvalid
	if s.status >= 500 {
		k = KindInternal
	}
	detail := strings.TrimSpace(strings.ToValidUTF8(string(s.text), "\ufffd"))
	if detail == "" {
		detail = http.StatusText(s.status)
	}
	p := newProblem(k, detail+"; nothing was run")
	p.Status = s.status
	if s.status == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
		h.Set("Allow", "POST")
	}
	p.write(s.ResponseWriter)
}

// hostAllowed is the SDK's DNS-rebinding check: a request that arrived on
// a loopback address must name a loopback host (localhost, 127.0.0.1,
// [::1]) — or one of Config.MCPAllowedHosts.
func (g *Gateway) hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) || isLoopback(r.Host) {
		return true
	}
	host := hostOnly(r.Host)
	for _, h := range g.cfg.MCPAllowedHosts {
		if strings.EqualFold(hostOnly(h), host) {
			return true
		}
	}
	return false
}

// hostOnly is a Host header's (or address's) name without its port or
// IPv6 brackets.
func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return strings.Trim(addr, "[]")
}

func isLoopback(addr string) bool {
	host := hostOnly(addr)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// mcpMaxBody bounds a request to /mcp: the arguments' limit and room for
// the JSON-RPC envelope and the key.
func (g *Gateway) mcpMaxBody() int64 { return g.cfg.MaxBody + 4096 }

// mcpServers are the MCP servers of the tenants that called POST /mcp, built
// once each (the SDK takes one server for many requests): building one
// converts every tool's schema, and the SDK logs an error for each tool name
// MCP does not take — per request, that was log lines at the rate any token
// holder chose. Past maxMCPServers tenants it starts over.
type mcpServers struct {
	mu sync.Mutex
	m  map[string]*mcp.Server
}

const maxMCPServers = 1024

func (c *mcpServers) get(tenant string, build func(string) (*mcp.Server, error)) (*mcp.Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[tenant]; ok {
		return s, nil
	}
	s, err := build(tenant)
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) >= maxMCPServers {
		c.m = map[string]*mcp.Server{}
	}
	c.m[tenant] = s
	return s, nil
}
