package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// A claim released after a busy answer whose Retry-After has not passed
// is held: a call or sweep before then sends nothing (409 in_progress).
// ops show and ops list say so — not "to be sent again by a sweep or the
// next call", not "released"; the retry (same key), where the provider
// honours keys, comes before ops resolve, with the time it may be sent;
// ops list ATTEMPTS counts the calls of the key, not lookups.
func TestHeldClaimSaysItIsHeld(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNotFound) // a lookup: has nothing
			return
		}
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		honours bool
		state   string
	}{
		{"honours keys", true, "in_progress"},
		{"ignores keys", false, "not_applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "busy.toml")
			mid := "[providers.dispatch]\nurl = \"" + srv.URL + "/send\"\n[providers.lookup]\nurl = \"" + srv.URL + "/send/{downstream_key}\"\n"
			if tc.honours {
				mid = "honours_keys = true\n" + mid
			}
			writeMailerConfig(t, cfg, mid)
			db := filepath.Join(dir, "ledger.db")
			if _, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", cfg)...); code != 4 {
				t.Fatalf("call: exit %d; want 4: %s", code, errText)
			}
			show, errText, code := cli(t, "ops", "show", "--db", db, "--config", cfg, "--tenant", "t", "--key", "k")
			if code != 0 {
				t.Fatalf("ops show: exit %d: %s", code, errText)
			}
			held := regexp.MustCompile(`held: provider mailer asked to be left alone until \S+ \(its Retry-After, in 1[12][0-9] s\); a call or sweep before then sends nothing`)
			if !held.MatchString(show) {
				t.Errorf("ops show does not say the hold:\n%s", show)
			}
			if strings.Contains(show, "by a sweep or the next call") || strings.Contains(show, "to be sent again") {
				t.Errorf("ops show says it is sent again while it is held:\n%s", show)
			}
			if !strings.Contains(show, tc.state+" (held until ") {
				t.Errorf("ops show's state does not say held:\n%s", show)
			}
			call, resolve := strings.Index(show, "  retrysafe call "), strings.Index(show, "  retrysafe ops resolve ")
			switch {
			case tc.honours && resolve < 0:
				t.Errorf("ops show offers no ops resolve:\n%s", show)
			case tc.honours && (call < 0 || call > resolve):
				t.Errorf("ops show does not offer the retry first:\n%s", show)
			case tc.honours && !strings.Contains(show[call:resolve], "after "):
				t.Errorf("the retry does not say when it may be sent:\n%s", show)
			case !tc.honours && call >= 0:
				t.Errorf("a retry is offered for a provider that ignores keys:\n%s", show)
			}
			// A lookup is not a call of the key.
			if _, errText, code := cli(t, "ops", "check", "--db", db, "--config", cfg, "--tenant", "t", "--key", "k"); code > 2 {
				t.Fatalf("ops check: exit %d: %s", code, errText)
			}
			list, errText, code := cli(t, "ops", "list", "--db", db, "--config", cfg)
			if code != 0 {
				t.Fatalf("ops list: exit %d: %s", code, errText)
			}
			row := regexp.MustCompile(`(?m)^\d+ .* k +x +` + tc.state + ` \(held until \d\d:\d\d:\d\d\) +\S.*?  +1  `)
			if !row.MatchString(list) || strings.Contains(list, "released") {
				t.Errorf("ops list: want the row held with 1 attempt:\n%s", list)
			}
		})
	}
}

// R15 M5: a claim held by its busy provider's Retry-After, called again
// with a config where the provider no longer honours keys, is not sent: it
// becomes unknown (exit 5), and the call says the provider answered busy,
// not "a request with no definite answer"; a sweep with that config says
// the same on the attempt it records.
func TestAHeldClaimNoLongerSentSaysItsProviderAnsweredBusy(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	for _, bySweep := range []bool{false, true} {
		t.Run(map[bool]string{false: "call", true: "sweep"}[bySweep], func(t *testing.T) {
			posts.Store(0)
			dir := t.TempDir()
			mid := "[providers.dispatch]\nurl = \"" + srv.URL + "/send\"\n"
			honours, ignores := filepath.Join(dir, "honours.toml"), filepath.Join(dir, "ignores.toml")
			writeMailerConfig(t, honours, "honours_keys = true\n"+mid)
			writeMailerConfig(t, ignores, mid)
			db := filepath.Join(dir, "ledger.db")
			if _, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", honours)...); code != 4 {
				t.Fatalf("call: exit %d; want 4: %s", code, errText)
			}
			var said string
			if bySweep {
				if out, errText, code := cli(t, "sweep", "--db", db, "--config", ignores); code != 0 {
					t.Fatalf("sweep: exit %d: %s%s", code, out, errText)
				}
				show, errText, code := cli(t, "ops", "show", "--db", db, "--config", ignores, "--tenant", "t", "--key", "k")
				if code != 0 {
					t.Fatalf("ops show: exit %d: %s", code, errText)
				}
				said = show
			} else {
				out, errText, code := cli(t, append(callArgs(db, "t", "k", "x", `{}`), "--config", ignores)...)
				if code != 5 {
					t.Fatalf("call with keys not honoured: exit %d; want 5 (unknown): %s%s", code, out, errText)
				}
				said = out + errText
			}
			if posts.Load() != 1 {
				t.Errorf("%d requests sent; want only the first", posts.Load())
			}
			if !strings.Contains(said, "answered busy") || strings.Contains(said, "no definite answer") {
				t.Errorf("want it to say the provider answered busy:\n%s", said)
			}
		})
	}
}
