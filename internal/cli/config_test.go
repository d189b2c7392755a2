package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A config error is one line FILE:LINE: …, exit 2, and nothing is created:
// not the ledger, not a provider file.
func TestConfigErrorsExitTwoBeforeAnyFileIsOpened(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct{ name, doc, want string }{
		{"unknown key", "[[tools]]\nname = \"x\"\nlocl = \"tasks\"\n", ":3: unknown key \"tools.locl\""},
		{"bad schema", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\narguments = '{\"type\": '\n", ":4: tool x: arguments is not a JSON Schema"},
		{"unknown provider", "[[tools]]\nname = \"x\"\nprovider = \"mailer\"\narguments = '{\"type\":\"object\"}'\n", ":3: tool x: unknown provider \"mailer\""},
	}
	db := filepath.Join(dir, "never.db")
	for _, c := range cases {
		cfg := write(strings.ReplaceAll(c.name, " ", "-")+".toml", c.doc)
		for _, args := range [][]string{
			callArgs(db, "t", "k", "x", `{}`, "--config", cfg),
			{"ops", "check", "--db", db, "--tenant", "t", "--key", "k", "--config", cfg},
			{"ops", "list", "--db", db, "--config", cfg},
			{"sweep", "--db", db, "--config", cfg},
			{"--db", db, "--config", cfg},
		} {
			out, errText, code := cli(t, args...)
			if code != 2 || out != "" {
				t.Errorf("%s %v: exit %d, stdout %q; want 2 and nothing", c.name, args[:2], code, out)
			}
			line := oneErrorLine(t, c.name, errText)
			if !strings.HasPrefix(line, cfg+c.want) {
				t.Errorf("%s: %q; want it to start %q", c.name, line, cfg+c.want)
			}
		}
	}
	// $RETRYSAFE_CONFIG is read when --config is not given.
	t.Setenv("RETRYSAFE_CONFIG", filepath.Join(dir, "unknown-key.toml"))
	if _, errText, code := cli(t, callArgs(db, "t", "k", "x", `{}`)...); code != 2 || !strings.Contains(errText, "unknown-key.toml:3:") {
		t.Errorf("$RETRYSAFE_CONFIG: exit %d, %q", code, errText)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".toml") {
			t.Errorf("a refused command left %s behind", e.Name())
		}
	}
}

