package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// POST /mcp answered bodies the SDK could not decode 400 text/plain
// "malformed payload: …", repeating the body, and answered an id it
// cannot hold exactly under another id, after running the call. Each gets
// a JSON-RPC error object (application/json): -32700 for what is not JSON,
// -32600 for the rest, with the id as sent where it is a string or a
// number, else null; nothing runs and the body is not repeated.
func TestMCPOverHTTPAnswersMalformedMessagesWithJSONRPCErrors(t *testing.T) {
	e := newEnv(t)
	before := e.snapshot()
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"marker-s","idempotency_key":"marker-k"}}}`
	}
	for _, c := range []struct {
		name, body, id string
		code           int
	}{
		{"not JSON", "garbage marker-", "null", -32700},
		{"blank", "   ", "null", -32700},
		{"jsonrpc 1.0", strings.Replace(call("1"), `"2.0"`, `"1.0"`, 1), "1", -32600},
		{"no jsonrpc", strings.Replace(call("2"), `"jsonrpc":"2.0",`, "", 1), "2", -32600},
		{"object id", call(`{"a":1}`), "null", -32600},
		{"boolean id", call("true"), "null", -32600},
		{"null id", call("null"), "null", -32600},
		{"integer past int64", call("123456789012345678901234567890"), "123456789012345678901234567890", -32600},
		{"integer past 2^53", call("9007199254740993"), "9007199254740993", -32600},
		{"fraction", call("7.5"), "7.5", -32600},
		{"lone surrogate", call(`"\udc00"`), `"\udc00"`, -32600},
		{"id named twice", strings.Replace(call("5"), `"id":5`, `"id":5,"id":6`, 1), "null", -32600},
		{"name named twice in params", strings.Replace(call("10"), `}}}`, `},"name":"open_incident"}}`, 1), "10", -32600},
		{"arguments named twice in params", strings.Replace(call("11"), `}}}`, `},"arguments":{"subject":"marker-t","idempotency_key":"marker-k"}}}`, 1), "11", -32600},
		{"a member named twice in params, once escaped", strings.Replace(call("12"), `}}}`, `},"n\u0061me":"open_incident"}}`, 1), "12", -32600},
		{"a strange member named twice in params", strings.Replace(call("13"), `}}}`, `},"marker-x":1,"marker-x":2}}`, 1), "13", -32600},
		{"not an object", `"marker-"`, "null", -32600},
		{"no method", `{"jsonrpc":"2.0","id":9}`, "9", -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/mcp", c.body, "Authorization", "Bearer "+e.tokens["acme"], "Content-Type", "application/json",
				"Accept", "application/json, text/event-stream")
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if r.status != 400 || r.header.Get("Content-Type") != "application/json" || json.Unmarshal(r.body, &m) != nil ||
				m.JSONRPC != "2.0" || m.Error == nil || m.Result != nil {
				t.Fatalf("%d %q %s; want 400 application/json with a JSON-RPC error", r.status, r.header.Get("Content-Type"), r.body)
			}
			if string(m.ID) != c.id || m.Error.Code != c.code {
				t.Fatalf("id %s code %d; want id %s code %d: %s", m.ID, m.Error.Code, c.id, c.code, r.body)
			}
			if strings.Contains(string(r.body), "marker-") {
				t.Fatalf("the answer repeats the body: %s", r.body)
			}
		})
	}
	if e.snapshot() != before {
		t.Fatal("a refused message wrote")
	}
	// An id within ±2^53 is answered under itself.
	r := e.do("POST", "/mcp", call("9007199254740992"), "Authorization", "Bearer "+e.tokens["acme"], "Content-Type", "application/json",
		"Accept", "application/json, text/event-stream")
	if r.status != 200 || !strings.HasPrefix(string(r.body), `{"jsonrpc":"2.0","id":9007199254740992,"result":`) {
		t.Fatalf("id 2^53: %d %s", r.status, r.body)
	}
}
