package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/gateway"
)

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// postMCP sends one /mcp request with the given Host header and body
// (chunked: no Content-Length).
func postMCP(t *testing.T, e *env, host string, body io.Reader, length int64) reply {
	t.Helper()
	req, err := http.NewRequest("POST", e.srv.URL+"/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", "Bearer "+e.tokens["acme"])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

// /mcp on a loopback listener keeps the SDK's DNS-rebinding protection,
// answered as the gateway's other refusals (never text/plain), with the
// operator's proxy names allowed; an over-limit body is the gateway's 413.
func TestMCPRefusalsAreTheGatewaysOwn(t *testing.T) {
	e := newEnv(t, func(c *gateway.Config) { c.MCPAllowedHosts = []string{"Proxy.Internal"} })
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"` +
		strings.Repeat("s", 80<<10) + `","idempotency_key":"k"}}}`
	cases := []struct {
		name   string
		host   string
		body   string
		chunk  bool
		status int
	}{
		{"a foreign Host on loopback is 403", "evil.example:80", mcpInit, false, 403},
		{"a foreign Host without a port is 403", "evil.example", mcpInit, false, 403},
		{"an allowed proxy name passes", "proxy.internal:443", mcpInit, false, 200},
		{"localhost passes", "localhost:8080", mcpInit, false, 200},
		{"a body over the limit, with its length, is 413", "", big, false, 413},
		{"a chunked body over the limit is 413", "", big, true, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(c.body)
			length := int64(len(c.body))
			if c.chunk {
				body, length = io.MultiReader(strings.NewReader(c.body)), -1
			}
			r := postMCP(t, e, c.host, body, length)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s %s", r.status, c.status, r.header.Get("Content-Type"), r.body)
			}
			if c.status >= 400 {
				p := r.problem(t)
				if p.Type != gateway.TypeURI(gateway.KindInvalid) {
					t.Fatalf("problem %+v", p)
				}
				if c.status == 403 && !strings.Contains(p.Detail, "--mcp-allowed-host") {
					t.Fatalf("the refusal does not say how to allow a proxy: %s", p.Detail)
				}
			}
		})
	}
}
