package gateway_test

// Every refusal of the gateway is one of its problem documents (or, for a
// JSON-RPC message on /mcp, a JSON-RPC error): never the MCP SDK's
// text/plain, never Go's ServeMux redirect; /mcp refuses a content type
// as /v1/tools does; a depth or a byte order mark that makes a body
// unreadable is named.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// raw sends a request without following redirects.
func (e *env) raw(method, path, body string, hdr ...string) reply {
	e.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e.send(c, method, path, body, hdr...)
}

const pingMessage = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

func TestRefusalsAreProblemDocuments(t *testing.T) {
	e := newEnv(t)
	if r := e.call("acme", "create_support_task", "k1", task); r.status != 201 {
		t.Fatalf("setup: %d %s", r.status, r.body)
	}
	auth := "Bearer " + e.tokens["acme"]
	mcpHeaders := func(extra ...string) []string {
		h := []string{"Authorization", auth, "Accept", "application/json, text/event-stream"}
		return append(h, extra...)
	}
	for _, c := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		allow                    string // the Allow header a 405 carries
		detail                   string // a part of the detail
	}{
		{"mcp: Accept without application/json", "POST", "/mcp", pingMessage,
			[]string{"Authorization", auth, "Content-Type", "application/json", "Accept", "text/event-stream"}, 400, "", "Accept"},
		{"mcp: an unsupported protocol version", "POST", "/mcp", pingMessage,
			mcpHeaders("Content-Type", "application/json", "MCP-Protocol-Version", "1999-01-01"), 400, "", "protocol version"},
		{"mcp: GET", "GET", "/mcp", "", mcpHeaders(), 405, "POST", "GET is not allowed"},
		{"mcp: DELETE", "DELETE", "/mcp", "", mcpHeaders(), 405, "POST", "DELETE is not allowed"},
		{"mcp: text/plain", "POST", "/mcp", pingMessage, mcpHeaders("Content-Type", "text/plain"), 415, "", "Content-Type must be application/json"},
		{"mcp: no Content-Type", "POST", "/mcp", pingMessage, mcpHeaders(), 415, "", "Content-Type must be application/json"},
		{"mcp: two Content-Types", "POST", "/mcp", pingMessage,
			mcpHeaders("Content-Type", "application/json", "Content-Type", "application/json"), 400, "", "Content-Type header given 2 times"},
		{"a . segment", "GET", "/v1/operations/.", "", []string{"Authorization", auth}, 404, "", "no such endpoint"},
		{"a .. segment", "GET", "/v1/tools/../operations/k1", "", []string{"Authorization", auth}, 404, "", "no such endpoint"},
		{"an empty segment", "GET", "//v1/operations/k1", "", []string{"Authorization", auth}, 404, "", "no such endpoint"},
		{"a POST of a . segment", "POST", "/v1/tools/./create_support_task", task, []string{"Authorization", auth}, 404, "", "no such endpoint"},
		{"no key", "GET", "/v1/operations/", "", []string{"Authorization", auth}, 404, "", "no such endpoint"},
		{"an unknown parameter of one operation", "GET", "/v1/operations/k1?x=1", "", []string{"Authorization", auth}, 400, "", `unknown query parameter "x"`},
		{"POST /healthz", "POST", "/healthz", "", nil, 405, "GET", "POST is not allowed"},
		{"POST /metrics", "POST", "/metrics", "", nil, 405, "GET", "POST is not allowed"},
		{"POST /problems/invalid", "POST", "/problems/invalid", "", nil, 405, "GET", "POST is not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.raw(c.method, c.path, c.body, c.hdr...)
			var p struct {
				Type   string `json:"type"`
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			if r.status != c.status || r.header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(r.body, &p) != nil ||
				p.Status != c.status || !strings.Contains(p.Detail, c.detail) {
				t.Fatalf("%d %q %s; want %d, a problem document saying %q", r.status, r.header.Get("Content-Type"), r.body, c.status, c.detail)
			}
			if r.header.Get("Allow") != c.allow {
				t.Fatalf("Allow %q; want %q", r.header.Get("Allow"), c.allow)
			}
		})
	}
	// The key of an operation named "." is still read, percent-encoded.
	if r := e.raw("GET", "/v1/operations/%2E", "", "Authorization", auth); r.status != 404 || !strings.Contains(string(r.body), `no operation with key \".\"`) {
		t.Fatalf("GET /v1/operations/%%2E: %d %s", r.status, r.body)
	}
	// A +json type is application/json's, on /mcp as on /v1/tools.
	if r := e.raw("POST", "/mcp", pingMessage, mcpHeaders("Content-Type", "application/vnd.example+json")...); r.status != 200 {
		t.Fatalf("/mcp with a +json type: %d %s", r.status, r.body)
	}
}

// A body that cannot be read for its depth or its byte order mark says so.
func TestUnreadableBodiesSayWhy(t *testing.T) {
	e := newEnv(t)
	auth := "Bearer " + e.tokens["acme"]
	nested := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	mcpToolCall := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_support_task","arguments":` + args + `}}`
	}
	const bom = "\xef\xbb\xbf"
	for _, c := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"mcp: 1,500 deep", mcpToolCall(`{"idempotency_key":"d1","subject":` + nested(1500) + `}`), -32600, "exceeded max depth"},
		{"mcp: 9,990 deep", mcpToolCall(`{"idempotency_key":"d1","subject":` + nested(9990) + `}`), -32600, "exceeded max depth"},
		{"mcp: 9,999 deep", mcpToolCall(`{"idempotency_key":"d1","subject":` + nested(9999) + `}`), -32700, "exceeded max depth"},
		{"mcp: a byte order mark", bom + pingMessage, -32700, "byte order mark"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.raw("POST", "/mcp", c.body, "Authorization", auth, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
			var m struct {
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if r.status != 400 || json.Unmarshal(r.body, &m) != nil || m.Error == nil || m.Error.Code != c.code || !strings.Contains(m.Error.Message, c.want) {
				t.Fatalf("%d %s; want 400, JSON-RPC error %d saying %q", r.status, r.body, c.code, c.want)
			}
		})
	}
	r := e.call("acme", "create_support_task", "b1", bom+task)
	if p := r.problem(t); r.status != 400 || !strings.Contains(p.Detail, "byte order mark") || strings.Contains(p.Detail, "ï") {
		t.Fatalf("/v1/tools with a byte order mark: %d %s", r.status, r.body)
	}
	_ = auth
}

// A schema refusal reads the same over HTTP and MCP, and the same at the
// top level as inside an object: "argument to: …", not "argument \"to\" …".
func TestSchemaRefusalsReadAlikeOverHTTPAndMCP(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"wrong type", map[string]any{"to": 3, "body": "disk full"}, `send_notification: argument to: must be a string, got a number`},
		{"empty", map[string]any{"to": " ", "body": "disk full"}, `send_notification: argument to: must not be empty`},
		{"too long", map[string]any{"to": strings.Repeat("x", 321), "body": "disk full"}, `send_notification: argument to: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" is 321 characters; at most 320`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b, _ := json.Marshal(tc.args)
			r := e.call("acme", "send_notification", "k1", string(b))
			if p := r.problem(t); r.status != 400 || !strings.Contains(p.Detail, tc.want) {
				t.Fatalf("HTTP %d %q; want 400 saying %q", r.status, p.Detail, tc.want)
			}
			if text := mcpText(mcpCall(t, e, "k1", tc.args)); !strings.Contains(text, tc.want) {
				t.Fatalf("MCP %q; want it to say %q", text, tc.want)
			}
		})
	}
}
