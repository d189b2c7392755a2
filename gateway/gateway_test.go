package gateway_test

// The HTTP contract of the gateway, against a real SQLite ledger in a
// temporary directory and the sandbox provider: every class's status,
// headers and problem type; refusals that write nothing; one effect for
// concurrent requests with one key; tenant isolation.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// catalog serves the built-in tools with hand-written schemas (the
// command line derives them from the registry).
type catalog struct{}

func (catalog) Names() []string {
	return []string{"create_support_task", "create_report_job", "send_notification"}
}

func (catalog) Schema(name string) (json.RawMessage, bool) {
	switch name {
	case "create_support_task":
		return json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string","minLength":1}},"required":["subject"]}`), true
	case "create_report_job":
		return json.RawMessage(`{"type":"object","properties":{"report":{"type":"string","minLength":1}},"required":["report"]}`), true
	case "send_notification":
		return json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}`), true
	}
	return nil, false
}

func (catalog) Description(name string) string { return name }

type env struct {
	t      *testing.T
	path   string
	st     *sqlite.Store
	sb     *sandbox.Sandbox
	svc    *reconcile.Service
	srv    *httptest.Server
	offset atomic.Int64 // added to the real clock, in ms (expiry tests)
	tokens map[string]string
}

func newEnv(t *testing.T, tune ...func(*gateway.Config)) *env {
	t.Helper()
	return newEnvNamed(t, "", tune...)
}

// newEnvNamed is newEnv with the ledger at a relative path, name, in a new
// working directory ("" is a file in a temporary directory): what
// `serve --db NAME` opens.
func newEnvNamed(t *testing.T, name string, tune ...func(*gateway.Config)) *env {
	t.Helper()
	e := &env{t: t, tokens: map[string]string{}}
	now := func() time.Time { return time.Now().Add(time.Duration(e.offset.Load()) * time.Millisecond) }
	opts := []testledger.Option{testledger.WithNow(now), testledger.ProviderFile("provider.db")}
	var l *testledger.Ledger
	if name == "" {
		l = testledger.New(t, opts...)
	} else {
		t.Chdir(t.TempDir())
		l = testledger.In(t, ".", append(opts, testledger.Named(name))...)
		t.Cleanup(l.Close)
	}
	e.path, e.st, e.sb, e.svc = l.Path, l.Store, l.Sandbox, l.Svc
	cfg := gateway.Config{Service: e.svc, Tools: catalog{}, Worker: "gateway-test",
		CallTimeout: 700 * time.Millisecond, MaxInFlight: 64}
	for _, f := range tune {
		f(&cfg)
	}
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(g.Handler())
	t.Cleanup(e.srv.Close) // before the ledger closes
	for _, tenant := range []string{"acme", "globex"} {
		e.tokens[tenant] = e.token(tenant)
	}
	return e
}

func (e *env) token(tenant string) string {
	secret, tok, err := model.NewToken(tenant, "test", time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.st.CreateToken(context.Background(), &tok); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) problem(t *testing.T) gateway.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("status %d: Content-Type %q, want application/problem+json; body %s", r.status, ct, r.body)
	}
	var p gateway.Problem
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if dec.More() {
		t.Fatalf("more than one problem in the body: %s", r.body)
	}
	if p.Status != r.status || p.Type == "" || p.Title == "" {
		t.Fatalf("problem %+v does not match status %d or lacks type/title", p, r.status)
	}
	return p
}

func (r reply) receipt(t *testing.T) model.Receipt {
	t.Helper()
	var rc model.Receipt
	if err := json.Unmarshal(r.body, &rc); err != nil {
		t.Fatalf("receipt body %s: %v", r.body, err)
	}
	return rc
}

// do sends one request; hdr are header pairs.
func (e *env) do(method, path, body string, hdr ...string) reply {
	e.t.Helper()
	return e.send(http.DefaultClient, method, path, body, hdr...)
}

// send sends one request with client c and reads its whole answer.
func (e *env) send(c *http.Client, method, path, body string, hdr ...string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

// call POSTs a tool call as tenant with a key (as a structured string).
func (e *env) call(tenant, tool, key, args string, hdr ...string) reply {
	e.t.Helper()
	h := append([]string{"Authorization", "Bearer " + e.tokens[tenant], "Content-Type", "application/json",
		"Idempotency-Key", `"` + key + `"`}, hdr...)
	return e.do("POST", "/v1/tools/"+tool, args, h...)
}

func (e *env) get(tenant, path string) reply {
	e.t.Helper()
	return e.do("GET", path, "", "Authorization", "Bearer "+e.tokens[tenant])
}

func (e *env) snapshot() string {
	e.t.Helper()
	s, err := e.st.Snapshot(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := e.sb.Deliveries(context.Background(), "")
	if err != nil {
		e.t.Fatal(err)
	}
	return s + "/" + string(rune('0'+n))
}

// external runs an external call directly through the service (to put a
// key in a state a gateway call then meets).
func (e *env) external(tenant, key string, f provider.Faults) reconcile.Result {
	e.t.Helper()
	res, _ := e.svc.Call(context.Background(), model.Request{Tenant: tenant, Key: key, Tool: "send_notification",
		PayloadVersion: 1, Args: []byte(notify), WorkerID: "setup"}, reconcile.CallOptions{Faults: f})
	return res
}

const (
	task   = `{"subject":"printer on fire"}`
	notify = `{"to":"ops@example.com","body":"disk full"}`
)

func TestEveryClassHasItsStatusHeadersAndProblemType(t *testing.T) {
	e := newEnv(t)
	type check func(t *testing.T, r reply)
	problemIs := func(kind gateway.Kind, class model.Class) check {
		return func(t *testing.T, r reply) {
			p := r.problem(t)
			if p.Type != gateway.TypeURI(kind) || p.Class != class || p.Detail == "" {
				t.Fatalf("problem %+v, want type %s class %s with a detail", p, gateway.TypeURI(kind), class)
			}
		}
	}
	header := func(name, want string) check {
		return func(t *testing.T, r reply) {
			if got := r.header.Get(name); got != want {
				t.Fatalf("%s: %q, want %q", name, got, want)
			}
		}
	}
	var created model.Receipt
	cases := []struct {
		name   string
		setup  func() (key string, release func())
		tool   string
		args   string
		status int
		checks []check
	}{
		{"first success is 201 with the receipt", func() (string, func()) { return "k-new", nil }, "create_support_task", task, 201,
			[]check{header("Idempotent-Replayed", ""), header("Location", "/v1/operations/k-new"), header("Content-Type", "application/json"),
				func(t *testing.T, r reply) {
					created = r.receipt(t)
					if created.Status != "created" || created.Key != "k-new" || created.Tenant != "acme" {
						t.Fatalf("receipt %+v", created)
					}
				}}},
		{"replay is 200 with the stored receipt", func() (string, func()) { return "k-new", nil }, "create_support_task", task, 200,
			[]check{header("Idempotent-Replayed", "true"), func(t *testing.T, r reply) {
				rc := r.receipt(t)
				if rc.Status != "replayed" || string(rc.Result) != string(created.Result) {
					t.Fatalf("replayed receipt %+v, want the stored %s", rc, created.Result)
				}
			}}},
		{"same key, different payload is 422", func() (string, func()) { return "k-new", nil }, "create_support_task", `{"subject":"printer fine"}`, 422,
			[]check{problemIs(gateway.KindConflict, model.ClassConflict), header("Idempotent-Replayed", "")}},
		{"invalid arguments are 400", func() (string, func()) { return "k-bad", nil }, "create_support_task", `{"subject":""}`, 400,
			[]check{problemIs(gateway.KindInvalid, model.ClassInvalid)}},
		{"in flight is 409 with Retry-After", func() (string, func()) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.external("acme", "k-slow", provider.Faults{Delay: 1500 * time.Millisecond})
			}()
			waitState(t, e, "acme", "k-slow", model.StateInProgress)
			return "k-slow", func() { <-done }
		}, "send_notification", notify, 409, []check{problemIs(gateway.KindInProgress, model.ClassInProgress), header("Retry-After", "1")}},
		{"unknown outcome is 423: stop, reconcile", func() (string, func()) {
			if r := e.external("acme", "k-lost", provider.Faults{LoseReply: true}); r.Class != model.ClassUnknown {
				t.Fatalf("setup: %+v", r)
			}
			return "k-lost", nil
		}, "send_notification", notify, 423, []check{problemIs(gateway.KindUnknown, model.ClassUnknown), header("Retry-After", "")}},
		{"a stored failure is 424 with its receipt, replayed", func() (string, func()) {
			if r := e.external("acme", "k-rejected", provider.Faults{Reject: true}); r.Class != model.ClassFailed {
				t.Fatalf("setup: %+v", r)
			}
			return "k-rejected", nil
		}, "send_notification", notify, 424, []check{problemIs(gateway.KindFailed, model.ClassFailed), header("Idempotent-Replayed", "true"),
			func(t *testing.T, r reply) {
				if p := r.problem(t); p.Receipt == nil || p.Receipt.Status != "replayed" {
					t.Fatalf("failure without its receipt: %s", r.body)
				}
			}}},
		{"superseded is 410 with the new key", func() (string, func()) {
			e.external("acme", "k-old", provider.Faults{LoseReply: true})
			if _, _, err := e.svc.AuthorizeNewKey(context.Background(), reconcile.Decision{Tenant: "acme", Key: "k-old",
				Operator: "test", Reason: "send again", NewKey: "k-old-2", WithinGrace: true}); err != nil { // right after the lost reply
				t.Fatal(err)
			}
			return "k-old", nil
		}, "send_notification", notify, 410, []check{problemIs(gateway.KindSuperseded, model.ClassSuperseded), func(t *testing.T, r reply) {
			if p := r.problem(t); p.NewKey != "k-old-2" || !strings.Contains(p.Detail, "k-old-2") {
				t.Fatalf("superseded without the new key: %s", r.body)
			}
		}}},
		{"past the replay window is 412: reconcile", func() (string, func()) {
			if r := e.call("acme", "create_report_job", "k-aged", `{"report":"q3"}`); r.status != 201 {
				t.Fatalf("setup: %d %s", r.status, r.body)
			}
			e.offset.Store((25 * time.Hour).Milliseconds())
			return "k-aged", func() { e.offset.Store(0) }
		}, "create_report_job", `{"report":"q3"}`, 412, []check{problemIs(gateway.KindExpired, model.ClassExpired)}},
		{"a ledger locked past the deadline is 503 with Retry-After", func() (string, func()) {
			return "k-locked", testledger.HoldWriteLock(t, e.path)
		}, "create_support_task", task, 503, []check{problemIs(gateway.KindBusy, model.ClassInternal), header("Retry-After", "1")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, release := c.setup()
			r := e.call("acme", c.tool, key, c.args)
			if release != nil {
				release()
			}
			if r.status != c.status {
				t.Fatalf("status %d, want %d; body %s", r.status, c.status, r.body)
			}
			if r.header.Get("X-Trace-Id") == "" {
				t.Fatal("no X-Trace-Id")
			}
			for _, ch := range c.checks {
				ch(t, r)
			}
		})
	}
}

func waitState(t *testing.T, e *env, tenant, key string, st model.State) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if op, err := e.st.Get(context.Background(), tenant, key); err == nil && op.State == st {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s/%s never reached %s", tenant, key, st)
}

func TestBadRequestsAre4xxWithOneProblemAndWriteNothing(t *testing.T) {
	e := newEnv(t)
	revoked := e.token("acme")
	toks, _ := e.st.ListTokens(context.Background(), "acme")
	if _, err := e.st.RevokeToken(context.Background(), toks[len(toks)-1].ID); err != nil {
		t.Fatal(err)
	}
	auth := "Bearer " + e.tokens["acme"]
	std := func(extra ...string) []string {
		return append([]string{"Authorization", auth, "Content-Type", "application/json"}, extra...)
	}
	cases := []struct {
		name   string
		path   string
		body   string
		hdr    []string
		status int
	}{
		{"no key", "/v1/tools/create_support_task", task, std(), 400},
		{"empty key", "/v1/tools/create_support_task", task, std("Idempotency-Key", `""`), 400},
		{"300-character key", "/v1/tools/create_support_task", task, std("Idempotency-Key", strings.Repeat("k", 300)), 400},
		{"key given twice", "/v1/tools/create_support_task", task, std("Idempotency-Key", "a", "Idempotency-Key", "b"), 400},
		// A proxy folds two headers into one, comma-separated: the same
		// two keys, not a key "a, b".
		{"key given twice, folded into one header", "/v1/tools/create_support_task", task, std("Idempotency-Key", "a, b"), 400},
		{"structured keys given twice, folded", "/v1/tools/create_support_task", task, std("Idempotency-Key", `"a", "b"`), 400},
		// The draft's key is a bare sf-string: parameters are not part of
		// it, and recording `"ab";x=1` literally was a key no one sent.
		{"structured key with parameters", "/v1/tools/create_support_task", task, std("Idempotency-Key", `"ab";x=1`), 400},
		{"structured key followed by other bytes", "/v1/tools/create_support_task", task, std("Idempotency-Key", `"ab"cd`), 400},
		{"two X-Trace-Id headers", "/v1/tools/create_support_task", task, std("Idempotency-Key", "k1", "X-Trace-Id", "t1", "X-Trace-Id", "t2"), 400},
		{"two Content-Type headers", "/v1/tools/create_support_task", task, std("Idempotency-Key", "k1", "Content-Type", "application/json"), 400},
		// Rounded to 10.000000000000002, it would be recorded and sent so.
		{"a decimal beyond double precision", "/v1/tools/create_support_task", `{"subject":"x","amount":10.000000000000001}`, std("Idempotency-Key", "k1"), 400},
		// Only SP and HTAB surround a header's value (RFC 9110's OWS): a
		// key ending in U+0085 or U+00A0 was trimmed to "k1" and recorded
		// under a key the client never sent.
		{"key ending in a next-line control (U+0085)", "/v1/tools/create_support_task", task, std("Idempotency-Key", "k1\u0085"), 400},
		{"key ending in a no-break space", "/v1/tools/create_support_task", task, std("Idempotency-Key", "k1\u00a0"), 400},
		{"structured key followed by a no-break space", "/v1/tools/create_support_task", task, std("Idempotency-Key", "\"k1\"\u00a0"), 400},
		{"token followed by a no-break space", "/v1/tools/create_support_task", task, []string{"Authorization", auth + "\u00a0", "Content-Type", "application/json", "Idempotency-Key", "k1"}, 401},
		// Two tokens: which one is the caller? The first one was used; a
		// proxy that reads the last would have checked another tenant.
		{"two Authorization headers", "/v1/tools/create_support_task", task, std("Authorization", "Bearer "+e.tokens["globex"], "Idempotency-Key", "k1"), 400},
		{"two Authorization headers, the same token", "/v1/tools/create_support_task", task, std("Authorization", auth, "Idempotency-Key", "k1"), 400},
		{"invalid JSON", "/v1/tools/create_support_task", `{"subject":`, std("Idempotency-Key", "k1"), 400},
		{"not an object", "/v1/tools/create_support_task", `["subject"]`, std("Idempotency-Key", "k1"), 400},
		{"body over the limit", "/v1/tools/create_support_task", `{"subject":"` + strings.Repeat("x", 70<<10) + `"}`, std("Idempotency-Key", "k1"), 413},
		{"wrong content type", "/v1/tools/create_support_task", task, []string{"Authorization", auth, "Content-Type", "text/plain", "Idempotency-Key", "k1"}, 415},
		{"no content type", "/v1/tools/create_support_task", task, []string{"Authorization", auth, "Idempotency-Key", "k1"}, 415},
		{"unknown tool", "/v1/tools/drop_tables", task, std("Idempotency-Key", "k1"), 404},
		{"no token", "/v1/tools/create_support_task", task, []string{"Content-Type", "application/json", "Idempotency-Key", "k1"}, 401},
		{"unknown token", "/v1/tools/create_support_task", task, []string{"Authorization", "Bearer rst_" + strings.Repeat("A", 43), "Content-Type", "application/json", "Idempotency-Key", "k1"}, 401},
		{"revoked token", "/v1/tools/create_support_task", task, []string{"Authorization", "Bearer " + revoked, "Content-Type", "application/json", "Idempotency-Key", "k1"}, 401},
		{"trace id with a control character", "/v1/tools/create_support_task", task, std("Idempotency-Key", "k1", "X-Trace-Id", "a\tb"), 400},
		{"an argument the tool does not declare", "/v1/tools/create_support_task", `{"subject":"x","priority":"high"}`, std("Idempotency-Key", "k1"), 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.snapshot()
			r := e.do("POST", c.path, c.body, c.hdr...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			r.problem(t)
			if after := e.snapshot(); after != before {
				t.Fatal("the ledger changed")
			}
		})
	}
	t.Run("chunked body over the limit", func(t *testing.T) {
		before := e.snapshot()
		body := io.MultiReader(strings.NewReader(`{"subject":"`), strings.NewReader(strings.Repeat("x", 70<<10)), strings.NewReader(`"}`))
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/tools/create_support_task", body)
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "chunked")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ContentLength == 0 || resp.StatusCode != 413 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		reply{resp.StatusCode, resp.Header, b}.problem(t)
		if e.snapshot() != before {
			t.Fatal("the ledger changed")
		}
	})
	t.Run("two Authorization headers on every endpoint", func(t *testing.T) {
		for _, path := range []string{"/v1/operations/k1", "/v1/operations", "/mcp"} {
			method := "GET"
			if path == "/mcp" {
				method = "POST"
			}
			r := e.do(method, path, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Authorization", auth, "Authorization", "Bearer "+e.tokens["globex"],
				"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
			if r.status != 400 || !strings.Contains(r.problem(t).Detail, "Authorization header given 2 times") {
				t.Errorf("%s %s: %d %s; want 400 naming the repeated header", method, path, r.status, r.body)
			}
		}
	})
	t.Run("GET of another method", func(t *testing.T) {
		r := e.do("GET", "/v1/tools/create_support_task", "", "Authorization", auth)
		if r.status != 405 || r.header.Get("Allow") != "POST" {
			t.Fatalf("%d %v", r.status, r.header)
		}
		r.problem(t)
	})
	// One operation's URL takes GET only: another method is 405 with
	// Allow, as the other endpoints answer, not "no such endpoint".
	for _, method := range []string{"DELETE", "PUT", "OPTIONS", "POST"} {
		t.Run(method+" of an operation", func(t *testing.T) {
			r := e.do(method, "/v1/operations/k1", "", "Authorization", auth)
			if r.status != 405 || r.header.Get("Allow") != "GET" {
				t.Fatalf("%d %v %s; want 405 with Allow: GET", r.status, r.header, r.body)
			}
			r.problem(t)
		})
	}
}

// An argument the tool does not declare is refused by name, over HTTP and
// MCP, though the tool's schema does not say additionalProperties: false;
// nothing is written, and the key stays free for the corrected call.
func TestUnknownArgumentsAreRefusedByName(t *testing.T) {
	e := newEnv(t)
	before := e.snapshot()
	r := e.call("acme", "create_support_task", "k-extra", `{"subject":"printer on fire","priority":"high"}`)
	if r.status != 400 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	p := r.problem(t)
	if p.Type != gateway.TypeURI(gateway.KindInvalid) || p.Class != model.ClassInvalid ||
		!strings.Contains(p.Detail, `unknown argument "priority"`) || !strings.Contains(p.Detail, "subject") || !strings.Contains(p.Detail, "nothing was written") {
		t.Fatalf("problem %+v", p)
	}
	acme, err := mcpSession(t, e, e.tokens["acme"])
	if err != nil {
		t.Fatal(err)
	}
	defer acme.Close()
	res, err := acme.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_support_task",
		Arguments: map[string]any{"subject": "printer on fire", "priority": "high", "idempotency_key": "k-extra"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.HasPrefix(text, "Fix the arguments") || !strings.Contains(text, `unknown argument "priority"`) {
		t.Fatalf("MCP: error=%v %q", res.IsError, text)
	}
	if e.snapshot() != before {
		t.Fatal("the ledger changed")
	}
	// The published MCP schema says so too.
	tools, err := acme.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if b, _ := json.Marshal(tool.InputSchema); !strings.Contains(string(b), `"additionalProperties":false`) {
			t.Fatalf("%s: %s", tool.Name, b)
		}
	}
	if r := e.call("acme", "create_support_task", "k-extra", task); r.status != 201 {
		t.Fatalf("the corrected call: %d %s", r.status, r.body)
	}
}

func TestSixteenConcurrentRequestsWithOneKeyMakeOneEffect(t *testing.T) {
	e := newEnv(t)
	const n = 16
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			statuses[i] = e.call("acme", "create_support_task", "one-key", task).status
		}(i)
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[200]+count[409] != n-1 {
		t.Fatalf("statuses %v: want one 201 and the rest 200 or 409", count)
	}
	if n, _ := e.st.EffectCount(context.Background(), model.TableTasks, "create_support_task", "acme"); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	// The external path too: one delivery at the provider.
	for i := range statuses {
		statuses[i] = 0
	}
	start = make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			statuses[i] = e.call("acme", "send_notification", "one-notice", notify).status
		}(i)
	}
	close(start)
	wg.Wait()
	count = map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[200]+count[409] != n-1 {
		t.Fatalf("external: statuses %v: want one 201 and the rest 200 or 409", count)
	}
	lid, err := e.st.LedgerID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := e.sb.Deliveries(context.Background(), reconcile.DownstreamKey(lid, "acme", "one-notice")); d != 1 {
		t.Fatalf("%d deliveries, want 1", d)
	}
}

func TestTenantsSeeOnlyTheirOwnOperations(t *testing.T) {
	e := newEnv(t)
	// Globex asks for a key before anyone has it, then after Acme made it:
	// the answers must be identical.
	never := e.get("globex", "/v1/operations/shared-key")
	if r := e.call("acme", "create_support_task", "shared-key", task); r.status != 201 {
		t.Fatalf("acme: %d %s", r.status, r.body)
	}
	other := e.get("globex", "/v1/operations/shared-key")
	if never.status != 404 || other.status != 404 || !bytes.Equal(never.body, other.body) {
		t.Fatalf("another tenant's key: %d %s; never-existing: %d %s", other.status, other.body, never.status, never.body)
	}
	other.problem(t)
	if r := e.get("acme", "/v1/operations/shared-key"); r.status != 200 || !strings.Contains(string(r.body), `"state":"applied"`) {
		t.Fatalf("owner: %d %s", r.status, r.body)
	}
	// Lists are scoped.
	var page struct {
		Operations []struct{ Key string } `json:"operations"`
	}
	for tenant, want := range map[string]int{"acme": 1, "globex": 0} {
		r := e.get(tenant, "/v1/operations?state=applied")
		if err := json.Unmarshal(r.body, &page); err != nil || r.status != 200 || len(page.Operations) != want {
			t.Fatalf("%s list: %d %s", tenant, r.status, r.body)
		}
	}
	// The same key in another tenant is another operation: created, not a
	// conflict or a replay of Acme's.
	r := e.call("globex", "create_support_task", "shared-key", `{"subject":"something else"}`)
	if r.status != 201 || r.receipt(t).Tenant != "globex" {
		t.Fatalf("globex call: %d %s", r.status, r.body)
	}
	if n, _ := e.st.EffectCount(context.Background(), model.TableTasks, "create_support_task", "acme"); n != 1 {
		t.Fatalf("acme has %d effects", n)
	}
	// Without a token, every endpoint is 401.
	for _, path := range []string{"/v1/operations/shared-key", "/v1/operations"} {
		if r := e.do("GET", path, ""); r.status != 401 {
			t.Fatalf("%s without a token: %d", path, r.status)
		}
	}
	if r := e.get("acme", "/v1/operations?state=nonsense"); r.status != 400 {
		t.Fatalf("bad state filter: %d", r.status)
	}
}

// A compacted key reads as a call of it answers: 412 expired for its
// tenant, with the same problem body as the POST; for another tenant,
// exactly the 404 of a key that never existed.
func TestAGetOfACompactedKeyIsExpiredForItsTenantOnly(t *testing.T) {
	e := newEnv(t)
	never := e.get("globex", "/v1/operations/k-compacted")
	if r := e.call("acme", "create_support_task", "k-compacted", task); r.status != 201 {
		t.Fatalf("setup: %d %s", r.status, r.body)
	}
	e.offset.Store((25 * time.Hour).Milliseconds())
	rep, err := e.svc.Sweep(context.Background())
	if err != nil || rep.Compacted != 1 {
		t.Fatalf("sweep: %+v %v", rep, err)
	}
	if _, err := e.st.Get(context.Background(), "acme", "k-compacted"); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("the operation is still there: %v", err)
	}
	got := e.get("acme", "/v1/operations/k-compacted")
	post := e.call("acme", "create_support_task", "k-compacted", task)
	if got.status != 412 || post.status != 412 || !bytes.Equal(got.body, post.body) {
		t.Fatalf("owner's GET: %d %s; its POST: %d %s", got.status, got.body, post.status, post.body)
	}
	p := got.problem(t)
	if p.Type != gateway.TypeURI(gateway.KindExpired) || p.Class != model.ClassExpired || p.Key != "k-compacted" ||
		p.State != model.StateApplied || p.Instance != "/v1/operations/k-compacted" || !strings.Contains(p.Detail, "reconcile") {
		t.Fatalf("owner's problem %+v", p)
	}
	other := e.get("globex", "/v1/operations/k-compacted")
	if never.status != 404 || other.status != 404 || !bytes.Equal(never.body, other.body) {
		t.Fatalf("another tenant: %d %s; before the key existed: %d %s", other.status, other.body, never.status, never.body)
	}
	// A driver without the read-side tombstone (store.TombstoneReader) is
	// read in a transaction that writes nothing: the same answers.
	bare := struct{ store.Ledger }{e.st}
	g, err := gateway.New(gateway.Config{Service: reconcile.New(bare, config.Default().Tools, e.sb.Providers()), Tools: catalog{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	e.srv, srv = srv, e.srv
	defer func() { e.srv = srv }()
	before := e.snapshot()
	if r := e.get("acme", "/v1/operations/k-compacted"); r.status != 412 || !bytes.Equal(r.body, got.body) {
		t.Fatalf("without TombstoneReader, owner: %d %s", r.status, r.body)
	}
	if r := e.get("globex", "/v1/operations/k-compacted"); r.status != 404 || !bytes.Equal(r.body, never.body) {
		t.Fatalf("without TombstoneReader, another tenant: %d %s", r.status, r.body)
	}
	if e.snapshot() != before {
		t.Fatal("a GET wrote to the ledger")
	}
}

func TestTraceparentBecomesTheAttemptsTraceID(t *testing.T) {
	e := newEnv(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := e.call("acme", "create_support_task", "traced", task, "traceparent", tp)
	if r.status != 201 || r.header.Get("X-Trace-Id") != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("%d %v", r.status, r.header)
	}
	e.call("acme", "create_support_task", "traced", task, "X-Trace-Id", "call_abc123")
	d, err := e.st.Detail(context.Background(), "acme", "traced")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != 2 || d.Attempts[0].TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || d.Attempts[1].TraceID != "call_abc123" {
		t.Fatalf("attempts %+v", d.Attempts)
	}
}

func TestMetricsCountCallsAndReadUnknownsFromTheLedger(t *testing.T) {
	e := newEnv(t)
	e.call("acme", "create_support_task", "m1", task)
	e.call("acme", "create_support_task", "m1", task)
	e.external("globex", "lost", provider.Faults{LoseReply: true})
	r := e.do("GET", "/metrics", "")
	body := string(r.body)
	for _, want := range []string{
		`retrysafe_calls_total{class="done",outcome="created",tool="create_support_task"} 1`,
		`retrysafe_calls_total{class="done",outcome="replayed",tool="create_support_task"} 1`,
		`retrysafe_unknown_operations{tenant="globex"} 1`,
		`retrysafe_oldest_unknown_age_seconds{tenant="globex"}`,
		`retrysafe_call_duration_seconds_bucket{class="done",tool="create_support_task",le="+Inf"} 2`,
		`retrysafe_ledger_commit_batch_size_count`,
		`retrysafe_ledger_up 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if r := e.do("GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("healthz %d", r.status)
	}
}

func TestARevokedTokenStopsWorkingWithinTheTokenTTL(t *testing.T) {
	e := newEnv(t)
	secret := e.token("acme")
	e.tokens["revokee"] = secret
	if r := e.call("revokee", "create_support_task", "before-revoke", task); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	toks, _ := e.st.ListTokens(context.Background(), "acme")
	if _, err := e.st.RevokeToken(context.Background(), toks[len(toks)-1].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the default TTL, 1 s
	before := e.snapshot()
	if r := e.call("revokee", "create_support_task", "after-revoke", task); r.status != 401 {
		t.Fatalf("revoked token: %d %s", r.status, r.body)
	}
	if r := e.get("revokee", "/v1/operations/before-revoke"); r.status != 401 {
		t.Fatalf("revoked token reads: %d", r.status)
	}
	if e.snapshot() != before {
		t.Fatal("a revoked token's call wrote")
	}
}

func TestOverTheConcurrencyCapIs503WithRetryAfter(t *testing.T) {
	e := newEnv(t, func(c *gateway.Config) {
		c.MaxInFlight, c.QueueWait, c.CallTimeout = 1, 50*time.Millisecond, 5*time.Second
	})
	// Occupy the only slot with a call that waits for the ledger, locked
	// by another connection.
	release := testledger.HoldWriteLock(t, e.path)
	done := make(chan reply)
	go func() {
		done <- e.call("acme", "create_support_task", "slow", task)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(string(e.do("GET", "/metrics", "").body), "retrysafe_http_in_flight_requests 2") {
		if time.Now().After(deadline) {
			t.Fatal("the slow call never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := e.call("acme", "create_support_task", "shed", task)
	release()
	first := <-done
	// The slow call counts as in flight while its body is read, before it
	// takes the slot: on a loaded machine the second call can take the
	// slot first, and the slow one is then the call over the cap. Either
	// way one of the two waits for the ledger and is made, the other is
	// turned away and writes nothing.
	made, shed, shedKey := first, r, "shed"
	if first.status == 503 && r.status == 201 {
		made, shed, shedKey = r, first, "slow"
	}
	if made.status != 201 {
		t.Fatalf("the call holding the slot: %d %s", made.status, made.body)
	}
	if shed.status != 503 || shed.header.Get("Retry-After") != "1" {
		t.Fatalf("over the cap: %d %v %s", shed.status, shed.header, shed.body)
	}
	if p := shed.problem(t); p.Type != gateway.TypeURI(gateway.KindBusy) || p.Class != model.ClassInternal {
		t.Fatalf("problem %+v; want busy, class internal (as the table says)", p)
	}
	if _, err := e.st.Get(context.Background(), "acme", shedKey); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("a shed request wrote: %v", err)
	}
}

func TestStoredEscapeSequencesLeaveAsInertJSONEscapes(t *testing.T) {
	e := newEnv(t)
	// Stored faithfully, but never sent as raw ESC or a bidi override.
	args := `{"subject":"\u001b]0;pwned\u0007 \u202eevil"}`
	for _, r := range []reply{
		e.call("acme", "create_support_task", "esc", args),
		e.call("acme", "create_support_task", "esc", args),
		e.get("acme", "/v1/operations/esc"),
		e.get("acme", "/v1/operations"),
	} {
		if r.status >= 300 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if bytes.ContainsAny(r.body, "\x1b\x07") || bytes.Contains(r.body, []byte("\u202e")) {
			t.Fatalf("raw control characters in %s", r.body)
		}
	}
	op, err := e.st.Get(context.Background(), "acme", "esc")
	if err != nil || !strings.Contains(op.Summary, "\u202e") {
		t.Fatalf("not stored faithfully: %+v %v", op, err)
	}
}

// The list pages newest first. Its cursor is the tenant's own key of the
// page's last operation, never a ledger-wide number: a number would tell
// a tenant how many operations other tenants made in between.
func TestOperationListsPageNewestFirst(t *testing.T) {
	e := newEnv(t)
	for _, k := range []string{"p1", "p2", "p3"} {
		if r := e.call("acme", "create_support_task", k, `{"subject":"`+k+`"}`); r.status != 201 {
			t.Fatalf("%s: %d", k, r.status)
		}
	}
	type page struct {
		Operations []struct{ Key string } `json:"operations"`
		NextBefore string                 `json:"next_before"`
	}
	read := func(tenant, path string) page {
		t.Helper()
		r := e.get(tenant, path)
		var p page
		if r.status != 200 || json.Unmarshal(r.body, &p) != nil {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return p
	}
	first := read("acme", "/v1/operations?limit=2")
	if len(first.Operations) != 2 || first.Operations[0].Key != "p3" || first.Operations[1].Key != "p2" || first.NextBefore != "p2" {
		t.Fatalf("first page %+v", first)
	}
	second := read("acme", "/v1/operations?limit=2&before="+url.QueryEscape(first.NextBefore))
	if len(second.Operations) != 1 || second.Operations[0].Key != "p1" || second.NextBefore != "" {
		t.Fatalf("second page %+v", second)
	}
	// Another tenant's activity does not show in acme's cursors.
	for _, k := range []string{"g1", "g2", "g3", "g4"} {
		if r := e.call("globex", "create_support_task", k, `{"subject":"`+k+`"}`); r.status != 201 {
			t.Fatalf("%s: %d", k, r.status)
		}
	}
	if again := read("acme", "/v1/operations?limit=2"); again.NextBefore != first.NextBefore {
		t.Fatalf("acme's cursor moved with globex's calls: %q, was %q", again.NextBefore, first.NextBefore)
	}
	// Another tenant's key as a cursor is refused exactly as a key that
	// never existed.
	other, never := e.get("acme", "/v1/operations?before=g2"), e.get("acme", "/v1/operations?before=zz")
	if other.status != 400 || never.status != 400 || string(other.body) != strings.ReplaceAll(string(never.body), "zz", "g2") {
		t.Fatalf("another tenant's key: %d %s; a key never used: %d %s", other.status, other.body, never.status, never.body)
	}
	for _, bad := range []string{"?limit=0", "?limit=501", "?before=x", "?before=", "?state=nope"} {
		if r := e.get("acme", "/v1/operations"+bad); r.status != 400 {
			t.Fatalf("%s: %d", bad, r.status)
		} else {
			r.problem(t)
		}
	}
}

// A repeated query parameter of the operations list is refused with 400
// naming it, never read as its first value (state=unknown&state=applied
// listed only the unknown ones, silently).
func TestListOperationsRefusesARepeatedParameter(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ query, name string }{
		{"state=unknown&state=applied", "state"},
		{"state=unknown&state=unknown", "state"},
		{"limit=2&limit=3", "limit"},
		{"before=5&before=9", "before"},
	} {
		r := e.get("acme", "/v1/operations?"+c.query)
		if r.status != 400 {
			t.Fatalf("%s: %d %s", c.query, r.status, r.body)
		}
		if p := r.problem(t); p.Status != 400 || !strings.Contains(p.Detail, c.name+" given 2 times") {
			t.Fatalf("%s: %+v", c.query, p)
		}
	}
	if r := e.get("acme", "/v1/operations?state=unknown&limit=2"); r.status != 200 {
		t.Fatalf("one of each: %d %s", r.status, r.body)
	}
}

// A client that sends its headers and then dribbles its body (slowloris)
// must not hold one of the --max-in-flight slots while it does: with the
// slots taken before the body was read, as many slow clients as slots
// turned every other caller away with 503 for as long as they kept
// trickling (up to the read timeout, then again on a new connection).
// The body is read first; a slot is taken only for the work.
func TestSlowBodiesDoNotHoldTheConcurrencySlots(t *testing.T) {
	e := newEnv(t, func(c *gateway.Config) {
		c.MaxInFlight, c.QueueWait = 2, 50*time.Millisecond
	})
	for _, path := range []string{"/v1/tools/create_support_task", "/mcp"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			for i := 0; i < 4; i++ { // twice as many as there are slots
				conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
					"Accept: application/json, text/event-stream\r\nIdempotency-Key: slow-%d\r\nContent-Length: 100\r\n\r\n{", path, e.tokens["acme"], i)
			}
			// Let the server read the slow clients' headers.
			time.Sleep(200 * time.Millisecond)
			key := "legit-" + strings.Trim(path, "/")
			key = strings.ReplaceAll(key, "/", "-")
			if r := e.call("acme", "create_support_task", key, task); r.status != 201 {
				t.Fatalf("with slow clients trickling their bodies, a whole request got %d %s", r.status, r.body)
			}
		})
	}
}

// A ledger that refuses every write from now on (its -wal was removed
// under the gateway: see store/sqlite) is not healthy: /healthz says so,
// so whatever routes traffic by it stops sending calls that can only fail.
func TestHealthzFailsOnceTheLedgerRefusesWrites(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("healthz %d %s", r.status, r.body)
	}
	if err := os.Remove(e.path + "-wal"); err != nil {
		t.Fatal(err)
	}
	if r := e.call("acme", "create_support_task", "after-removal", task); r.status != 201 && r.status != 500 {
		t.Fatalf("a call after the log was removed: %d %s", r.status, r.body)
	}
	r := e.do("GET", "/healthz", "")
	if r.status != 503 || !strings.Contains(string(r.body), "restart") {
		t.Fatalf("healthz once the ledger refuses writes: %d %s", r.status, r.body)
	}
}

// What the gateway tells a client about its ledger's trouble says what
// happened without where the ledger lives: a file path, or a PostgreSQL
// URL's host, user, database and schema, are the operator's to know — and
// /healthz answers anyone.
func TestAnswersDoNotNameWhereTheLedgerLives(t *testing.T) {
	e := newEnv(t)
	if err := os.Remove(e.path + "-wal"); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for i := 0; i < 2; i++ {
		r := e.call("acme", "create_support_task", "after-removal-"+strconv.Itoa(i), task)
		bodies = append(bodies, string(r.body))
	}
	r := e.do("GET", "/healthz", "")
	if r.status != 503 {
		t.Fatalf("healthz once the ledger refuses writes: %d %s", r.status, r.body)
	}
	bodies = append(bodies, string(r.body))
	for _, b := range bodies {
		if strings.Contains(b, filepath.Base(e.path)) {
			t.Errorf("an answer names the ledger's file: %s", b)
		}
	}
}
