package gateway_test

import (
	"context"
	"github.com/retrysafe/retrysafe/model"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if r := call(acme, "changed"); !r.IsError || !strings.HasPrefix(r.Content[0].(*mcp.TextContent).Text, "Fix the arguments") {
		t.Fatalf("acme conflict: %+v", r.Content[0])
	}
	for tenant, want := range map[string]int{"acme": 1, "globex": 1} {
		if n, _ := e.st.EffectCount(ctx, model.TableTasks, "create_support_task", tenant); n != want {
			t.Fatalf("%s: %d effects", tenant, n)
		}
	}
}
