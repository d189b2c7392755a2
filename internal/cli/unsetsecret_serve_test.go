package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/reexec"
)

// serve started with a provider whose dispatch reads an unset ${NAME}
// says so at once — a WARN naming the provider and the variable, never a
// value — and answers its calls as the server's problem: 503
// /problems/misconfigured, retry later with the same key, nothing written
// (R11 M6). With the variable set there is no warning, and its value is
// in no log line.
func TestServeWarnsOfAnUnsetDispatchSecretAndAnswers503(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \"http://127.0.0.1:1/send\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_M6_TOKEN}\" }\n")
	db := filepath.Join(dir, "ledger.db")
	t.Setenv("RETRYSAFE_TEST_M6_TOKEN", "")
	s := startServer(t, db, "--config", cfg)
	tok := newToken(t, db, "acme")
	before := digest(t, db)
	req, _ := http.NewRequest("POST", s.url+"/v1/tools/x", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", `"k1"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var p struct{ Type, Detail, Class string }
	json.Unmarshal(body, &p)
	if resp.StatusCode != 503 || p.Type != "/problems/misconfigured" || p.Class != "internal" || resp.Header.Get("Retry-After") == "" ||
		strings.Count(p.Detail, "nothing was") != 1 || strings.Contains(p.Detail, "RETRYSAFE_TEST_M6_TOKEN") || !strings.Contains(p.Detail, "operator") {
		t.Fatalf("POST: %d %s; want 503 /problems/misconfigured saying the operator must fix it, naming no variable (the log does), 'nothing was' once", resp.StatusCode, body)
	}
	if digest(t, db) != before {
		t.Fatal("the refused call wrote to the ledger")
	}
	s.cmd.Process.Kill()
	<-s.exited
	var warned bool
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, `"provider":"mailer"`) && strings.Contains(line, "RETRYSAFE_TEST_M6_TOKEN") &&
			!strings.Contains(line, "/v1/tools") {
			warned = true
		}
	}
	if !warned {
		t.Fatalf("no startup WARN naming provider mailer and the variable: %s", s.stderr)
	}

	// Set: no warning, and the secret is in no log line.
	t.Setenv("RETRYSAFE_TEST_M6_TOKEN", "s3cret-value")
	s = startServer(t, filepath.Join(t.TempDir(), "ledger.db"), "--config", cfg)
	s.cmd.Process.Kill()
	<-s.exited
	if log := s.stderr.String(); strings.Contains(log, "WARN") || strings.Contains(log, "s3cret") {
		t.Fatalf("with the variable set: %s", log)
	}
}

// mcp warns the same way at startup (its log level is warn by default).
func TestMCPWarnsOfAnUnsetDispatchSecret(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \"http://127.0.0.1:1/send\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_M6_TOKEN}\" }\n")
	t.Setenv("RETRYSAFE_TEST_M6_TOKEN", "")
	cmd := reexec.Command(t, asCLI, nil, "mcp", "--db", filepath.Join(dir, "ledger.db"), "--tenant", "agents", "--config", cfg)
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp: %v\n%s", err, errb.String())
	}
	if log := errb.String(); !strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, `"provider":"mailer"`) || !strings.Contains(log, "$RETRYSAFE_TEST_M6_TOKEN") {
		t.Fatalf("mcp's stderr: %s", log)
	}
}
