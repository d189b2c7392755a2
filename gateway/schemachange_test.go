package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// renamedSchema is send_notification after the operator renamed its "to"
// argument to "recipient" (and raised its payload version).
const renamedSchema = `{"type":"object","properties":{"recipient":{"type":"string"},"body":{"type":"string"}},"required":["recipient","body"],"additionalProperties":false}`

// renamed is catalog with send_notification's new arguments.
type renamed struct{ catalog }

func (renamed) Schema(name string) (json.RawMessage, bool) {
	if name == "send_notification" {
		return json.RawMessage(renamedSchema), true
	}
	return catalog{}.Schema(name)
}

// renamedRegistry is the built-in tools with send_notification's new
// arguments, version 2.
func renamedRegistry(t *testing.T) *model.Registry {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(renamedSchema), &s); err != nil {
		t.Fatal(err)
	}
	return changedRegistry(t, func(tool *model.Tool) {
		if tool.Name == "send_notification" {
			tool.Schema, tool.PayloadVersion, tool.SummaryArg = &s, 2, "recipient"
		}
	})
}

// A key recorded before the tool's arguments changed, retried with the
// same bytes: the operation's answer (a replay, 423 unknown) over HTTP and
// MCP — not "fix the arguments", after which a caller changes them under
// a new key and the effect is made twice. A key whose operation would be
// sent again (not applied) is refused, and nothing is sent; a new key
// with the old bytes is refused as always.
func TestARetryAfterTheToolsArgumentsChangedGetsItsOperationsAnswer(t *testing.T) {
	setups := []struct {
		state  model.State
		fault  provider.Faults
		status int
		class  model.Class
	}{
		{model.StateApplied, provider.Faults{}, 200, model.ClassDone},
		{model.StateUnknown, provider.Faults{LoseReply: true}, 423, model.ClassUnknown},
		{model.StateNotApplied, provider.Faults{FailBefore: true}, 400, model.ClassInvalid},
	}
	for _, via := range []string{"http", "mcp"} {
		for _, c := range setups {
			t.Run(via+"/"+string(c.state), func(t *testing.T) {
				e := newEnv(t, func(cfg *gateway.Config) { cfg.Tools = renamed{} })
				key := "sc-" + string(c.state)
				e.external("acme", key, c.fault) // the old arguments, v1
				e.svc.Tools = renamedRegistry(t)
				before, _ := e.sb.Deliveries(context.Background(), "")
				class, status, text := notifyVia(t, e, via, key)
				if via == "http" && status != c.status {
					t.Fatalf("status %d, want %d: %s", status, c.status, text)
				}
				if class != c.class {
					t.Fatalf("class %s, want %s: %s", class, c.class, text)
				}
				if c.class == model.ClassInvalid && !strings.Contains(text, "not made again") {
					t.Fatalf("the refusal does not say why: %s", text)
				}
				if n, _ := e.sb.Deliveries(context.Background(), ""); n != before {
					t.Fatalf("%d deliveries after the retry, want %d", n, before)
				}
				op, err := e.st.Get(context.Background(), "acme", key)
				if err != nil || op.State != c.state || op.PayloadVersion != 1 {
					t.Fatalf("the operation moved: %+v %v", op, err)
				}
				// The old bytes under a new key: refused by name, nothing written.
				if via == "http" {
					r := e.call("acme", "send_notification", key+"-new", notify)
					if r.status != 400 || r.problem(t).Class != model.ClassInvalid {
						t.Fatalf("old bytes, new key: %d %s", r.status, r.body)
					}
				} else if res := mcpCall(t, e, key+"-new", map[string]any{"to": "ops@example.com", "body": "disk full"}); mcpClass(res) != model.ClassInvalid {
					t.Fatalf("old bytes, new key: %s", mcpText(res))
				}
				if _, err := e.st.Get(context.Background(), "acme", key+"-new"); !model.IsCode(err, model.CodeNotFound) {
					t.Fatalf("a refused new key was written: %v", err)
				}
			})
		}
	}
}

// An argument the tool no longer declares, in a schema that still lets it
// pass (no additionalProperties), is the gateway's own refusal: the very
// request recorded under the key gets its operation's answer, but is not
// sent again — a not-applied key is refused, nothing delivered.
func TestTheRecordedRequestWithAnArgumentNoLongerDeclaredIsNotSentAgain(t *testing.T) {
	e := newEnv(t)
	const body = `{"to":"ops@example.com","body":"disk full","zz":"old"}`
	e.svc.Tools = changedRegistry(t, func(tool *model.Tool) {
		if tool.Name == "send_notification" {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}`), &s); err != nil {
				t.Fatal(err)
			}
			tool.Schema = &s
		}
	})
	if res, err := e.svc.Call(context.Background(), model.Request{Tenant: "acme", Key: "zz", Tool: "send_notification",
		Args: []byte(body), WorkerID: "setup"}, reconcile.CallOptions{Faults: provider.Faults{FailBefore: true}}); res.State != model.StateNotApplied {
		t.Fatalf("set-up: %+v %v", res, err)
	}
	before, _ := e.sb.Deliveries(context.Background(), "")
	for _, via := range []string{"http", "mcp"} {
		var class model.Class
		var text string
		if via == "http" {
			r := e.call("acme", "send_notification", "zz", body)
			class, text = r.problem(t).Class, string(r.body)
		} else {
			res := mcpCall(t, e, "zz", map[string]any{"to": "ops@example.com", "body": "disk full", "zz": "old"})
			class, text = mcpClass(res), mcpText(res)
		}
		if class != model.ClassInvalid || !strings.Contains(text, "not made again") {
			t.Fatalf("%s: %s %s; want invalid, not made again", via, class, text)
		}
	}
	if n, _ := e.sb.Deliveries(context.Background(), ""); n != before {
		t.Fatalf("%d deliveries, want %d: the recorded request was sent again", n, before)
	}
	if op, err := e.st.Get(context.Background(), "acme", "zz"); err != nil || op.State != model.StateNotApplied {
		t.Fatalf("the operation moved: %+v %v", op, err)
	}
}
