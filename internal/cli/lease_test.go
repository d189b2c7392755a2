package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowProviderConfig writes a config whose one HTTP provider, slow, has
// the given timeout.
func slowProviderConfig(t *testing.T, dir, timeout string) string {
	t.Helper()
	cfg := filepath.Join(dir, "slow.toml")
	doc := "[[providers]]\nname = \"slow\"\nkind = \"http\"\ntimeout = \"" + timeout + "\"\n[providers.dispatch]\nurl = \"http://127.0.0.1:1/send\"\n[[tools]]\nname = \"x\"\nprovider = \"slow\"\narguments = '{\"type\":\"object\"}'\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serve, mcp and sweep take --lease, positive, and refuse to start — exit
// 2, nothing created — with a lease a provider's timeout would outlast:
// each dispatch to it would be cut at the lease's end and answered
// "unknown" (R11 M5).
func TestServeMCPAndSweepRefuseALeaseAProvidersTimeoutOutlasts(t *testing.T) {
	for _, cmd := range [][]string{{"serve", "--listen", "127.0.0.1:0"}, {"mcp", "--tenant", "acme"}, {"sweep"}} {
		for _, c := range []struct {
			name, timeout, lease, want string
		}{
			{"zero", "5s", "0s", "--lease must be positive"},
			{"negative", "5s", "-1s", "--lease must be positive"},
			{"shorter than the timeout", "45s", "30s", "provider slow's timeout (45s)"},
			{"equal to the timeout", "45s", "45s", "provider slow's timeout (45s)"},
			{"under the margin", "45s", "47s", "at least 50s"},
		} {
			dir := t.TempDir()
			cfg := slowProviderConfig(t, dir, c.timeout)
			db := filepath.Join(dir, "ledger.db")
			args := append(append([]string{}, cmd...), "--db", db, "--config", cfg, "--lease", c.lease)
			_, errText, code := cli(t, args...)
			line := oneErrorLine(t, cmd[0]+" "+c.name, errText)
			if code != 2 || !strings.Contains(line, c.want) || !strings.Contains(line, "--lease") {
				t.Errorf("%s --lease %s (timeout %s): exit %d %q; want exit 2 saying %q", cmd[0], c.lease, c.timeout, code, line, c.want)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("%s --lease %s: refused, but created the ledger (%v)", cmd[0], c.lease, err)
			}
		}
	}
}

// Without --lease, the lease is the default 30 s, or the longest
// provider timeout plus 5 s where that is longer: a config with a 45 s
// provider serves (and sweeps) with a 50 s lease.
func TestWithoutLeaseTheLeaseOutlastsTheLongestProviderTimeout(t *testing.T) {
	dir := t.TempDir()
	cfg := slowProviderConfig(t, dir, "45s")
	db := filepath.Join(dir, "ledger.db")
	if out, errText, code := cli(t, "sweep", "--db", newLedgerFile(t), "--config", cfg); code != 0 {
		t.Fatalf("sweep without --lease: exit %d %s %s", code, out, errText)
	}
	s := startServer(t, db, "--config", cfg)
	s.cmd.Process.Kill()
	<-s.exited
	if !strings.Contains(s.stderr.String(), `"lease":"50s"`) {
		t.Fatalf("serve's log does not say its lease is 50s: %s", s.stderr)
	}
	for _, c := range []struct{ timeout, want string }{{"5s", `"lease":"30s"`}, {"10m", `"lease":"10m5s"`}} {
		dir := t.TempDir()
		s := startServer(t, filepath.Join(dir, "ledger.db"), "--config", slowProviderConfig(t, dir, c.timeout))
		s.cmd.Process.Kill()
		<-s.exited
		if !strings.Contains(s.stderr.String(), c.want) {
			t.Errorf("timeout %s: serve's log does not say %s: %s", c.timeout, c.want, s.stderr)
		}
	}
}

// A --call-timeout a provider's timeout outlasts cuts its slow dispatches
// (they end unknown): serve warns of it at startup, naming the provider.
func TestServeWarnsWhenACallTimeoutIsShorterThanAProvidersTimeout(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, filepath.Join(dir, "ledger.db"), "--config", slowProviderConfig(t, dir, "45s"))
	s.cmd.Process.Kill()
	<-s.exited
	if log := s.stderr.String(); !strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, `"provider":"slow"`) || !strings.Contains(log, "--call-timeout") {
		t.Fatalf("no warning of --call-timeout 30s against a 45s provider: %s", log)
	}
	dir = t.TempDir()
	s = startServer(t, filepath.Join(dir, "ledger.db"), "--config", slowProviderConfig(t, dir, "45s"), "--call-timeout", "90s")
	s.cmd.Process.Kill()
	<-s.exited
	if log := s.stderr.String(); strings.Contains(log, "WARN") {
		t.Fatalf("a warning with --call-timeout 90s: %s", log)
	}
}

// call without --lease holds its claim past the longest provider timeout
// too (R12 M4): a dispatch to a 60 s provider was cut at the 30 s default
// lease and answered unknown. An explicit --lease stands.
func TestCallWithoutLeaseOutlastsTheProvidersTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "slow.toml")
	doc := "[[providers]]\nname = \"slow\"\nkind = \"http\"\ntimeout = \"60s\"\n[providers.dispatch]\nurl = \"" + srv.URL + "/send\"\n[[tools]]\nname = \"x\"\nprovider = \"slow\"\narguments = '{\"type\":\"object\"}'\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	db := newLedgerFile(t)
	for _, c := range []struct {
		key   string
		extra []string
		want  time.Duration
	}{
		{"derived", nil, 65 * time.Second},
		{"given", []string{"--lease", "40s"}, 40 * time.Second},
	} {
		// The call's process is killed once its claim is made: the claim
		// stays, leased as the call leased it.
		worker := append([]string{workerCommand}, callArgs(db, "t", c.key, "x", `{}`, "--config", cfg)[1:]...)
		worker = append(append(worker, c.extra...), "--die-at", "after-claim", "--die-how", "kill")
		if out, errText, code, signaled := asBinary(t, worker...); !signaled {
			t.Fatalf("%s: the call was not killed: exit %d %s%s", c.key, code, out, errText)
		}
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "t", "--key", c.key, "--json")
		if code != 0 {
			t.Fatalf("%s: ops show: exit %d %s", c.key, code, errText)
		}
		var shown struct {
			Operation struct {
				CreatedAt  time.Time `json:"created_at"`
				LeaseUntil time.Time `json:"lease_until"`
			} `json:"operation"`
		}
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatal(err)
		}
		if got := shown.Operation.LeaseUntil.Sub(shown.Operation.CreatedAt); got < c.want-time.Second || got > c.want+time.Second {
			t.Errorf("%s: the claim is leased for %v, want about %v\n%s", c.key, got, c.want, out)
		}
	}
}
