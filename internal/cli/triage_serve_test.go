package cli

// Triage against a real provider process: `retrysafe sandbox serve` on
// loopback, asked through the HTTP provider (kind = "http") — the way a
// third party is asked, not the in-process sandbox. The unknown operations
// are made by real calls through the same provider: the server applies and
// drops the connection (has it), or answers 500 without applying (has
// nothing); both leave the call unknown.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// triageServeConfig writes a config of `providers` HTTP providers (mail0,
// mail1, …), each with a notify tool (notify0, …), all sent to the sandbox
// server at addr (under its "sandbox" name, which does not honour keys).
func triageServeConfig(tb testing.TB, addr string, providers int) (path string, tools []string) {
	tb.Helper()
	var doc strings.Builder
	for i := range providers {
		fmt.Fprintf(&doc, `
[[providers]]
name = "mail%[1]d"
kind = "http"
timeout = "5s"
[providers.dispatch]
url = "http://%[2]s/v1/sandbox/deliveries"
ref_pointer = "/id"
[providers.lookup]
url = "http://%[2]s/v1/sandbox/deliveries/{downstream_key}"
ref_pointer = "/id"

[[tools]]
name = "notify%[1]d"
summary = "to"
provider = "mail%[1]d"
arguments = '{"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}'
`, i, addr)
		tools = append(tools, fmt.Sprintf("notify%d", i))
	}
	path = filepath.Join(tb.TempDir(), "tools.toml")
	if err := os.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, tools
}

// queueFaults queues count dispatches' worth of fault at the server.
func queueFaults(tb testing.TB, addr, fault string, count int) {
	tb.Helper()
	resp, err := http.Post("http://"+addr+"/_sandbox/faults", "application/json",
		strings.NewReader(fmt.Sprintf(`{"fault":%q,"count":%d}`, fault, count)))
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("queue %d × %s: %v %v", count, fault, resp, err)
	}
	resp.Body.Close()
}

// serveUnknowns makes hasIt+hasNothing unknown operations by real calls
// through the HTTP provider to the sandbox server at addr, 8 at once:
// keys k0… (tenants t0–t19) first, whose delivery the server applied
// before dropping the connection, then those it answered 500 without
// applying. It returns the keys the server holds a delivery for.
func serveUnknowns(tb testing.TB, db, cfgPath, addr string, tools []string, hasIt, hasNothing int) map[string]bool {
	tb.Helper()
	cfg, err := config.Resolve(cfgPath, os.LookupEnv)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := openLedger(context.Background(), db, cfg, opening{store: store.Options{Create: true}, use: ledger.Dispatching})
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	phase := func(fault string, from, count int) {
		if count == 0 {
			return
		}
		queueFaults(tb, addr, fault, count)
		work := make(chan int)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					req := model.Request{Tenant: fmt.Sprintf("t%d", i%20), Key: fmt.Sprintf("k%d", i), Tool: tools[i%len(tools)],
						Args: []byte(fmt.Sprintf(`{"to":"c%d@example.com","body":"invoice %d"}`, i, i)), WorkerID: "setup"}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					res, err := l.Service().Call(ctx, req, reconcile.CallOptions{})
					cancel()
					if res.Class != model.ClassUnknown {
						tb.Errorf("setup call %d (%s): %s %s %v; want unknown", i, fault, res.Class, res.Message, err)
					}
				}
			}()
		}
		for i := from; i < from+count; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
	}
	phase("drop-after-apply", 0, hasIt)
	phase("5xx", hasIt, hasNothing)
	if tb.Failed() {
		tb.FailNow()
	}
	held := map[string]bool{}
	for i := range hasIt {
		held[fmt.Sprintf("k%d", i)] = true
	}
	return held
}

// opsNow is every operation of the ledger: its state, version and last
// change, and its latest finding, by key.
func opsNow(tb testing.TB, db string) (states map[string]string, findings map[string]*model.Finding) {
	tb.Helper()
	st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	states, findings = map[string]string{}, map[string]*model.Finding{}
	q := store.ListQuery{Limit: 1000}
	for {
		page, err := st.List(context.Background(), q)
		if err != nil {
			tb.Fatal(err)
		}
		for _, op := range page {
			states[op.Key] = fmt.Sprintf("%s v%d %s", op.State, op.Version, op.UpdatedAt.Format(time.RFC3339Nano))
			findings[op.Key] = op.Finding
		}
		if len(page) < q.Limit {
			return states, findings
		}
		q.BeforeID = page[len(page)-1].ID
	}
}

