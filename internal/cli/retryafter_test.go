package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A provider answering 429 with Retry-After: 3 is not sent a request
// sooner than it asked: call --json says the wait (retry_after), and call
// --retry waits it out between attempts — and stops, exit 4 with the
// wait, when the next wait would pass --timeout.
func TestCallHonoursTheProvidersRetryAfter(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "busy.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \""+srv.URL+"/send\"\n")
	db := filepath.Join(dir, "ledger.db")

	out, _, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg, "--json")...)
	if code != 4 || !strings.Contains(out, `"retry_after":3`) || posts.Load() != 1 {
		t.Fatalf("call: exit %d, %d POSTs, %s; want exit 4, one POST, retry_after 3", code, posts.Load(), out)
	}

	posts.Store(0)
	start := time.Now()
	out, errText, code := cli(t, append(callArgs(db, "t", "k2", "x", `{}`), "--config", cfg, "--json", "--retry", "--timeout", "5s")...)
	took := time.Since(start)
	if code != 4 || !strings.Contains(out, `"retry_after":3`) || !strings.Contains(errText, "it asks to wait 3s") {
		t.Fatalf("call --retry: exit %d, %s %s; want exit 4 with the wait", code, out, errText)
	}
	// One POST, a wait of 3 s, a second; a third would come after 6 s,
	// past --timeout 5s: not waited for.
	if n := posts.Load(); n != 2 || took < 3*time.Second || took > 4500*time.Millisecond {
		t.Fatalf("call --retry sent %d POSTs in %v; want 2, 3 s apart, and no wait to the deadline", n, took)
	}
}
