package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A released claim sent again and answered busy again: the answer says
// what happened before. After a definite busy answer it is not "an
// earlier request may have reached the provider with no definite answer"
// — the claim was released after a busy answer; after a lost reply it is.
func TestBusyAgainSaysWhatHappenedBefore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int // the first POST's status: 429 busy, 500 no definite answer
		want  string
		lacks string
	}{
		{"after busy", http.StatusTooManyRequests, "the claim was released after a busy answer", "no definite answer (its reply lost"},
		{"after a lost reply", http.StatusInternalServerError, "may have reached the provider with no definite answer", "released after a busy answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if posts.Add(1) == 1 {
					w.WriteHeader(tc.first)
					return
				}
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			defer srv.Close()
			dir := t.TempDir()
			cfg := filepath.Join(dir, "busy.toml")
			writeMailerConfig(t, cfg, "honours_keys = true\n[providers.dispatch]\nurl = \""+srv.URL+"/send\"\n")
			db := filepath.Join(dir, "ledger.db")
			if _, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", cfg)...); code != 4 {
				t.Fatalf("first call: exit %d; want 4: %s", code, errText)
			}
			out, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", cfg)...)
			if code != 4 || posts.Load() != 2 {
				t.Fatalf("second call: exit %d, %d POSTs; want 4, 2: %s%s", code, posts.Load(), out, errText)
			}
			if !strings.Contains(out+errText, tc.want) || strings.Contains(out+errText, tc.lacks) {
				t.Errorf("second call: want %q, not %q:\n%s%s", tc.want, tc.lacks, out, errText)
			}
		})
	}
}