// A tool of one's own, from a config file: its arguments are checked
// against its schema (exit 2, nothing written), and its local effect is a
// row of the generic local_effects table committed with the operation.
func TestOwnLocalToolFromAConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tools.toml")
	doc := `
[[tools]]
name = "open_ticket"
description = "Open a ticket in our tracker"
payload_version = 2
summary = "title"
local = "local_effects"
arguments = '''
{"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 80},
 "priority": {"type": "integer", "minimum": 1, "maximum": 4}}, "required": ["title"]}
'''
`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "l.db")
	for args, want := range map[string]string{
		`{"priority": 2}`:               `missing required argument "title"`,
		`{"title": "x", "priority": 9}`: `open_ticket: argument priority: 9 is more than the maximum 4`,
	} {
		out, errText, code := cli(t, callArgs(db, "acme", "t-1", "open_ticket", args, "--config", cfg)...)
		if code != 2 || out != "" || !strings.Contains(errText, want) {
			t.Errorf("%s: exit %d %q %q; want 2 and %q", args, code, out, errText, want)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%s: a refused call created the ledger", args)
		}
	}
	out, errText, code := cli(t, callArgs(db, "acme", "t-1", "open_ticket", `{"title":"printer on fire","priority":1}`, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"effect_id":1`) {
		t.Fatalf("exit %d %q %q", code, out, errText)
	}
	out, _, code = cli(t, callArgs(db, "acme", "t-1", "open_ticket", `{"priority":1, "title":"printer on fire"}`, "--config", cfg)...)
	if code != 0 || !strings.Contains(out, `"status":"replayed"`) || !strings.Contains(out, `"effect_id":1`) {
		t.Fatalf("replay: exit %d %q", code, out)
	}
	// The tool is unknown to the built-in registry: the config is what
	// made it callable.
	if _, errText, code := cli(t, callArgs(db, "acme", "t-2", "open_ticket", `{"title":"x"}`)...); code != 2 || !strings.Contains(errText, `unknown tool "open_ticket"`) {
		t.Errorf("without --config: exit %d %q", code, errText)
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "t-1", "--json")
	if !strings.Contains(out, `"payload_version": 2`) {
		t.Errorf("the tool's payload version is not recorded: %s", out)
	}
}

// A call whose provider's dispatch reads an unset ${NAME} is refused before
// anything is opened (it would claim the key and record an attempt that
// sent nothing); a settled key still replays from the ledger, and the
// commands that dispatch nothing load the same config.
func TestCallWithAnUnsetDispatchSecretIsRefusedBeforeTheLedgerOpens(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"m_1"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \""+srv.URL+"/send\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_MAIL_TOKEN}\" }\n")
	db := filepath.Join(dir, "ledger.db")

	t.Setenv("RETRYSAFE_TEST_MAIL_TOKEN", "")
	out, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
	line := oneErrorLine(t, "unset secret", errText)
	if code != 2 || out != "" || !strings.Contains(line, "$RETRYSAFE_TEST_MAIL_TOKEN, which is not set") || !strings.Contains(line, "nothing was sent or written") {
		t.Fatalf("unset secret: exit %d, stdout %q, %q", code, out, line)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) || hits.Load() != 0 {
		t.Fatalf("refused call created the ledger (%v) or sent %d request(s)", err, hits.Load())
	}

	t.Setenv("RETRYSAFE_TEST_MAIL_TOKEN", "s3cret")
	_, errText, code = cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
	if code != 0 || hits.Load() != 1 {
		t.Fatalf("call with the secret set: exit %d, %q, %d request(s)", code, errText, hits.Load())
	}

	t.Setenv("RETRYSAFE_TEST_MAIL_TOKEN", "")
	again, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
	if code != 0 || !strings.Contains(again, `"status":"replayed"`) || hits.Load() != 1 {
		t.Errorf("replay of a settled key without the secret: exit %d, %q / %q, %d request(s)", code, again, errText, hits.Load())
	}
	out, errText, code = cli(t, append(callArgs(db, "t", "k2", "x", `{}`), "--config", cfg)...)
	if code != 2 || out != "" || hits.Load() != 1 {
		t.Errorf("new key without the secret: exit %d, %q, %d request(s)", code, errText, hits.Load())
	}
	if out, errText, code := cli(t, "ops", "list", "--db", db, "--config", cfg); code != 0 || strings.Contains(out, "k2") {
		t.Errorf("ops list: exit %d, %q %q (k2 must not be recorded)", code, out, errText)
	}
}

// R11 M2: a dispatch secret whose value holds a control character cannot
// be sent (net/http sends no request with it). The call is refused before
// anything is claimed — exit 2, naming the variable and never its value,
// no operation recorded — not an unknown outcome (exit 5) recorded for a
// request that never left.
func TestCallWithADispatchSecretHoldingAControlCharacterIsRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"m_1"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "honours_keys = true\n[providers.dispatch]\nurl = \""+srv.URL+"/send\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_EVIL_TOKEN}\" }\n")
	db := filepath.Join(dir, "ledger.db")
	t.Setenv("RETRYSAFE_TEST_EVIL_TOKEN", "abc\x01defSECRET")
	out, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
	line := oneErrorLine(t, "control character", errText)
	if code != 2 || out != "" || !strings.Contains(line, "$RETRYSAFE_TEST_EVIL_TOKEN, which holds a control character") ||
		!strings.Contains(line, "nothing was sent or written") || strings.Contains(errText, "SECRET") || strings.Contains(errText, "\x01") {
		t.Fatalf("a secret with a control character: exit %d, stdout %q, %q", code, out, errText)
	}
	if hits.Load() != 0 {
		t.Fatalf("%d request(s) sent", hits.Load())
	}
	if out, errText, code := cli(t, "ops", "list", "--db", db, "--config", cfg); code != 0 || strings.Contains(out, "k1") {
		t.Errorf("ops list: exit %d, %q %q (k1 must not be recorded)", code, out, errText)
	}
	t.Setenv("RETRYSAFE_TEST_EVIL_TOKEN", "s3cret")
	if _, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...); code != 0 || hits.Load() != 1 {
		t.Errorf("with a good value: exit %d, %q, %d request(s)", code, errText, hits.Load())
	}
}

// R11 M1: an API that answers a dispatch with the credentials it was sent
// as the new record's id (201 {"id": "Bearer <token>"}) does not get them
// into the ledger: the call is applied without a reference, and neither
// the call's answer, its replay, ops show, ops list nor the ledger's
// files hold the token.
func TestAReferenceEchoingTheTokenIsNeverStored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"`+r.Header.Get("Authorization")+`"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mailer.toml")
	writeMailerConfig(t, cfg, "[providers.dispatch]\nurl = \""+srv.URL+"/send\"\nref_pointer = \"/id\"\nheaders = { Authorization = \"Bearer ${RETRYSAFE_TEST_ECHO_TOKEN}\" }\n")
	db := filepath.Join(dir, "ledger.db")
	t.Setenv("RETRYSAFE_TEST_ECHO_TOKEN", "tok_ECHOED_0123456789")
	var outs []string
	for range 2 {
		out, errText, code := cli(t, append(callArgs(db, "t", "k1", "x", `{}`), "--config", cfg)...)
		if code != 0 {
			t.Fatalf("call: exit %d, %q %q", code, out, errText)
		}
		outs = append(outs, out+errText)
	}
	show, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "t", "--key", "k1", "--json")
	list, _, _ := cli(t, "ops", "list", "--db", db, "--config", cfg)
	outs = append(outs, show+errText, list)
	if code != 0 || !strings.Contains(show, `"provider_ref": ""`) {
		t.Errorf("ops show: exit %d, %q; want it applied without a reference", code, show)
	}
	for _, o := range outs {
		if strings.Contains(o, "ECHOED") || strings.Contains(o, "0123456789") {
			t.Errorf("%q holds the token", o)
		}
	}
	files, _ := filepath.Glob(db + "*") // the ledger and its WAL
	for _, f := range files {
		if raw, err := os.ReadFile(f); err != nil || strings.Contains(string(raw), "ECHOED") {
			t.Errorf("%s holds the token (%v)", filepath.Base(f), err)
		}
	}
}

// writeMailerConfig writes a config with one HTTP provider, mailer, and one
// tool, x, that dispatches to it; middle is the provider's TOML after its
// kind (its flags, [providers.dispatch], [providers.lookup]).
func writeMailerConfig(t *testing.T, path, middle string) {
	t.Helper()
	doc := "[[providers]]\nname = \"mailer\"\nkind = \"http\"\n" + middle +
		"[[tools]]\nname = \"x\"\nprovider = \"mailer\"\narguments = '{\"type\":\"object\"}'\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}
