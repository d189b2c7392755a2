package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/gateway"
)

// A ledger whose path is also part of what callers send (serve --db e,
// --db s.db) leaves the callers' words alone: the path is kept out of the
// answers where the ledger would have put it, not replaced wherever its
// letters occur — "create_support_task" became "crthe ledgeratthe
// ledger_support_task", and the key backup-s.db-1 "backup-the ledger-1".
func TestALedgerPathInACallersWordsIsLeftAlone(t *testing.T) {
	for _, name := range []string{"e", "s.db"} {
		t.Run(name, func(t *testing.T) {
			e := newEnvNamed(t, name)
			r := e.call("acme", "create_support_task", "k-extra", `{"subject":"x","escalate":true}`)
			if p := r.problem(t); r.status != 400 || !strings.Contains(p.Detail, `"escalate"`) || !strings.Contains(p.Detail, "create_support_task") {
				t.Errorf("an unknown argument: %d %s; want its name and the tool's, as sent", r.status, r.body)
			}
			key := "backup-" + name + "-1"
			if r := e.call("acme", "create_support_task", key, task); r.status != 201 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			r = e.call("acme", "create_support_task", key, `{"subject":"other"}`)
			if p := r.problem(t); r.status != 422 || !strings.Contains(p.Detail, strconv.Quote(key)) || p.Key != key {
				t.Errorf("a conflict: %d %s; want the key %q as sent", r.status, r.body, key)
			}
			s, err := mcpSession(t, e, e.tokens["acme"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_support_task",
				Arguments: map[string]any{"subject": "x", "escalate": true, "idempotency_key": key}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.Contains(text, "create_support_task") || !strings.Contains(text, `"escalate"`) {
				t.Errorf("MCP, an unknown argument: %s", text)
			}
		})
	}
}

// Keys "." and ".." are ordinary keys: their URLs percent-encode the dots
// (a path segment "." or ".." is removed by every URL resolver), and a GET
// of those URLs finds the key.
func TestDotKeysHaveURLsThatFindThem(t *testing.T) {
	e := newEnv(t)
	for key, want := range map[string]string{".": "/v1/operations/%2E", "..": "/v1/operations/%2E%2E", "...": "/v1/operations/...", "a,b": "/v1/operations/a%2Cb"} {
		r := e.call("acme", "create_support_task", key, task)
		if r.status != 201 || r.header.Get("Location") != want || r.header.Get("Content-Location") != want {
			t.Errorf("key %q: %d Location %q Content-Location %q; want %q", key, r.status, r.header.Get("Location"), r.header.Get("Content-Location"), want)
			continue
		}
		if r := e.call("acme", "create_support_task", key, `{"subject":"other"}`); r.problem(t).Instance != want {
			t.Errorf("key %q: instance %q, want %q", key, r.problem(t).Instance, want)
		}
		r = e.get("acme", want)
		if r.status != 200 || !strings.Contains(string(r.body), `"key":`+strconv.Quote(key)) {
			t.Errorf("GET %s: %d %s; want the operation %q", want, r.status, r.body, key)
		}
	}
}

// A message without a method is not a response the server waits for: it
// is an invalid request, answered -32600 with its id over HTTP as on stdio
// (the SDK read it as a response and dropped it: 202 and no body).
func TestMCPOverHTTPAnswersAMessageWithoutAMethod(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/mcp", `{"jsonrpc":"2.0","id":5}`, "Authorization", "Bearer "+e.tokens["acme"],
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if r.status != 400 || !strings.Contains(string(r.body), `"code":-32600`) || !strings.Contains(string(r.body), `"id":5`) {
		t.Fatalf("%d %s; want 400 with a JSON-RPC invalid request for id 5", r.status, r.body)
	}
}

// A body that does not arrive before the server's read timeout is 408,
// nothing written, with a plain detail — not 400 with the socket's
// addresses in it.
func TestABodyPastTheReadTimeoutIs408(t *testing.T) {
	e := newEnv(t)
	g, err := gateway.New(gateway.Config{Service: e.svc, Tools: catalog{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(g.Handler())
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	before := e.snapshot()
	for _, path := range []string{"/v1/tools/create_support_task", "/mcp"} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nIdempotency-Key: trickle\r\nContent-Length: 100\r\n\r\n{", path, e.tokens["acme"])
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		conn.Close()
		if resp.StatusCode != 408 || strings.Contains(b.String(), "127.0.0.1") || !strings.Contains(b.String(), "nothing was written") {
			t.Errorf("%s: %d %s; want 408, nothing was written, no addresses", path, resp.StatusCode, b.String())
		}
	}
	if e.snapshot() != before {
		t.Fatal("the ledger changed")
	}
}
