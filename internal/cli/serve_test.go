package cli

// The gateway as a real process: killed with SIGKILL under load from
// another process, stopped with SIGTERM under load, and driven over stdio
// by the MCP SDK's own client.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// The load generator (loadWorker) is another process that calls the
// gateway and prints one line per acknowledged call.

type loadSpec struct {
	URL, Token, Prefix string
	Workers, Max       int
}

// ack is what the load process saw acknowledged.
type ack struct {
	Key     string        `json:"key"`
	Status  int           `json:"status"`
	Receipt model.Receipt `json:"receipt"`
}

func loadBody(key string) string { return fmt.Sprintf(`{"subject":"load %s"}`, key) }

// runLoad calls POST /v1/tools/create_support_task with new keys from
// several goroutines until the gateway stops answering (or Max calls), and
// prints each acknowledged call as one JSON line.
func runLoad(specJSON string) int {
	var spec loadSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: spec.Workers}}
	var mu sync.Mutex
	var next int64
	var wg sync.WaitGroup
	for w := 0; w < spec.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if int(i) >= spec.Max {
					return
				}
				key := fmt.Sprintf("%s-%d", spec.Prefix, i)
				req, _ := http.NewRequest("POST", spec.URL+"/v1/tools/create_support_task", strings.NewReader(loadBody(key)))
				req.Header.Set("Authorization", "Bearer "+spec.Token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				resp, err := client.Do(req)
				if err != nil {
					return // the gateway is gone
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || (resp.StatusCode != 201 && resp.StatusCode != 200) {
					if resp.StatusCode == 503 {
						continue
					}
					return
				}
				a := ack{Key: key, Status: resp.StatusCode}
				if json.Unmarshal(b, &a.Receipt) != nil {
					return
				}
				line, _ := json.Marshal(a)
				mu.Lock()
				os.Stdout.Write(append(line, '\n'))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return 0
}

// server is a `retrysafe serve` process (this test binary re-executed).
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	exited chan struct{}
}

