package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reconcile"
)

// An applied operation a later "has nothing" contradicts has no "has it"
// finding: the "has it" is its receipt. ops check says so — not "to
// decide against this \"has it\"" — and that a provider that expires
// idempotency keys shows the same picture, so check the provider before
// authorizing a new key.
func TestOpsCheckOfAContradictedAppliedNamesItsReceipt(t *testing.T) {
	// The provider takes it, then has nothing under its key (it expired
	// the key, or never had it).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			io.WriteString(w, `{"id":"msg_1"}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \""+srv.URL+"/send\"\nref_pointer = \"/id\"\n[providers.lookup]\nurl = \""+srv.URL+"/send/{downstream_key}\"\n")
	db := filepath.Join(dir, "ledger.db")
	t.Setenv(reconcile.GraceEnv, "1ms")
	if _, errText, code := cli(t, append(callArgs(db, "acme", "k", "x", `{}`), "--config", cfg)...); code != 0 {
		t.Fatalf("call: exit %d: %s", code, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--config", cfg, "--tenant", "acme", "--key", "k")
	if code != 0 || !strings.Contains(out, "contradicted:") {
		t.Fatalf("ops check: exit %d, want the contradiction:\n%s%s", code, out, errText)
	}
	for _, c := range []struct {
		what string
		has  bool
	}{
		{`to decide against this "has it"`, false},
		{"to decide against its receipt", true},
		{"expires idempotency keys", true},
		{"before authorizing a new key", true},
	} {
		if strings.Contains(out, c.what) != c.has {
			t.Errorf("ops check says %q: %v, want %v:\n%s", c.what, !c.has, c.has, out)
		}
	}
}

// The caveat about providers that expire idempotency keys is said only of
// a provider that may: the sandbox keeps every delivery under its key for
// good, so its "has nothing" against an applied operation is not a key
// that expired.
func TestOpsCheckOfAContradictedAppliedThroughTheSandboxSaysNoExpiry(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	t.Setenv(reconcile.GraceEnv, "1ms")
	// A request the sandbox never applies (the claim's lease ends first),
	// marked applied by a person: the sandbox then has nothing.
	if _, errText, code := cli(t, append(callArgs(db, "acme", "k", "send_notification", `{"to":"a@example.com","body":"x"}`), "--fault", "delay=3s", "--lease", "1s")...); code != 5 {
		t.Fatalf("call: exit %d, want 5 (unknown): %s", code, errText)
	}
	if out, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "applied", "--evidence", "INC-1", "--reason", "support says sent", "--operator", "alice"); code != 0 {
		t.Fatalf("ops resolve: exit %d: %s%s", code, out, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--operator", "alice")
	if code != 0 || !strings.Contains(out, "contradicted:") {
		t.Fatalf("ops check: exit %d, want the contradiction:\n%s%s", code, out, errText)
	}
	if strings.Contains(out, "expires idempotency keys") {
		t.Errorf("ops check says a provider that expires keys of the sandbox, which never does:\n%s", out)
	}
	if !strings.Contains(out, "to decide against its receipt") {
		t.Errorf("ops check lost its next step:\n%s", out)
	}
}
