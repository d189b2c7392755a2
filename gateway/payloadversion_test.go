package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

// bumpedRegistry is the built-in tools with payload version 2: the
// operator raised it in the config since the keys below were recorded.
func bumpedRegistry(t *testing.T) *model.Registry {
	return changedRegistry(t, func(tool *model.Tool) { tool.PayloadVersion = 2 })
}

// changedRegistry is the built-in tools, each changed by change: what the
// operator's config says after the keys of a test were recorded.
func changedRegistry(t *testing.T, change func(*model.Tool)) *model.Registry {
	t.Helper()
	reg := config.Default().Tools
	var tools []model.Tool
	for _, name := range reg.Names() {
		tool, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c := *tool
		change(&c)
		tools = append(tools, c)
	}
	r, err := model.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A key recorded under payload v1, retried with the same bytes through
// the gateway after the tool's version became 2: the same request (a
// replay, 423, 409, a re-send), never 422 "use a new key" — that advice
// made a second delivery. Other arguments under an unsettled key are a
// conflict that does not advise a new key.
func TestARaisedPayloadVersionKeepsARetryTheSameRequest(t *testing.T) {
	setups := []struct {
		state model.State
		fault provider.Faults
		delay bool
		// what the same bytes get, over HTTP and as an MCP class
		status int
		class  model.Class
	}{
		{model.StateApplied, provider.Faults{}, false, 200, model.ClassDone},
		{model.StateUnknown, provider.Faults{LoseReply: true}, false, 423, model.ClassUnknown},
		{model.StateInProgress, provider.Faults{Delay: 1500 * time.Millisecond}, true, 409, model.ClassInProgress},
		{model.StateNotApplied, provider.Faults{FailBefore: true}, false, 201, model.ClassDone},
	}
	for _, via := range []string{"http", "mcp"} {
		for _, c := range setups {
			t.Run(via+"/"+string(c.state), func(t *testing.T) {
				e := newEnv(t)
				e.svc.Tools = bumpedRegistry(t) // before any call; the setup names v1 itself
				key := "pv-" + string(c.state)
				done := make(chan struct{})
				go func() {
					defer close(done)
					e.external("acme", key, c.fault) // PayloadVersion: 1, explicitly
				}()
				if c.delay {
					waitState(t, e, "acme", key, model.StateInProgress)
				} else {
					<-done
				}
				defer func() { <-done }()
				if op, err := e.st.Get(context.Background(), "acme", key); err != nil || op.State != c.state || op.PayloadVersion != 1 {
					t.Fatalf("setup: %+v %v", op, err)
				}
				class, status, text := notifyVia(t, e, via, key)
				if via == "http" && status != c.status {
					t.Fatalf("status %d, want %d: %s", status, c.status, text)
				}
				if class != c.class {
					t.Fatalf("class %s, want %s: %s", class, c.class, text)
				}
				op, err := e.st.Get(context.Background(), "acme", key)
				if err != nil || op.PayloadVersion != 1 {
					t.Fatalf("the operation's version moved: %+v %v", op, err)
				}
				if n, _ := e.sb.Deliveries(context.Background(), ""); c.state != model.StateInProgress && n != 1 {
					t.Fatalf("%d deliveries, want 1", n)
				}
				// Other arguments under the key: a conflict; on an unsettled
				// key it must not advise a new key.
				var ctext string
				if via == "http" {
					r := e.call("acme", "send_notification", key, `{"to":"ops@example.com","body":"disk fine"}`)
					if r.status != 422 {
						t.Fatalf("other arguments: %d %s", r.status, r.body)
					}
					p := r.problem(t)
					ctext = p.Title + " | " + p.Detail
				} else {
					res := mcpCall(t, e, key, map[string]any{"to": "ops@example.com", "body": "disk fine"})
					if mcpClass(res) != model.ClassConflict {
						t.Fatalf("other arguments: %s", mcpText(res))
					}
					ctext = mcpText(res)
				}
				unsettled := c.state == model.StateUnknown || c.state == model.StateInProgress
				if unsettled {
					if !strings.Contains(ctext, "not settled") || strings.Contains(ctext, "or a new key") || strings.Contains(ctext, "or use a new key") {
						t.Fatalf("a conflict on a %s key advises a new key: %s", c.state, ctext)
					}
				} else if !strings.Contains(ctext, "new key") {
					t.Fatalf("a conflict on a %s key does not offer a new key for a new action: %s", c.state, ctext)
				}
			})
		}
	}
}

// notifyVia sends send_notification's notify arguments under key over
// HTTP or MCP (via) and returns the answer's class, its HTTP status (0
// over MCP) and its text.
func notifyVia(t *testing.T, e *env, via, key string) (model.Class, int, string) {
	t.Helper()
	if via == "http" {
		r := e.call("acme", "send_notification", key, notify)
		class := model.ClassDone
		if r.status >= 300 {
			class = r.problem(t).Class
		}
		return class, r.status, string(r.body)
	}
	res := mcpCall(t, e, key, map[string]any{"to": "ops@example.com", "body": "disk full"})
	return mcpClass(res), 0, mcpText(res)
}

func mcpCall(t *testing.T, e *env, key string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	s, err := mcpSession(t, e, e.tokens["acme"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	args["idempotency_key"] = key
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_notification", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mcpClass(r *mcp.CallToolResult) model.Class {
	if !r.IsError {
		return model.ClassDone
	}
	m, _ := r.StructuredContent.(map[string]any)
	c, _ := m["class"].(string)
	return model.Class(c)
}

func mcpText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
