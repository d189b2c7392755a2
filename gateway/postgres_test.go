package gateway_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/gateway"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A PostgreSQL outage reaches callers — unauthenticated ones on /healthz
// and any token-shaped bearer, calls and reads of a live token — as "unavailable (an outage)", 503: not the
// driver's "failed to connect to user=… database=…: /…/.s.PGSQL.5432", nor
// the ledger's URL, host or schema.
func TestAPostgreSQLOutageNamesNoUserDatabaseOrSocket(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, u := pgtest.NewProxy(t, direct)
	st, err := postgres.Open(u, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := reconcile.New(st, config.Default().Tools, provider.Registry{})
	g, err := gateway.New(gateway.Config{Service: svc, Tools: catalog{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	e := &env{t: t, srv: srv, tokens: map[string]string{}}
	secret, tok, err := model.NewToken("acme", "test", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateToken(context.Background(), &tok); err != nil {
		t.Fatal(err)
	}
	e.tokens["acme"] = secret
	if r := e.call("acme", "create_support_task", "before", task); r.status != 201 {
		t.Fatalf("before the outage: %d %s", r.status, r.body)
	}
	proxy.Stop()
	unknown, _, _ := model.NewToken("acme", "never stored", time.Time{})
	replies := map[string]reply{
		"healthz":                     e.do("GET", "/healthz", ""),
		"list, a token-shaped bearer": e.do("GET", "/v1/operations", "", "Authorization", "Bearer "+unknown),
		"a call":                      e.call("acme", "create_support_task", "during", task),
		"a read":                      e.get("acme", "/v1/operations/before"),
	}
	var mcpText string
	if s, err := mcpSession(t, e, secret); err != nil {
		t.Errorf("MCP during the outage: %v", err)
	} else {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_support_task",
			Arguments: map[string]any{"subject": "x", "idempotency_key": "during-mcp"}})
		s.Close()
		if err != nil || !res.IsError {
			t.Fatalf("MCP call during the outage: %v %+v", err, res)
		}
		mcpText = res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(mcpText, "unavailable (an outage)") {
			t.Errorf("MCP tool error %q; want an outage", mcpText)
		}
	}
	schema, _, _ := strings.Cut(direct[strings.Index(direct, "search_path=")+len("search_path="):], "&")
	for name, r := range replies {
		p := r.problem(t)
		if r.status != 503 || p.Class != model.ClassInternal || !strings.Contains(p.Detail, "unavailable (an outage)") {
			t.Errorf("%s: %d %s; want 503, class internal, an outage", name, r.status, r.body)
		}
		for _, leak := range []string{"user=", "database=", ".s.PGSQL", "failed to connect", proxy.Addr(), "postgres://", schema} {
			if strings.Contains(string(r.body), leak) {
				t.Errorf("%s: the answer names %q: %s", name, leak, r.body)
			}
		}
	}
	for _, leak := range []string{"user=", "database=", ".s.PGSQL", "failed to connect", proxy.Addr(), "postgres://", schema} {
		if strings.Contains(mcpText, leak) {
			t.Errorf("MCP: the tool error names %q: %s", leak, mcpText)
		}
	}
}

// /metrics says how far this host's clock is from the database server's,
// whose clock the ledger keeps (retrysafe_ledger_clock_offset_seconds: the
// server's minus this host's, negative when this host runs ahead); a
// ledger whose clock is the host's (SQLite) or pinned has no such series.
func TestMetricsShowTheLedgerClocksOffset(t *testing.T) {
	url := pgtest.URL(t)
	if st, err := postgres.Open(url, store.Options{Create: true}); err != nil {
		t.Fatal(err)
	} else {
		st.Close()
	}
	for _, c := range []struct {
		name string
		o    store.Options
		want float64 // seconds; NaN: no series
	}{
		{"host an hour ahead", store.Options{HostClock: func() time.Time { return time.Now().Add(time.Hour) }}, -3600},
		{"host 90 s behind", store.Options{HostClock: func() time.Time { return time.Now().Add(-90 * time.Second) }}, 90},
		{"host in step", store.Options{}, 0},
		{"pinned clock", store.Options{Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }}, math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := postgres.Open(url, c.o)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			checkClockGauge(t, st, c.want)
		})
	}
	t.Run("SQLite", func(t *testing.T) {
		checkClockGauge(t, testledger.New(t).Store, math.NaN())
	})
}

// checkClockGauge scrapes a gateway on st and finds the clock offset
// gauge near want seconds (NaN: absent).
func checkClockGauge(t *testing.T, st store.Ledger, want float64) {
	t.Helper()
	g, err := gateway.New(gateway.Config{Service: reconcile.New(st, config.Default().Tools, provider.Registry{}), Tools: catalog{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	const name = "retrysafe_ledger_clock_offset_seconds"
	var line string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name+" ") {
			line = l
		}
	}
	switch {
	case math.IsNaN(want):
		if strings.Contains(string(body), name) {
			t.Errorf("metrics have %s; want none:\n%s", name, line)
		}
	case line == "":
		t.Errorf("metrics lack %s", name)
	default:
		got, err := strconv.ParseFloat(strings.TrimPrefix(line, name+" "), 64)
		if err != nil || math.Abs(got-want) > 0.1 {
			t.Errorf("%q; want about %g", line, want)
		}
		if !strings.Contains(string(body), "# TYPE "+name+" gauge") {
			t.Errorf("%s is no gauge", name)
		}
	}
}
