package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/retrysafe/retrysafe/model"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/gateway"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, e *env, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token}}, MaxRetries: -1}, nil)
}

func TestMCPOverHTTPTheTokenPicksTheTenant(t *testing.T) {
	e := newEnv(t)
	if _, err := mcpSession(t, e, ""); err == nil {
		t.Fatal("an MCP session without a token connected")
	}
	ctx := context.Background()
	call := func(s *mcp.ClientSession, subject string) *mcp.CallToolResult {
		t.Helper()
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "create_support_task",
			Arguments: map[string]any{"subject": subject, "idempotency_key": "mcp-shared"}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	acme, err := mcpSession(t, e, e.tokens["acme"])
	if err != nil {
		t.Fatal(err)
	}
	defer acme.Close()
	if r := call(acme, "acme's"); r.IsError {
		t.Fatalf("acme: %+v", r.Content[0])
	}
	globex, err := mcpSession(t, e, e.tokens["globex"])
	if err != nil {
		t.Fatal(err)
	}
	defer globex.Close()
	// The same key in another tenant: a new operation, not a conflict.
	r := call(globex, "globex's")
	if r.IsError || r.StructuredContent.(map[string]any)["tenant"] != "globex" {
		t.Fatalf("globex: %+v", r.StructuredContent)
	}
	// And a conflict in acme's own tenant.
	if r := call(acme, "changed"); !r.IsError || !strings.HasPrefix(r.Content[0].(*mcp.TextContent).Text, "Fix the request") {
		t.Fatalf("acme conflict: %+v", r.Content[0])
	}
	for tenant, want := range map[string]int{"acme": 1, "globex": 1} {
		if n, _ := e.st.EffectCount(ctx, model.TableTasks, "create_support_task", tenant); n != want {
			t.Fatalf("%s: %d effects", tenant, n)
		}
	}
}

// A client's tool-call id in _meta is optional metadata the model cannot
// fix: one that is not printable or is over 255 bytes is dropped, as a bad
// traceparent is, and the call runs with the trace id the gateway makes.
func TestMCPBadToolCallIDIsDroppedNotAnError(t *testing.T) {
	e := newEnv(t)
	s, err := mcpSession(t, e, e.tokens["acme"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name, id string
		kept     bool
	}{
		{"printable", "call_abc123", true},
		{"control character", "call\tabc", false},
		{"escape sequence", "call\x1b[2Jabc", false},
		{"over 255 bytes", strings.Repeat("x", 256), false},
		{"255 bytes", strings.Repeat("y", 255), true},
		{"not UTF-8", "call\xffabc", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := "meta-" + strings.ReplaceAll(c.name, " ", "-")
			p := &mcp.CallToolParams{Name: "create_support_task",
				Arguments: map[string]any{"subject": "s", "idempotency_key": key}}
			p.SetMeta(map[string]any{"tool_call_id": c.id})
			r, err := s.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError {
				t.Fatalf("the call failed on its _meta: %+v", r.Content[0])
			}
			d, err := e.st.Detail(ctx, "acme", key)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Attempts[len(d.Attempts)-1].TraceID
			if (got == c.id) != c.kept || got == "" {
				t.Fatalf("trace id %q for tool_call_id %q (kept %v)", got, c.id, c.kept)
			}
		})
	}
}

// Over /mcp as over stdio, a tool call's arguments that name a member
// twice are refused: the transport must not collapse them to the last
// before the gateway sees them.
func TestMCPOverHTTPRefusesArgumentsNamedTwice(t *testing.T) {
	e := newEnv(t)
	before := e.snapshot()
	for _, args := range []string{
		`{"subject":"s","idempotency_key":"a","idempotency_key":"b"}`,
		`{"subject":"s","subject":"t","idempotency_key":"c"}`,
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_support_task","arguments":` + args + `}}`
		r := e.do("POST", "/mcp", body, "Authorization", "Bearer "+e.tokens["acme"], "Content-Type", "application/json",
			"Accept", "application/json, text/event-stream")
		if r.status != 200 || !strings.Contains(string(r.body), `"isError":true`) || !strings.Contains(string(r.body), "twice") {
			t.Errorf("arguments %s: %d %s; want a tool error naming the repeated member", args, r.status, r.body)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a call with a member named twice wrote")
	}
}

// A JSON-RPC batch is one HTTP request — one of --max-in-flight's slots —
// that held as many tool calls as fit in the body, all run at once: a
// gateway capped at 2 ran 25 calls of one batch concurrently against the
// provider. It is refused, as on stdio (MCP dropped batches in 2025-06-18;
// the SDK still took them from older clients), and nothing is written.
func TestMCPOverHTTPRefusesABatch(t *testing.T) {
	e := newEnv(t)
	before := e.snapshot()
	var calls []string
	for i := 0; i < 3; i++ {
		calls = append(calls, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"s","idempotency_key":"batch-`+strconv.Itoa(i)+`"}}}`)
	}
	for _, version := range []string{"", "2025-03-26"} {
		hdr := []string{"Authorization", "Bearer " + e.tokens["acme"], "Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
		if version != "" {
			hdr = append(hdr, "Mcp-Protocol-Version", version)
		}
		r := e.do("POST", "/mcp", " \n["+strings.Join(calls, ",")+"]", hdr...)
		if r.status != 400 || !strings.Contains(string(r.body), `"code":-32600`) || !strings.Contains(string(r.body), "batch") {
			t.Errorf("protocol %q: %d %s; want 400 with a JSON-RPC invalid request naming the batch", version, r.status, r.body)
		}
	}
	if e.snapshot() != before {
		t.Fatal("a batch wrote")
	}
}

// oddNames is the test catalog plus a tool whose name MCP does not take
// ("/" is outside its A-Z a-z 0-9 _ - . set); the SDK logs an error for it
// each time a server is built.
type oddNames struct{ catalog }

func (oddNames) Names() []string { return append(catalog{}.Names(), "tasks/create") }

func (c oddNames) Schema(name string) (json.RawMessage, bool) {
	if name == "tasks/create" {
		return c.catalog.Schema("create_support_task")
	}
	return c.catalog.Schema(name)
}

// The gateway built an MCP server — every tool's schema — for every POST
// /mcp, and the SDK's error about a tool name it does not take was logged
// again each time: any token holder could write error lines at the rate it
// sent requests. A tenant's server is built once.
func TestMCPOverHTTPBuildsATenantsServerOnce(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *gateway.Config) {
		c.Tools = oddNames{}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	for i := 0; i < 5; i++ {
		for _, tenant := range []string{"acme", "globex"} {
			r := e.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Authorization", "Bearer "+e.tokens[tenant],
				"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
			if r.status != 200 || !strings.Contains(string(r.body), `"create_support_task"`) {
				t.Fatalf("tools/list: %d %s", r.status, r.body)
			}
		}
	}
	if n := strings.Count(logs.String(), "invalid tool name"); n > 2 {
		t.Errorf("the SDK's complaint about a tool name was logged %d times for 10 requests; want once per tenant's server", n)
	}
}

// syncBuffer is a bytes.Buffer the server's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