func sameStates(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d operations, were %d", what, len(after), len(before))
	}
	for k, b := range before {
		if after[k] != b {
			t.Errorf("%s moved %s: %s, was %s — a finding never changes an operation", what, k, after[k], b)
		}
	}
}

// The sandbox server process is killed (SIGKILL) in the middle of a triage
// run: every operation asked after that gets "cannot tell" — never "has
// nothing", though the server's file is still there — and no operation
// moves. A run after the kill says "cannot tell" for every one (exit 3).
func TestTriageWhenTheSandboxServerIsKilledMidRun(t *testing.T) {
	dir := t.TempDir()
	addr, stop := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfgPath, tools := triageServeConfig(t, addr, 1)
	db := filepath.Join(dir, "l.db")
	const n, conc, killAt = 60, 4, 20
	held := serveUnknowns(t, db, cfgPath, addr, tools, n/2, n/2)
	before, _ := opsNow(t, db)

	cfg, err := config.Resolve(cfgPath, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	l, err := openLedger(context.Background(), db, cfg, opening{use: ledger.LookupsOnly, askReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	killed := false
	var afterKill []reconcile.TriageEvent
	rep, err := l.Service().Triage(context.Background(), reconcile.TriageOptions{Concurrency: conc, Rate: 1000, By: "triage by test",
		Progress: func(ev reconcile.TriageEvent) {
			if killed {
				afterKill = append(afterKill, ev)
			}
			if ev.Done == killAt {
				stop() // SIGKILL, and waited for: the server is gone
				killed = true
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	tot := rep.Totals()
	if rep.Candidates != n || rep.Checked != n || tot.Errors != 0 || len(afterKill) != n-killAt {
		t.Fatalf("report %+v %+v, %d after the kill", rep, tot, len(afterKill))
	}
	// A lookup that began before the kill may have had its answer; at most
	// one per other worker. Every later one cannot tell.
	conclusive := 0
	for _, ev := range afterKill {
		if ev.Looked.Finding.Kind != model.FindingCannotTell {
			conclusive++
		}
	}
	if conclusive > conc-1 {
		t.Errorf("%d conclusive findings after the server was killed; at most %d lookups were in flight", conclusive, conc-1)
	}
	after, findings := opsNow(t, db)
	sameStates(t, "triage with the server killed", before, after)
	for k, f := range findings {
		switch {
		case f == nil || !f.Kind.Valid():
			t.Errorf("%s: no finding recorded: %+v", k, f)
		case held[k] && f.Kind == model.FindingHasNothing:
			t.Errorf("%s: the server holds its delivery, and the finding is %q", k, f.Kind)
		case !held[k] && f.Kind == model.FindingHasIt:
			t.Errorf("%s: the server holds nothing, and the finding is %q", k, f.Kind)
		}
	}

	// The next run, the server still down: cannot tell, every one.
	out, errText, code := cli(t, "triage", "--db", db, "--config", cfgPath, "--json", "--operator", "oncall")
	var again triageJSON
	if err := json.Unmarshal([]byte(out), &again); err != nil || code != exitTriageCannotTell ||
		again.Totals.CannotTell != n || again.Totals.HasNothing != 0 || again.Totals.HasIt != 0 {
		t.Fatalf("triage with the server down: exit %d %v %+v %s", code, err, again.Totals, errText)
	}
	after, _ = opsNow(t, db)
	sameStates(t, "triage with the server down", before, after)
}

// A provider that takes the connection and never answers (the server
// process stopped with SIGSTOP): each lookup ends at --timeout, and the
// finding is "cannot tell", never "has nothing". Once it answers again the
// next run finds has it / has nothing: every finding kept, the latest
// shown. No operation moves.
func TestTriageOfASlowHTTPProviderCannotTell(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace (reconcile/grace_test.go covers within it)
	dir := t.TempDir()
	addr, proc, _ := sandboxServeProcess(t, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfgPath, tools := triageServeConfig(t, addr, 1)
	db := filepath.Join(dir, "l.db")
	held := serveUnknowns(t, db, cfgPath, addr, tools, 2, 2)
	before, _ := opsNow(t, db)

	if err := proc.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, proc.Process.Pid)
	out, errText, code := cli(t, "triage", "--db", db, "--config", cfgPath, "--json", "--timeout", "200ms", "--operator", "oncall")
	if err := proc.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var slow triageJSON
	if err := json.Unmarshal([]byte(out), &slow); err != nil || code != exitTriageCannotTell || slow.Totals.CannotTell != 4 || len(slow.Findings) != 4 {
		t.Fatalf("triage of a stopped server: exit %d %v %+v %s", code, err, slow.Totals, errText)
	}
	for _, f := range slow.Findings {
		if f.Finding.Kind != model.FindingCannotTell || !strings.Contains(f.Finding.Detail, "no answer within 200ms") || !f.Recorded {
			t.Errorf("%s: %+v; want a recorded cannot tell: no answer within 200ms", f.Key, f.Finding)
		}
	}

	out, errText, code = cli(t, "triage", "--db", db, "--config", cfgPath, "--json", "--operator", "oncall")
	var rep triageJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitTriageOK || rep.Totals.HasIt != 2 || rep.Totals.HasNothing != 2 {
		t.Fatalf("triage once it answers: exit %d %v %+v %s", code, err, rep.Totals, errText)
	}
	after, findings := opsNow(t, db)
	sameStates(t, "triage of a slow provider", before, after)
	for k, f := range findings {
		want := model.FindingHasNothing
		if held[k] {
			want = model.FindingHasIt
		}
		if f == nil || f.Kind != want || f.Seq != 3 || f.Stale {
			t.Errorf("%s: latest finding %+v; want %s, the third attempt (dispatch, cannot tell, then this)", k, f, want)
		}
	}
}

// BenchmarkTriage5000SandboxServe: a triage run (the real command, its
// defaults: 8 lookups at once, 100 a second to each provider) over 5,000
// unknown operations against `retrysafe sandbox serve` in a process of its
// own on loopback, asked through the HTTP provider. Half the server holds
// (applied, then the connection dropped), half it never applied (500).
//
//	go test ./internal/cli -run '^$' -bench Triage5000SandboxServe -benchtime 1x
//
// RETRYSAFE_TRIAGE_RATE sets --rate (lookups a second per provider);
// RETRYSAFE_TRIAGE_LOOKUP_RATE sets instead each provider's configured
// rate ([providers.lookup] rate = N), with no --rate;
// RETRYSAFE_TRIAGE_PROVIDERS spreads the operations over that many HTTP
// providers (each its own rate limit; default 1); RETRYSAFE_TRIAGE_OPS
// changes the 5,000. The setup (the calls) is not timed.
func BenchmarkTriage5000SandboxServe(b *testing.B) {
	n, providers := 5000, 1
	fmt.Sscan(os.Getenv("RETRYSAFE_TRIAGE_OPS"), &n)
	fmt.Sscan(os.Getenv("RETRYSAFE_TRIAGE_PROVIDERS"), &providers)
	rate := os.Getenv("RETRYSAFE_TRIAGE_RATE")
	dir := b.TempDir()
	addr, _ := sandboxServe(b, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfgPath, tools := triageServeConfig(b, addr, providers)
	if r := os.Getenv("RETRYSAFE_TRIAGE_LOOKUP_RATE"); r != "" {
		doc, err := os.ReadFile(cfgPath)
		if err != nil {
			b.Fatal(err)
		}
		doc = []byte(strings.ReplaceAll(string(doc), "[providers.lookup]\n", "[providers.lookup]\nrate = "+r+"\n"))
		if err := os.WriteFile(cfgPath, doc, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	db := filepath.Join(dir, "l.db")
	setup := time.Now()
	serveUnknowns(b, db, cfgPath, addr, tools, n/2, n-n/2)
	b.Logf("setup: %d unknown operations by calls through the HTTP provider in %v", n, time.Since(setup).Round(time.Millisecond))
	args := []string{"triage", "--db", db, "--config", cfgPath, "--json", "--operator", "bench"}
	if rate != "" {
		args = append(args, "--rate", rate)
	}
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		var out, errb bytes.Buffer
		code := Run(args, &out, &errb)
		wall := time.Since(start)
		var rep triageJSON
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != exitTriageOK || rep.Candidates != n ||
			rep.Totals.HasIt != n/2 || rep.Totals.HasNothing != n-n/2 || rep.Totals.Errors != 0 {
			b.Fatalf("triage: exit %d %v %+v %s", code, err, rep.Totals, errb.String())
		}
		b.ReportMetric(wall.Seconds(), "s/run")
		b.ReportMetric(float64(n)/wall.Seconds(), "lookups/s")
	}
}

// waitStopped waits until the kernel shows pid stopped (state T): a stop
// signal takes effect when the process is next scheduled, and on a loaded
// machine a server signalled a moment ago still answered a lookup or two
// — the answers of a live server, which this test must not ask.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("process %d: %v", pid, err)
		}
		// The state follows the command name's closing parenthesis.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped after 10s: %.80s", pid, stat)
		}
		time.Sleep(time.Millisecond)
	}
}