func startServer(t *testing.T, db string, extra ...string) *server {
	t.Helper()
	cmd := reexec.Command(t, asCLI, nil, append([]string{"serve", "--db", db, "--listen", "127.0.0.1:0"}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.exited
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v; stderr %s", err, s.stderr)
	}
	_, rest, ok := strings.Cut(line, "listening on ")
	if !ok {
		t.Fatalf("serve: %q", line)
	}
	s.url = strings.Fields(rest)[0]
	return s
}

// startLoad runs the load generator process; acks streams what it prints.
func startLoad(t *testing.T, spec loadSpec) (cmd *exec.Cmd, acks <-chan ack) {
	t.Helper()
	cmd = reexec.Command(t, loadWorker, spec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan ack, 1<<16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var a ack
			if json.Unmarshal(sc.Bytes(), &a) == nil {
				ch <- a
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, ch
}

func newToken(t *testing.T, db, tenant string) string {
	t.Helper()
	out, errOut, code := cli(t, "tokens", "create", "--db", db, "--tenant", tenant)
	if code != 0 {
		t.Fatalf("tokens create: %d %s", code, errOut)
	}
	return strings.TrimSpace(out)
}

// replayAll calls every acknowledged key again on a fresh gateway: each
// must be a replay of the very receipt that was acknowledged.
func replayAll(t *testing.T, url, token string, acks []ack) {
	t.Helper()
	for _, a := range acks {
		req, _ := http.NewRequest("POST", url+"/v1/tools/create_support_task", strings.NewReader(loadBody(a.Key)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", a.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rc model.Receipt
		json.NewDecoder(resp.Body).Decode(&rc)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "true" || string(rc.Result) != string(a.Receipt.Result) {
			t.Fatalf("acknowledged %s (%s) replays as %d %s", a.Key, a.Receipt.Result, resp.StatusCode, rc.Result)
		}
	}
}

// checkOneEffectEach: every operation of the tenant has exactly one effect,
// every acknowledged receipt a different one, and the ledger's invariants
// hold.
func checkOneEffectEach(t *testing.T, db, tenant string, acks []ack) {
	t.Helper()
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := st.Counts(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	effects, err := st.EffectCount(ctx, model.TableTasks, "create_support_task", tenant)
	if err != nil {
		t.Fatal(err)
	}
	if effects != c.Total || c.ByState[model.StateApplied] != c.Total {
		t.Fatalf("%d effects for %d operations (%v)", effects, c.Total, c.ByState)
	}
	seen := map[string]string{}
	for _, a := range acks {
		if k, dup := seen[string(a.Receipt.Result)]; dup {
			t.Fatalf("keys %s and %s share the effect %s", k, a.Key, a.Receipt.Result)
		}
		seen[string(a.Receipt.Result)] = a.Key
	}
	if bad, err := st.Audit(ctx); err != nil || len(bad) > 0 {
		t.Fatalf("audit: %v %v", bad, err)
	}
}

func TestServeKilledUnderLoadLosesNothingAcknowledged(t *testing.T) {
	db := newLedgerFile(t)
	token := newToken(t, db, "crash")
	srv := startServer(t, db)
	load, acks := startLoad(t, loadSpec{URL: srv.url, Token: token, Prefix: "crash", Workers: 8, Max: 1 << 30})
	var got []ack
	for a := range acks {
		got = append(got, a)
		if len(got) == 300 {
			// SIGKILL: no shutdown, no flush, mid-flight requests and all.
			srv.cmd.Process.Signal(syscall.SIGKILL)
			<-srv.exited
		}
	}
	load.Wait()
	if len(got) < 300 {
		t.Fatalf("only %d acknowledged before the load stopped; serve stderr: %s", len(got), srv.stderr)
	}
	srv2 := startServer(t, db)
	replayAll(t, srv2.url, token, got)
	checkOneEffectEach(t, db, "crash", got)
	t.Logf("%d calls acknowledged before the kill; every one replays its receipt", len(got))
}

func TestServeStopsOnSIGTERMAfterAnsweringWhatIsInFlight(t *testing.T) {
	db := newLedgerFile(t)
	token := newToken(t, db, "drain")
	srv := startServer(t, db)
	load, acks := startLoad(t, loadSpec{URL: srv.url, Token: token, Prefix: "drain", Workers: 8, Max: 1 << 30})
	var got []ack
	for a := range acks {
		got = append(got, a)
		if len(got) == 200 {
			srv.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	load.Wait()
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM; stderr %s", code, srv.stderr)
	}
	if !strings.Contains(srv.stderr.String(), `"msg":"stopped"`) {
		t.Fatalf("no orderly stop in the log: %s", srv.stderr)
	}
	srv2 := startServer(t, db)
	replayAll(t, srv2.url, token, got)
	checkOneEffectEach(t, db, "drain", got)
}

// A request still open when --shutdown-timeout ends is cut unanswered:
// serve says how many and exits 1 — not the clean stop's 0.
func TestServeSaysItCutRequestsAtTheShutdownDeadline(t *testing.T) {
	db := newLedgerFile(t)
	token := newToken(t, db, "cut")
	srv := startServer(t, db, "--shutdown-timeout", "300ms")
	// A body that never finishes arriving: the request stays open.
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/tools/create_support_task HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nIdempotency-Key: k1\r\nContent-Length: 100\r\n\r\n{\"sub", token)
	time.Sleep(200 * time.Millisecond) // the handler is reading the body
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != exitInternal {
		t.Fatalf("serve exited %d after cutting a request; want 1; stderr %s", code, srv.stderr)
	}
	if !strings.Contains(srv.stderr.String(), "1 request(s) among them still being worked on") {
		t.Fatalf("serve did not say how many it cut: %s", srv.stderr)
	}
}

func TestMCPOverStdioDrivenByTheSDKClient(t *testing.T) {
	db := newLedgerFile(t)
	// An operation whose outcome is unknown, for the model to meet.
	if _, errOut, code := cli(t, callArgs(db, "agents", "lost-notice", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: %d %s", code, errOut)
	}
	cmd := reexec.Command(t, asCLI, nil, "mcp", "--db", db, "--tenant", "agents")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "retrysafe-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(config.Default().Tools.Names()) {
		t.Fatalf("%d tools, want %d", len(tools.Tools), len(config.Default().Tools.Names()))
	}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(b, &s)
		want := append([]string{}, fieldNames(tool.Name)...)
		want = append(want, "idempotency_key")
		if tool.Annotations == nil || !tool.Annotations.IdempotentHint {
			t.Fatalf("%s: not marked idempotent", tool.Name)
		}
		if strings.Join(s.Required, ",") != strings.Join(want, ",") || s.Properties["idempotency_key"] == nil {
			t.Fatalf("%s: schema %s, want required %v", tool.Name, b, want)
		}
	}

	call := func(name, key string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		if key != "" {
			a["idempotency_key"] = key
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(r *mcp.CallToolResult) string {
		if len(r.Content) == 0 {
			return ""
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
		return ""
	}
	status := func(r *mcp.CallToolResult) string {
		m, _ := r.StructuredContent.(map[string]any)
		s, _ := m["status"].(string)
		return s
	}
	subject := map[string]any{"subject": "refund order 1234"}
	if r := call("create_support_task", "mcp-1", subject, mcp.Meta{"tool_call_id": "toolu_01ABC"}); r.IsError || status(r) != "created" {
		t.Fatalf("call: %v %s", r.IsError, text(r))
	}
	if r := call("create_support_task", "mcp-1", subject, nil); r.IsError || status(r) != "replayed" {
		t.Fatalf("replay: %v %s", r.IsError, text(r))
	}
	cases := []struct {
		name, tool, key string
		args            map[string]any
		starts          string
	}{
		{"conflict", "create_support_task", "mcp-1", map[string]any{"subject": "refund order 9999"}, "Fix the request"},
		{"unknown outcome", "send_notification", "lost-notice", map[string]any{"to": "customer@example.com", "body": "your parcel is late"}, "Stop"},
		{"no key", "create_support_task", "", subject, "Fix the arguments"},
		{"invalid arguments", "create_support_task", "mcp-2", map[string]any{"subject": 42}, "Fix the arguments"},
	}
	for _, c := range cases {
		r := call(c.tool, c.key, c.args, nil)
		if !r.IsError || !strings.HasPrefix(text(r), c.starts) {
			t.Errorf("%s: error=%v %q, want a tool error starting %q", c.name, r.IsError, text(r), c.starts)
		}
	}
	session.Close()

	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Detail(context.Background(), "agents", "mcp-1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Attempts[0].TraceID != "toolu_01ABC" {
		t.Fatalf("the tool-call id is not the attempt's trace id: %+v", d.Attempts[0])
	}
	if n, _ := st.EffectCount(context.Background(), model.TableTasks, "create_support_task", "agents"); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
}

func fieldNames(tool string) []string {
	var out []string
	t, err := config.Default().Tools.Lookup(tool)
	if err != nil {
		return nil
	}
	return append(out, t.Schema.Required...)
}

// A malformed line on the MCP server's stdin is answered with a JSON-RPC
// error and the session goes on: the next call still works, and the
// process exits 0 when stdin ends. Raw pipes, so the lines are exactly the
// bad ones (the SDK's client would never send them).
func TestMCPOverStdioSurvivesMalformedLines(t *testing.T) {
	db := newLedgerFile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := binaryCmd(ctx, t, "mcp", "--db", db, "--tenant", "agents")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	type rpcReply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %q: %v (stderr %s)", line, err, stderr.String())
		}
	}
	recv := func() rpcReply {
		t.Helper()
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read: %v (stderr %s)", err, stderr.String())
		}
		var r rpcReply
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("reply %s: %v", b, err)
		}
		return r
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := recv(); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	callLine := func(id int, key string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_support_task","arguments":{"subject":"refund","idempotency_key":%q}}}`, id, key)
	}
	for i, c := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", `this is not json`, -32700, "null"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":4,"method":"tools/li`, -32700, "null"},
		{"JSON, not JSON-RPC", `{"id":7,"hello":"world"}`, -32600, "7"},
		{"a bare number", `42`, -32600, "null"},
		{"a batch", `[` + callLine(8, "batched") + `]`, -32600, "null"},
	} {
		send(c.line)
		if r := recv(); r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Fatalf("%s: %+v, want error %d with id %s", c.name, r, c.code, c.id)
		}
		// The session is still there: a call after each bad line works.
		send(callLine(100+i, "after-bad-line"))
		r := recv()
		if r.Error != nil || string(r.ID) != strconv.Itoa(100+i) || !strings.Contains(string(r.Result), `"tenant":"agents"`) {
			t.Fatalf("call after %s: %+v %s", c.name, r, r.Result)
		}
	}
	send(``) // a blank line is skipped, not answered
	send(callLine(200, "last"))
	if r := recv(); r.Error != nil || string(r.ID) != "200" {
		t.Fatalf("last call: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v (stderr %s)", err, stderr.String())
	}
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.EffectCount(context.Background(), model.TableTasks, "create_support_task", "agents"); n != 2 {
		t.Fatalf("%d effects, want 2 (after-bad-line once, last once; the batch never ran)", n)
	}
}

// bench --http drives a real gateway from this process: every mix gets
// the answers it expects over its keep-alive connections, and the calls
// are in the ledger.
func TestBenchOverHTTPDrivesARealGateway(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gw.db")
	token := newToken(t, db, "bench")
	srv := startServer(t, db)
	for _, mix := range []string{"new", "replay", "conflict"} {
		out, errText, code := cli(t, "bench", "--http", srv.url, "--token", token, "--workers", "4", "--ops", "40",
			"--mix", mix, "--baseline=false", "--json")
		if code != 0 {
			t.Fatalf("bench --http --mix %s: exit %d %q %q", mix, code, out, errText)
		}
		var rep benchReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("bench --json %q: %v", out, err)
		}
		if rep.Ops != 40 || rep.Mix != mix || rep.Errors != 0 || rep.OpsPerSec <= 0 || rep.P99Ms < rep.P50Ms {
			t.Errorf("bench --http %s report %+v", mix, rep)
		}
	}
	// With the baseline: bare SQLite interleaved with the gateway's calls.
	out, errText, code := cli(t, "bench", "--http", srv.url, "--token", token, "--workers", "4", "--ops", "40",
		"--rounds", "4", "--baseline-dir", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("bench --http with the baseline: exit %d %q %q", code, out, errText)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json %q: %v", out, err)
	}
	checkBenchRounds(t, out, rep, 4, 40)
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// new: 40 keys; replay and conflict: a pool of 40 stored keys each.
	if c, _ := st.Counts(context.Background(), "bench"); c.Total != 160 {
		t.Errorf("the ledger holds %d operations of tenant bench, want 160", c.Total)
	}
}

// bench --http asks the gateway once before it starts a clock: a token
// the gateway refuses, or no gateway at all, is said at once with what to
// do, and nothing is written or timed.
func TestBenchOverHTTPSaysAtOnceWhatIsWrong(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gw.db")
	token := newToken(t, db, "bench")
	srv := startServer(t, db)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "http://" + closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name, url, token string
		want             []string
	}{
		{"a token the gateway does not know", srv.url, "rs_" + strings.Repeat("x", 40), []string{"HTTP 401", "nothing was run", "retrysafe tokens create --db LEDGER --tenant bench"}},
		{"a revoked token's shape, empty bearer", srv.url, " ", []string{"HTTP 401"}},
		{"no gateway listening", nobody, token, []string{"no gateway answers at " + nobody, "retrysafe serve"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errText, code := cli(t, "bench", "--http", c.url, "--token", c.token, "--workers", "4", "--ops", "400",
				"--rounds", "2", "--baseline-dir", t.TempDir())
			if code == 0 || out != "" {
				t.Fatalf("bench: exit %d, stdout %q; want a failure before any report", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(errText, w) {
					t.Errorf("stderr %q does not say %q", errText, w)
				}
			}
		})
	}
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c, _ := st.Counts(context.Background(), "bench"); c.Total != 0 {
		t.Errorf("the ledger holds %d operations, want none", c.Total)
	}
}

// A run whose calls failed reports no ratio: a refused call is quick and
// writes nothing, so its rate against bare SQLite would read as a result.
func TestBenchReportsNoRatioWhenCallsFailed(t *testing.T) {
	rep := benchReport{Ops: 200, Errors: 200, Rounds: []benchRound{{Ops: 200, OpsPerSec: 7493, TxPerSec: 472, Ratio: 15.89}},
		MedianRatio: 15.89, RatioMin: 15.89, RatioMax: 15.89, Ratio: 15.89}
	var b strings.Builder
	rep.printRatios(&b, "bare SQLite")
	if got := b.String(); strings.Contains(got, "15.89") || !strings.Contains(got, "none: 200 of 200 calls failed") {
		t.Fatalf("printRatios with failed calls wrote %q", got)
	}
}

// The gateway's JSON log lines carry what clients sent (a refused key, a
// trace id) and are read with tail and less: C1 and bidirectional controls
// are escaped in them, as in every JSON the command line writes, and each
// line still decodes to what was logged.
func TestServeJSONLogEscapesEveryUnsafeCharacter(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info")
	if err != nil {
		t.Fatal(err)
	}
	hostile := "k\u009b2J\u202eevil\u2066\x7f"
	log.Info("request", "key", hostile)
	for _, r := range buf.String() {
		if r != '\n' && textsafe.Unsafe(r) {
			t.Fatalf("a raw %U in the log line %q", r, buf.String())
		}
	}
	var line struct{ Key string }
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line.Key != hostile {
		t.Fatalf("log line %q: %v, key %q", buf.String(), err, line.Key)
	}
}

// A call still waiting for its provider when --shutdown-timeout cuts its
// connection keeps going (its caller may retry with the same key), and
// serve waits for it before it closes the ledger: its answer is recorded
// — applied, not left in progress for a sweep.
func TestServeRecordsACallCutAtTheShutdownDeadlineBeforeClosing(t *testing.T) {
	dir := t.TempDir()
	addr, _ := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sb.db"))
	cfg := httpToolsConfig(t, addr, "sandbox-idem", true)
	db := newLedgerFile(t)
	token := newToken(t, db, "cut")
	srv := startServer(t, db, "--config", cfg, "--shutdown-timeout", "200ms")
	queueFault(t, addr, "delay=1500ms")
	sent := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.url+"/v1/tools/notify", strings.NewReader(`{"to":"a@example.com","body":"b"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "slow")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			sent <- 0
			return
		}
		resp.Body.Close()
		sent <- resp.StatusCode
	}()
	time.Sleep(400 * time.Millisecond) // the request is at the provider
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20 s of SIGTERM")
	}
	if code := <-sent; code != 0 {
		t.Fatalf("the caller got %d; want its connection cut at the shutdown deadline", code)
	}
	out, errOut, _ := cli(t, "ops", "show", "--db", db, "--tenant", "cut", "--key", "slow", "--json")
	var d struct {
		Operation struct {
			State string `json:"state"`
		} `json:"operation"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != "applied" {
		t.Fatalf("after serve stopped, slow is %q (%v %s); want applied: its answer recorded before the ledger closed; serve said %s", d.Operation.State, err, errOut, srv.stderr)
	}
}

// A log shipper that restarts, or `serve 2>&1 | tee` whose tee dies, closes
// the pipe serve writes its log and address to. That must not kill serve
// (Go's default on a write to a broken stdout or stderr): a call it has
// accepted runs to its end, is recorded and answered, and SIGTERM still
// stops it in order.
func TestServeOutlivesAClosedLogPipe(t *testing.T) {
	db := newLedgerFile(t)
	token := newToken(t, db, "pipe")
	cmd := reexec.Command(t, asCLI, nil, "serve", "--db", db, "--listen", "127.0.0.1:0", "--log-level", "info")
	outR, errR := startPiped(t, cmd)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	line, err := bufio.NewReader(outR).ReadString('\n')
	_, rest, ok := strings.Cut(line, "listening on ")
	if err != nil || !ok {
		t.Fatalf("serve printed no address: %q %v", line, err)
	}
	url := strings.Fields(rest)[0]
	// Nobody reads the log or the output any more.
	outR.Close()
	errR.Close()
	for i, want := range []int{http.StatusCreated, http.StatusOK, http.StatusCreated} {
		key := []string{"p1", "p1", "p2"}[i]
		req, _ := http.NewRequest("POST", url+"/v1/tools/create_support_task", strings.NewReader(`{"subject":"closed pipe"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("call %d (%s) after the log pipe closed: %v", i, key, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("call %d (%s): %d, want %d", i, key, resp.StatusCode, want)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	if st := cmd.ProcessState; st.ExitCode() != 0 {
		t.Fatalf("serve ended %v after SIGTERM with its log pipe closed; want exit 0", st)
	}
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, _ := st.Counts(context.Background(), "pipe")
	effects, _ := st.EffectCount(context.Background(), model.TableTasks, "create_support_task", "pipe")
	if c.Total != 2 || c.ByState[model.StateApplied] != 2 || effects != 2 {
		t.Fatalf("two keys left %d operations (%v) and %d effects; want 2 applied, 2 effects", c.Total, c.ByState, effects)
	}
}

// An MCP client that crashes closes both ends of the stdio session while a
// call it sent is at the provider. mcp must not die of the closed pipe:
// the call runs to its end and its answer is recorded (applied), not left
// in progress for a sweep to make unknown.
func TestMCPRecordsACallWhoseClientClosedStdio(t *testing.T) {
	dir := t.TempDir()
	addr, _ := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sb.db"))
	cfg := httpToolsConfig(t, addr, "sandbox", false)
	db := newLedgerFile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := binaryCmd(ctx, t, "mcp", "--db", db, "--config", cfg, "--tenant", "agents", "--log-level", "debug")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, errR := startPiped(t, cmd)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crashy","version":"1"}}}`+"\n")
	if _, err := bufio.NewReader(outR).ReadString('\n'); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	queueFault(t, addr, "delay=1500ms")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify","arguments":{"to":"a@example.com","body":"b","idempotency_key":"crash-1"}}}`+"\n")
	time.Sleep(400 * time.Millisecond) // the call is at the provider
	// The client dies: nobody reads mcp's answers or its log any more.
	outR.Close()
	errR.Close()
	stdin.Close()
	err = cmd.Wait()
	if st := cmd.ProcessState; st == nil || !st.Exited() {
		t.Fatalf("mcp ended %v (%v) when its client closed stdio; want an exit, not a signal", st, err)
	}
	out, errOut, _ := cli(t, "ops", "show", "--db", db, "--tenant", "agents", "--key", "crash-1", "--json")
	var d struct {
		Operation struct {
			State string `json:"state"`
		} `json:"operation"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != "applied" {
		t.Fatalf("after its client closed stdio, crash-1 is %q (%v %s); want applied: the provider delivered it", d.Operation.State, err, errOut)
	}
}

// startPiped starts cmd with its stdout and stderr on pipes of their own,
// whose read ends the test may close to play a reader that went away.
func startPiped(t *testing.T, cmd *exec.Cmd) (stdout, stderr *os.File) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	return outR, errR
}
