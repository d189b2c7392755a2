package gateway_test

// A provider this server cannot dispatch to (its dispatch reads a ${NAME}
// not set in serve's environment) is the server's problem, not the
// caller's: 503 /problems/misconfigured, retry later with the same key,
// nothing written — logged as a warning with the reason (R11 M6).

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/provider"
)

// cannotSend is a provider whose dispatch reads an unset ${MAIL_TOKEN}.
type cannotSend struct{ provider.Provider }

func (cannotSend) CanDispatch() error {
	return errors.New("header Authorization needs $MAIL_TOKEN, which is not set")
}

func TestACallThisServerCannotDispatchIs503Misconfigured(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *gateway.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	for name, p := range e.svc.Providers {
		e.svc.Providers[name] = cannotSend{p}
	}
	before := e.snapshot()
	r := e.call("acme", "send_notification", "k1", notify)
	p := r.problem(t)
	if r.status != 503 || p.Type != "/problems/misconfigured" || p.Class != "internal" || r.header.Get("Retry-After") == "" {
		t.Fatalf("status %d, type %s, class %s, Retry-After %q; want 503 /problems/misconfigured, class internal, a Retry-After: %s",
			r.status, p.Type, p.Class, r.header.Get("Retry-After"), r.body)
	}
	// The caller cannot set the server's environment: the body says the
	// server's operator must fix it (its log names what), and names no
	// variable of the server's setup, nor asks the caller to set one (L22).
	if strings.Contains(p.Detail, "MAIL_TOKEN") || strings.Contains(p.Detail, "set it") || !strings.Contains(p.Detail, "operator") ||
		strings.Count(p.Detail, "nothing was") != 1 || !strings.Contains(p.Detail, "same key") || !strings.Contains(p.Title, "same key") {
		t.Fatalf("problem %+v; want the operator to fix it, no variable named, 'nothing was' once, and retry with the same key", p)
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("a refused call wrote:\nbefore %s\nafter  %s", before, after)
	}
	if out := logs.String(); !strings.Contains(out, `"level":"WARN"`) || !strings.Contains(out, "$MAIL_TOKEN") {
		t.Fatalf("the log does not warn with the reason: %s", out)
	}
	if doc := e.do("GET", "/problems/misconfigured", ""); doc.status != 200 || !bytes.Contains(doc.body, []byte("503")) {
		t.Fatalf("GET /problems/misconfigured: %d %s", doc.status, doc.body)
	}

	res := mcpCall(t, e, "m1", map[string]any{"to": "ops@example.com", "body": "disk full"})
	text := mcpText(res)
	if !res.IsError || !strings.HasPrefix(text, "Retry later with the same idempotency_key: this server is misconfigured") || strings.Contains(text, "Fix the") ||
		strings.Contains(text, "MAIL_TOKEN") || strings.Contains(text, "set it") {
		t.Fatalf("mcp: %q; want: retry later, the server is misconfigured", text)
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("a refused MCP call wrote:\nbefore %s\nafter  %s", before, after)
	}
}
