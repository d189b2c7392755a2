package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reconcile"
)

// A lookup that finds the delivery but names no reference (a 200 with an
// empty body) is "has it": the printed "to settle" command must be one the
// ledger accepts, not an empty --evidence (refused: marking applied needs
// evidence).
func TestToSettleAfterAFindingWithoutAReferenceIsACommandThatWorks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusInternalServerError) // unknown: it may have applied
			io.WriteString(w, "oops")
			return
		}
		w.WriteHeader(http.StatusOK) // the lookup: has it, no body
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \""+srv.URL+"/send\"\n[providers.lookup]\nurl = \""+srv.URL+"/send/{downstream_key}\"\n")
	db := filepath.Join(dir, "ledger.db")
	t.Setenv(reconcile.GraceEnv, "1ms")
	if _, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", cfg)...); code != 5 {
		t.Fatalf("call: exit %d, want 5 (unknown)\n%s", code, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--config", cfg, "--tenant", "t", "--key", "k")
	var settle string
	for _, l := range strings.Split(out, "\n") {
		if after, ok := strings.CutPrefix(l, "to settle: retrysafe "); ok {
			settle = after
		}
	}
	if code != 0 || settle == "" {
		t.Fatalf("ops check: exit %d, no to settle line in\n%s%s", code, out, errText)
	}
	if strings.Contains(settle, "--evidence ''") {
		t.Errorf("to settle gives empty evidence: %s", settle)
	}
	// The shell splits it, as when a person pastes it.
	got, err := exec.Command("sh", "-c", `retrysafe() { for w in "$@"; do printf '%s\n' "$w"; done; }; retrysafe `+settle).Output()
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if out, errText, code := cli(t, args...); code != 0 {
		t.Fatalf("the printed command %q: exit %d\n%s%s", settle, code, out, errText)
	}
}
