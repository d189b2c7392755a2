package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// amounts is catalog with create_support_task taking a number, amount.
type amounts struct{ catalog }

func (amounts) Schema(name string) (json.RawMessage, bool) {
	if name == "create_support_task" {
		return json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string","minLength":1},"amount":{"type":"number"}},"required":["subject"]}`), true
	}
	return catalog{}.Schema(name)
}

// A key an older build recorded from a request this build refuses — a
// number a double cannot hold exactly, a key stacking more than 3
// combining marks — retried over HTTP or MCP with the very bytes it sent:
// its receipt replayed (200), not 400 "send it as a string" or "must not
// stack", after which the caller changes the request under a new key and
// the effect is made a second time. The same bytes under a new key are
// refused as always, nothing written.
func TestARetryOfARequestAnOlderBuildRecordedIsReplayedOverHTTPAndMCP(t *testing.T) {
	marks := "k" + strings.Repeat("\u0301", 5)
	cases := []struct{ name, key, args string }{
		{"more precision than a double", "kb18b1f", `{"subject":"x","amount":10.000000000000001}`},
		{"a longer spelling of 0.30000000000000004", "k03", `{"subject":"x","amount":0.3000000000000000444}`},
		{"5 stacked marks", marks, `{"subject":"x","amount":1}`},
	}
	for _, via := range []string{"http", "mcp"} {
		for _, c := range cases {
			t.Run(via+"/"+c.name, func(t *testing.T) {
				e := newEnv(t, func(cfg *gateway.Config) { cfg.Tools = amounts{} })
				op := testledger.RecordOlder(t, e.st, e.svc.Tools, testledger.Older{Tenant: "acme", Key: c.key,
					Tool: "create_support_task", Args: c.args, State: model.StateApplied})
				var stored model.Receipt
				if err := json.Unmarshal(op.Receipt, &stored); err != nil {
					t.Fatal(err)
				}
				for _, key := range []string{c.key, c.key + "-new"} {
					var (
						class model.Class
						text  string
						rc    model.Receipt
					)
					if via == "http" {
						r := e.call("acme", "create_support_task", key, c.args)
						class, text = model.ClassDone, string(r.body)
						if r.status != 200 {
							class = r.problem(t).Class
						} else {
							rc = r.receipt(t)
						}
					} else {
						res := mcpCallRaw(t, e, "create_support_task", key, c.args)
						class, text = mcpClass(res), mcpText(res)
						if class == model.ClassDone {
							json.Unmarshal([]byte(text), &rc)
						}
					}
					if key != c.key {
						if class != model.ClassInvalid {
							t.Fatalf("the same bytes under a new key: %s %s; want invalid", class, text)
						}
						if _, err := e.st.Get(context.Background(), "acme", key); !model.IsCode(err, model.CodeNotFound) {
							t.Fatalf("a refused new key was written: %v", err)
						}
						continue
					}
					if class != model.ClassDone || rc.Status != "replayed" || string(rc.Result) != string(stored.Result) {
						t.Fatalf("the same bytes: %s %s; want the stored receipt replayed (%s)", class, text, stored.Result)
					}
				}
				if n, err := e.svc.EffectCount(context.Background(), "create_support_task", ""); err != nil || n != 1 {
					t.Fatalf("%d tasks (%v), want the one the older build made", n, err)
				}
			})
		}
	}
}

// mcpCallRaw calls tool over MCP with args as these bytes (numbers as
// spelt) and the key added.
func mcpCallRaw(t *testing.T, e *env, tool, key, args string) *mcp.CallToolResult {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	k, _ := json.Marshal(key)
	m["idempotency_key"] = k
	s, err := mcpSession(t, e, e.tokens["acme"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: m})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
