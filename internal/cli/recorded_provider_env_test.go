package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// twoMailers writes a config with two HTTP providers sending to url:
// "plain", which reads no environment, and "secret", whose dispatch reads
// $RETRYSAFE_TEST_MAIL2_TOKEN; tool "x" goes to tools (one of them).
func twoMailers(t *testing.T, dir, url, tools string, honours bool) string {
	t.Helper()
	h := "false"
	if honours {
		h = "true"
	}
	doc := "[[providers]]\nname = \"plain\"\nkind = \"http\"\nhonours_keys = " + h + "\n[providers.dispatch]\nurl = \"" + url + "/send\"\n" +
		"[[providers]]\nname = \"secret\"\nkind = \"http\"\nhonours_keys = " + h + "\n[providers.dispatch]\nurl = \"" + url + "/send\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_MAIL2_TOKEN}\" }\n" +
		"[[tools]]\nname = \"x\"\nprovider = \"" + tools + "\"\narguments = '{\"type\":\"object\"}'\n"
	cfg := filepath.Join(dir, "mailers.toml")
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// busyThenCreated answers its first request 429 (busy: not taken — a 503
// from a provider that does not honour keys is unknown, a proxy's may have
// passed it on), every later one 201.
func busyThenCreated(hits *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"m_1"}`)
	}))
}

func attemptsOf(t *testing.T, db, cfg, key string) int {
	t.Helper()
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "t", "--key", key, "--json")
	if code != 0 {
		t.Fatalf("ops show: exit %d %q", code, errText)
	}
	var d struct {
		Attempts []json.RawMessage `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("ops show: %v: %s", err, out)
	}
	return len(d.Attempts)
}

// A call of an existing key dispatches to the provider its operation
// recorded, not the tool's or --provider: the unset-secret check is that
// provider's. Recorded with a provider whose secret is unset, the call is
// refused and writes nothing; recorded with one that needs none, it is
// sent even where the tool's provider's secret is unset.
func TestCallChecksTheSecretOfTheProviderTheOperationRecorded(t *testing.T) {
	t.Run("recorded provider's secret unset", func(t *testing.T) {
		var hits atomic.Int32
		srv := busyThenCreated(&hits)
		defer srv.Close()
		dir := t.TempDir()
		cfg, db := twoMailers(t, dir, srv.URL, "plain", false), filepath.Join(dir, "ledger.db")
		t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "s3cret")
		if _, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg, "--provider", "secret")...); code == 0 || hits.Load() != 1 {
			t.Fatalf("first call: exit %d %q, %d request(s); want busy (not taken)", code, errText, hits.Load())
		}
		n := attemptsOf(t, db, cfg, "k1")
		t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "")
		out, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
		line := oneErrorLine(t, "recorded provider's secret unset", errText)
		if code != 2 || out != "" || !strings.Contains(line, "provider secret") || !strings.Contains(line, "$RETRYSAFE_TEST_MAIL2_TOKEN, which is not set") || !strings.Contains(line, "nothing was sent or written") {
			t.Fatalf("exit %d, stdout %q, %q; want refused, naming provider secret's variable", code, out, line)
		}
		if got := attemptsOf(t, db, cfg, "k1"); got != n || hits.Load() != 1 {
			t.Fatalf("the refused call wrote %d attempt(s) or sent %d request(s)", got-n, hits.Load()-1)
		}
	})
	t.Run("tool's provider's secret unset, recorded one needs none", func(t *testing.T) {
		var hits atomic.Int32
		srv := busyThenCreated(&hits)
		defer srv.Close()
		dir := t.TempDir()
		cfg, db := twoMailers(t, dir, srv.URL, "secret", false), filepath.Join(dir, "ledger.db")
		t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "")
		if _, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg, "--provider", "plain")...); code == 0 || hits.Load() != 1 {
			t.Fatalf("first call: exit %d %q, %d request(s); want busy (not taken)", code, errText, hits.Load())
		}
		out, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
		if code != 0 || !strings.Contains(out, `"status":"created"`) || hits.Load() != 2 {
			t.Fatalf("exit %d, %q / %q, %d request(s); want sent to plain, the provider the operation recorded", code, out, errText, hits.Load())
		}
	})
}

// R4's repro through the commands: a reply lost from a provider that
// honours keys leaves the claim released; a sweep from a process where
// the provider's secret is unset sends nothing, writes nothing and says
// so — the claim stays in progress (never not_applied); with the secret
// it is re-sent.
func TestSweepWithAnUnsetDispatchSecretSendsNothingAndSaysSo(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			// The reply is lost: the connection drops after the request.
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"m_1"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg, db := twoMailers(t, dir, srv.URL, "secret", true), filepath.Join(dir, "ledger.db")
	t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "s3cret")
	if _, errText, code := cli(t, append(callArgs(db, "t", "a2", "x", `{}`), "--config", cfg)...); code == 0 || hits.Load() != 1 || !strings.Contains(errText, "re-dispatches safely") {
		t.Fatalf("A2: exit %d %q, %d request(s); want released after the lost reply", code, errText, hits.Load())
	}
	n := attemptsOf(t, db, cfg, "a2")

	t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "")
	out, errText, code := cli(t, "sweep", "--db", db, "--config", cfg, "--json")
	var rep struct {
		Redispatched int    `json:"redispatched"`
		Unknown      int    `json:"to_unknown"`
		NotSent      int    `json:"not_sent"`
		NotSentWhy   string `json:"not_sent_why"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("sweep: exit %d %q %q %v", code, out, errText, err)
	}
	if rep.Redispatched != 0 || rep.Unknown != 0 || rep.NotSent != 1 || !strings.Contains(rep.NotSentWhy, "$RETRYSAFE_TEST_MAIL2_TOKEN") {
		t.Fatalf("sweep without the secret: %+v; want nothing re-sent, one not sent naming the variable", rep)
	}
	out, _, _ = cli(t, "sweep", "--db", db, "--config", cfg)
	if !strings.Contains(out, "0 re-dispatched") || !strings.Contains(out, "not sent: 1") {
		t.Errorf("sweep's text: %q; want it to say one lease was not sent", out)
	}
	if got := attemptsOf(t, db, cfg, "a2"); got != n || hits.Load() != 1 {
		t.Fatalf("the sweeps wrote %d attempt(s) and sent %d request(s); want none", got-n, hits.Load()-1)
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "t", "--key", "a2", "--json")
	if !strings.Contains(out, `"state": "in_progress"`) {
		t.Fatalf("after the sweeps: %s; want in_progress", out)
	}

	t.Setenv("RETRYSAFE_TEST_MAIL2_TOKEN", "s3cret")
	out, errText, code = cli(t, "sweep", "--db", db, "--config", cfg, "--json")
	if code != 0 || !strings.Contains(out, `"redispatched":1`) || strings.Contains(out, "not_sent") || hits.Load() != 2 {
		t.Fatalf("sweep with the secret: exit %d %q %q, %d request(s); want one re-dispatch", code, out, errText, hits.Load())
	}
}
