package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A claim made through a sandbox provider, asked through a config where
// the provider is an HTTP API now: the "cannot tell" names what changed
// (its kind, not every field a kind change differs in) and says what to
// do next — ask with the config the claim was made with, or decide on
// evidence of your own.
func TestACannotTellAskedElsewhereNamesTheChangeAndTheNextStep(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0")
	dir := t.TempDir()
	db, pdb := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "provider.db")
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"no such delivery"}`))
	}))
	defer api.Close()
	tool := "\n[[tools]]\nname = \"charge\"\npayload_version = 1\nprovider = \"pay\"\narguments = '{\"type\":\"object\",\"properties\":{\"to\":{\"type\":\"string\"}},\"required\":[\"to\"]}'\n"
	write := func(name, provider string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(provider+tool), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sbx := write("sandbox.toml", "[[providers]]\nname = \"pay\"\nkind = \"sandbox\"\nhonours_keys = false\n")
	httpCfg := write("http.toml", "[[providers]]\nname = \"pay\"\nkind = \"http\"\nhonours_keys = false\ntimeout = \"2s\"\n"+
		"[providers.dispatch]\nmethod = \"POST\"\nurl = \""+api.URL+"/v1/charges\"\nkey_header = \"Idempotency-Key\"\nref_pointer = \"/id\"\n"+
		"[providers.lookup]\nurl = \""+api.URL+"/v1/charges/{downstream_key}\"\nref_pointer = \"/id\"\nnot_found = \"/error\"\n")
	claimKilled(t, db, pdb, sbx)
	time.Sleep(5 * time.Millisecond)
	if out, errText, code := cli(t, "sweep", "--db", db, "--provider-db", pdb, "--config", sbx); code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errText)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"ops check", []string{"ops", "check", "--db", db, "--config", httpCfg, "--tenant", "acme", "--key", "k1"},
			[]string{"its kind changed since", "to settle:", "--config", "--evidence", "ops resolve"}},
		{"ops resolve --check", []string{"ops", "resolve", "--db", db, "--config", httpCfg, "--tenant", "acme", "--key", "k1", "--as", "not-applied", "--check", "--reason", "r"},
			[]string{"its kind changed since", "nothing was decided", "--config", "--evidence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errText, code := cli(t, tc.args...)
			if code != exitInvalid {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, errText)
			}
			for _, w := range tc.want {
				if !strings.Contains(errText, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errText)
				}
			}
			for _, not := range []string{"method", "URL template", "host", "cannot tell: cannot tell"} {
				if strings.Contains(errText, not) {
					t.Errorf("stderr says %q (only the kind changed):\n%s", not, errText)
				}
			}
		})
	}
}
