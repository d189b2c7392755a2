package gateway_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// nesting is catalog with create_support_task taking y, arguments as it
// takes them, nested as deep as a caller likes (a schema referring to
// itself).
type nesting struct{ catalog }

func (nesting) Schema(name string) (json.RawMessage, bool) {
	if name == "create_support_task" {
		return json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string","minLength":1},"y":{"$ref":"#"}},"required":["subject"]}`), true
	}
	return catalog{}.Schema(name)
}

// nestedTask is create_support_task's arguments n levels deep (n >= 2).
func nestedTask(n int) string {
	return `{"subject":"x","y":` + strings.Repeat(`{"y":`, n-2) + "{}" + strings.Repeat("}", n-2) + "}"
}

// Arguments nested deeper than model.MaxArgsDepth are refused over HTTP
// (400 problem) and MCP ("fix the arguments"), saying how deep and the
// limit, nothing written — before the schema's validation, whose cost
// grows with the square of the depth; at the limit they are taken. A key
// an older build recorded from such arguments, retried with the very
// bytes, gets its receipt replayed.
func TestArgumentsNestedTooDeepAreRefusedOverHTTPAndMCP(t *testing.T) {
	lim := model.MaxArgsDepth
	cases := []struct {
		name  string
		depth int
		older bool // an older build recorded these bytes under the key
		want  model.Class
	}{
		{"at the limit", lim, false, model.ClassDone},
		{"one over", lim + 1, false, model.ClassInvalid},
		{"one over, recorded by an older build", lim + 1, true, model.ClassDone},
		{"9990 levels", 9990, false, model.ClassInvalid},
	}
	for _, via := range []string{"http", "mcp"} {
		for _, c := range cases {
			if via == "mcp" && c.depth > 900 {
				continue // the MCP server reads messages 1,000 levels deep at most
			}
			t.Run(via+"/"+c.name, func(t *testing.T) {
				e := newEnv(t, func(cfg *gateway.Config) { cfg.Tools = nesting{} })
				args := nestedTask(c.depth)
				if c.older {
					testledger.RecordOlder(t, e.st, e.svc.Tools, testledger.Older{Tenant: "acme", Key: "k",
						Tool: "create_support_task", Args: args, State: model.StateApplied})
				}
				var (
					class  model.Class
					text   string
					status string
				)
				if via == "http" {
					r := e.call("acme", "create_support_task", "k", args)
					class, text = model.ClassDone, string(r.body)
					if r.status >= 300 {
						p := r.problem(t)
						class, text = p.Class, p.Detail
						if r.status != 400 {
							t.Fatalf("status %d; want 400", r.status)
						}
					} else {
						status = r.receipt(t).Status
					}
				} else {
					res := mcpCallRaw(t, e, "create_support_task", "k", args)
					class, text = mcpClass(res), mcpText(res)
					if class == model.ClassDone {
						var rc model.Receipt
						json.Unmarshal([]byte(text), &rc)
						status = rc.Status
					}
				}
				if class != c.want {
					t.Fatalf("%d levels: %s %s; want %s", c.depth, class, text, c.want)
				}
				switch {
				case c.want == model.ClassInvalid:
					if want := "arguments are nested " + strconv.Itoa(c.depth) + " levels deep (objects and arrays); at most " + strconv.Itoa(lim); !strings.Contains(text, want) {
						t.Fatalf("%d levels: %s; want it to say %q", c.depth, text, want)
					}
					if _, err := e.st.Get(context.Background(), "acme", "k"); !model.IsCode(err, model.CodeNotFound) {
						t.Fatalf("a refused call was written: %v", err)
					}
				case c.older && status != "replayed":
					t.Fatalf("the older build's key: %s; want its receipt replayed", text)
				}
			})
		}
	}
}
