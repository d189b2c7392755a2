package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/lab"
)

// sandboxServe starts `retrysafe sandbox serve` in a process of its own and
// returns its address; the process is killed (SIGKILL) at cleanup or by
// calling stop.
func sandboxServe(t testing.TB, listen, db string) (addr string, stop func()) {
	t.Helper()
	addr, _, stop = sandboxServeProcess(t, listen, db)
	return addr, stop
}

// sandboxServeProcess is sandboxServe with the process, for tests that
// signal it (SIGSTOP: a provider that accepts connections and never
// answers).
func sandboxServeProcess(t testing.TB, listen, db string) (addr string, cmd *exec.Cmd, stop func()) {
	t.Helper()
	cmd = reexec.Command(t, asCLI, nil, "sandbox", "serve", "--listen", listen, "--db", db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("sandbox serve did not start: %v", err)
	}
	var a string
	if _, err := fmt.Sscanf(line, "sandbox serving http://%s", &a); err != nil {
		t.Fatalf("sandbox serve said %q", line)
	}
	return a, cmd, stop
}

// httpToolsConfig writes a config whose notify tool goes to the sandbox
// server at addr through the HTTP provider, as provider name (sandbox:
// ignores keys; sandbox-idem: honours them).
func httpToolsConfig(t testing.TB, addr, name string, honours bool) string {
	t.Helper()
	doc := fmt.Sprintf(`
[[providers]]
name = "mail"
kind = "http"
honours_keys = %t
timeout = "2s"
[providers.dispatch]
url = "http://%[2]s/v1/%[3]s/deliveries"
ref_pointer = "/id"
[providers.lookup]
url = "http://%[2]s/v1/%[3]s/deliveries/{downstream_key}"
ref_pointer = "/id"

[[tools]]
name = "notify"
summary = "to"
provider = "mail"
arguments = '{"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}'
`, honours, addr, name)
	p := filepath.Join(t.TempDir(), "tools.toml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func queueFault(t testing.TB, addr, fault string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/_sandbox/faults", "application/json", strings.NewReader(`{"fault":"`+fault+`"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("queue fault %s: %v %v", fault, resp, err)
	}
	resp.Body.Close()
}

// deliveriesAt asks the sandbox server how many deliveries it holds under
// the downstream key of (tenant, key): 0 when it has none.
func deliveriesAt(t *testing.T, addr, name, downstreamKey string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/" + name + "/deliveries/" + downstreamKey)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 404 {
		return 0
	}
	var body struct{ Count int }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Count
}

func downstreamKeyOf(t *testing.T, db, tenant, key string) string {
	t.Helper()
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", tenant, "--key", key, "--json")
	var d struct {
		Operation struct {
			DownstreamKey string `json:"downstream_key"`
		} `json:"operation"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d.Operation.DownstreamKey == "" {
		t.Fatalf("ops show: exit %d %s %s", code, out, errText)
	}
	return d.Operation.DownstreamKey
}

const mailArgs = `{"to":"ops@example.com","body":"disk full"}`

// The provider (a real server process) applies the delivery and drops the
// connection: unknown; `ops check` finds it over HTTP; marked applied; the
// retry replays — one delivery in all.
func TestSandboxServeAppliesAndDropsThenCheckFindsIt(t *testing.T) {
	dir := t.TempDir()
	addr, _ := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfg := httpToolsConfig(t, addr, "sandbox", false)
	db := filepath.Join(dir, "l.db")
	queueFault(t, addr, "drop-after-apply")
	_, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 5 || !strings.Contains(errText, "unknown") {
		t.Fatalf("dropped connection: exit %d %q; want 5 (unknown)", code, errText)
	}
	dk := downstreamKeyOf(t, db, "acme", "n-1")
	if n := deliveriesAt(t, addr, "sandbox", dk); n != 1 {
		t.Fatalf("the server holds %d deliveries; the fault should have applied one", n)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1", "--config", cfg)
	if code != 0 || !strings.Contains(out, "is unknown") || !strings.Contains(out, "holds sbx_1") {
		t.Fatalf("ops check: exit %d %q %q", code, out, errText)
	}
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "n-1", "--as", "applied",
		"--evidence", "sbx_1", "--reason", "lookup found it", "--operator", "test"); code != 0 {
		t.Fatalf("resolve: exit %d %q", code, errText)
	}
	out, errText, code = cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"status":"replayed"`) {
		t.Fatalf("retry: exit %d %q %q; want the replay", code, out, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox", dk); n != 1 {
		t.Errorf("the server holds %d deliveries, want 1", n)
	}
}

// The provider is down: the connection is refused before a byte is sent,
// so the operation is not applied (exit 4, retry the same key); `ops check`
// cannot tell; once the server is up the next call sends it, once.
func TestSandboxServeDownIsNotAppliedAndTheNextCallSendsOnce(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := httpToolsConfig(t, addr, "sandbox", false)
	db := filepath.Join(dir, "l.db")
	_, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 4 || !strings.Contains(errText, "not sent") {
		t.Fatalf("provider down: exit %d %q; want 4 (not applied: retry the same key)", code, errText)
	}
	out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "n-1", "--json")
	if !strings.Contains(out, `"state": "not_applied"`) {
		t.Errorf("state after a refused connection: %s", out)
	}
	if _, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1", "--config", cfg); code == 0 || !strings.Contains(errText, "cannot tell") {
		t.Errorf("ops check of a provider that is down: exit %d %q; want cannot tell", code, errText)
	}
	sandboxServe(t, addr, filepath.Join(dir, "sandbox.db"))
	out, errText, code = cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"status":"created"`) {
		t.Fatalf("provider up: exit %d %q %q", code, out, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox", downstreamKeyOf(t, db, "acme", "n-1")); n != 1 {
		t.Errorf("the server holds %d deliveries, want 1", n)
	}
}

// The worker process is killed right after the provider applied (before
// transaction B). The provider honours downstream keys, so once the lease
// ends the next call re-dispatches under the same key and gets the first
// delivery back: applied, one delivery. A provider that is busy (429)
// leaves the claim open for the same key.
func TestSandboxServeWorkerKilledAfterDispatchRedispatchesSafely(t *testing.T) {
	dir := t.TempDir()
	addr, _ := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfg := httpToolsConfig(t, addr, "sandbox-idem", true)
	db := newLedgerFile(t)
	worker := append([]string{workerCommand}, callArgs(db, "acme", "n-1", "notify", mailArgs,
		"--config", cfg, "--lease", "200ms", "--"+lab.FlagDieAt, "after-dispatch", "--"+lab.FlagDieHow, lab.DieKill)[1:]...)
	_, werr, _, killed := asBinary(t, worker...)
	if !killed {
		t.Fatalf("the worker did not die: %s", werr)
	}
	dk := downstreamKeyOf(t, db, "acme", "n-1")
	if n := deliveriesAt(t, addr, "sandbox-idem", dk); n != 1 {
		t.Fatalf("the provider holds %d deliveries after the killed worker; want 1", n)
	}
	time.Sleep(250 * time.Millisecond) // the dead worker's lease ends
	out, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"provider_ref":"sbx_1"`) {
		t.Fatalf("next call: exit %d %q %q; want applied with the first delivery", code, out, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox-idem", dk); n != 1 {
		t.Errorf("the provider holds %d deliveries, want 1", n)
	}

	queueFault(t, addr, "busy")
	busyAt := time.Now()
	_, errText, code = cli(t, callArgs(db, "acme", "n-2", "notify", mailArgs, "--config", cfg)...)
	if code != 4 || !strings.Contains(errText, "busy") || !strings.Contains(errText, "wait 1s") {
		t.Fatalf("busy provider: exit %d %q; want 4 and its Retry-After", code, errText)
	}
	// Sooner than it asked, nothing is sent: the wait left is said.
	if _, errText, code = cli(t, callArgs(db, "acme", "n-2", "notify", mailArgs, "--config", cfg)...); code != 4 || !strings.Contains(errText, "not sent again; retry the same key in 1 s") {
		t.Fatalf("a retry before the provider's Retry-After: exit %d %q; want 4, held", code, errText)
	}
	// and a sweep leaves it, waiting.
	out, errText, code = cli(t, "sweep", "--db", db, "--config", cfg)
	if slow := time.Since(busyAt) > 900*time.Millisecond; code != 0 || !slow && !strings.Contains(out, "waiting: 1 lease(s) left in progress") {
		t.Fatalf("a sweep before the provider's Retry-After: exit %d %q %q; want it left waiting", code, out, errText)
	}
	time.Sleep(1100 * time.Millisecond)
	out, errText, code = cli(t, callArgs(db, "acme", "n-2", "notify", mailArgs, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"status":"created"`) {
		t.Fatalf("after busy: exit %d %q %q", code, out, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox-idem", downstreamKeyOf(t, db, "acme", "n-2")); n != 1 {
		t.Errorf("the provider holds %d deliveries for n-2, want 1", n)
	}
}

// A busy answer (429) from a provider that ignores downstream keys: it did
// not take the request, so the operation is not applied and the next call
// of the same key sends it — once.
func TestSandboxServeBusyWithoutKeysIsNotApplied(t *testing.T) {
	dir := t.TempDir()
	addr, _ := sandboxServe(t, "127.0.0.1:0", filepath.Join(dir, "sandbox.db"))
	cfg := httpToolsConfig(t, addr, "sandbox", false)
	db := filepath.Join(dir, "l.db")
	queueFault(t, addr, "busy")
	_, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...)
	if code != 4 || !strings.Contains(errText, "did not take it now") {
		t.Fatalf("busy: exit %d %q; want 4", code, errText)
	}
	out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "n-1", "--json")
	if !strings.Contains(out, `"state": "not_applied"`) {
		t.Errorf("state after a 429: %s", out)
	}
	dk := downstreamKeyOf(t, db, "acme", "n-1")
	if n := deliveriesAt(t, addr, "sandbox", dk); n != 0 {
		t.Fatalf("a 429 left %d deliveries", n)
	}
	// Sooner than its Retry-After (1 s), nothing is sent.
	if _, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...); code != 4 || !strings.Contains(errText, "not sent again; retry the same key in 1 s") {
		t.Fatalf("a retry before the provider's Retry-After: exit %d %q; want 4, held", code, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox", dk); n != 0 {
		t.Fatalf("a held retry left %d deliveries", n)
	}
	time.Sleep(1100 * time.Millisecond)
	if out, errText, code := cli(t, callArgs(db, "acme", "n-1", "notify", mailArgs, "--config", cfg)...); code != 0 || !strings.Contains(out, `"status":"created"`) {
		t.Fatalf("next call: exit %d %q %q", code, out, errText)
	}
	if n := deliveriesAt(t, addr, "sandbox", dk); n != 1 {
		t.Errorf("the provider holds %d deliveries, want 1", n)
	}
}
