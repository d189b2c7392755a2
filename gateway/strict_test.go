package gateway_test

import (
	"strings"
	"testing"
)

// GET /v1/operations reads exactly its parameters: an unknown one (a
// filter the client believes applies) or a malformed value is a 400 that
// lists what it takes — never a page that silently ignores it.
func TestListOperationsRefusesUnknownParametersAndMalformedValues(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ query, want string }{
		{"state=", "state"},
		{"tool=create_support_task", `unknown query parameter "tool"`},
		{"tenant=globex", `unknown query parameter "tenant"`},
		{"status=unknown", `unknown query parameter "status"`},
		{"state=unknown&foo=1", `unknown query parameter "foo"`},
		{"limit=+2", "limit"},
		{"limit=", "limit"},
		{"limit=2.0", "limit"},
		{"limit=0x10", "limit"},
		{"before=+5", "before"},
		{"before=", "before"},
	} {
		r := e.get("acme", "/v1/operations?"+c.query)
		if r.status != 400 {
			t.Fatalf("%s: %d %s", c.query, r.status, r.body)
		}
		p := r.problem(t)
		if !strings.Contains(p.Detail, c.want) || !strings.Contains(p.Detail, "state, limit, before") {
			t.Fatalf("%s: detail %q, want %q and the accepted parameters", c.query, p.Detail, c.want)
		}
	}
	if r := e.call("acme", "create_support_task", "k 7", `{"subject":"s"}`); r.status != 201 {
		t.Fatalf("set-up: %d %s", r.status, r.body)
	}
	for _, q := range []string{"", "state=unknown", "limit=2", "limit=500&before=k+7", "state=applied&limit=1"} {
		if r := e.get("acme", "/v1/operations?"+q); r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
	}
}

// A body declared in a charset other than UTF-8 is not what the gateway
// reads: 415, nothing written. No charset, or utf-8 in any case, is fine.
func TestAContentTypeCharsetOtherThanUTF8Is415(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		ct     string
		status int
	}{
		{"application/json; charset=iso-8859-1", 415},
		{"application/json; charset=UTF-16", 415},
		{"application/json;charset=latin1", 415},
		{"application/json; charset=utf-8", 201},
		{"application/json; charset=UTF-8", 201},
		{"application/json", 201},
	} {
		before := e.snapshot()
		key := "cs-" + strings.NewReplacer(" ", "", ";", "", "=", "").Replace(c.ct)
		r := e.do("POST", "/v1/tools/create_support_task", task, "Authorization", "Bearer "+e.tokens["acme"],
			"Content-Type", c.ct, "Idempotency-Key", key)
		if r.status != c.status {
			t.Fatalf("%s: %d %s", c.ct, r.status, r.body)
		}
		if c.status == 415 {
			if p := r.problem(t); !strings.Contains(p.Detail, "charset") {
				t.Fatalf("%s: %+v", c.ct, p)
			}
			if after := e.snapshot(); after != before {
				t.Fatalf("%s: a refused call wrote", c.ct)
			}
		}
	}
}

// /mcp holds a tool call's body to the same rule: another charset is 415
// before the SDK reads it, and the call does not run.
func TestAnMCPCallInACharsetOtherThanUTF8Is415(t *testing.T) {
	e := newEnv(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"caf\u00e9","idempotency_key":"mcp-cs"}}}`
	for _, c := range []struct {
		ct     string
		status int
	}{
		{"application/json; charset=iso-8859-1", 415},
		{"application/json; charset=utf-8", 200},
	} {
		before := e.snapshot()
		r := e.do("POST", "/mcp", call, "Authorization", "Bearer "+e.tokens["acme"],
			"Content-Type", c.ct, "Accept", "application/json, text/event-stream")
		if r.status != c.status {
			t.Fatalf("%s: %d %s", c.ct, r.status, r.body)
		}
		if c.status == 415 {
			if p := r.problem(t); !strings.Contains(p.Detail, "charset") {
				t.Fatalf("%s: %+v", c.ct, p)
			}
			if e.snapshot() != before {
				t.Fatalf("%s: a refused call wrote", c.ct)
			}
		}
	}
}
