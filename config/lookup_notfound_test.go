package config_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// not_found and not_found_value are checked at load, each error with its
// line, before anything is opened: not_found is a JSON pointer like
// found, not_found_value needs it (alone it would guard nothing, and a
// reader would trust it), and both belong to an http provider's lookup.
func TestLookupNotFoundIsCheckedAtLoad(t *testing.T) {
	lookup := func(keys string) string {
		return httpProvider("[providers.lookup]\nurl = \"http://127.0.0.1:9/d/{downstream_key}\"\n" + keys)
	}
	for _, c := range []struct {
		name, doc, err string
		ptr, value     string
	}{
		{"a pointer", lookup("not_found = \"/error/code\"\n"), "", "/error/code", ""},
		{"a pointer and a value", lookup("not_found = \"/error/code\"\nnot_found_value = \"delivery_not_found\"\n"), "", "/error/code", "delivery_not_found"},
		{"an escaped name", lookup("not_found = \"/a~1b/c~0d\"\n"), "", "/a~1b/c~0d", ""},
		{"with found", lookup("found = \"/data/0\"\nnot_found = \"/error\"\n"), "", "/error", ""},
		{"neither", lookup(""), "", "", ""},
		{"empty", lookup("not_found = \"\"\n"), `t.toml:8: provider mail: lookup not_found: "" is not a JSON pointer: it must start with /`, "", ""},
		{"no leading slash", lookup("not_found = \"error/code\"\n"), `t.toml:8: provider mail: lookup not_found: "error/code" is not a JSON pointer`, "", ""},
		{"a bad escape", lookup("not_found = \"/a~2\"\n"), `t.toml:8: provider mail: lookup not_found: "/a~2" is not a JSON pointer: ~ must be written ~0`, "", ""},
		{"not a string", lookup("not_found = 3\n"), "t.toml:8", "", ""},
		{"a value without not_found", lookup("not_found_value = \"delivery_not_found\"\n"), "t.toml:8: provider mail: not_found_value needs not_found", "", ""},
		{"a value before a bad not_found", lookup("not_found_value = \"x\"\nnot_found = \"x\"\n"), "t.toml:9: provider mail: lookup not_found", "", ""},
		{"an empty value", lookup("not_found = \"/error/code\"\nnot_found_value = \"\"\n"), "t.toml:9: provider mail: not_found_value is empty", "", ""},
		{"a value that is not a string", lookup("not_found = \"/error/code\"\nnot_found_value = 1001\n"), "t.toml:9", "", ""},
		{"a value with a control character", lookup("not_found = \"/error/code\"\nnot_found_value = \"a\\u0007b\"\n"), "t.toml:9: provider mail: not_found_value", "", ""},
		{"not_found in dispatch", httpProvider("not_found = \"/error\"\n"), "t.toml:6: provider mail: not_found belongs in [providers.lookup]", "", ""},
		{"not_found_value in dispatch", httpProvider("not_found_value = \"x\"\n"), "t.toml:6: provider mail: not_found_value belongs in [providers.lookup]", "", ""},
		{"a sandbox's lookup", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n[providers.lookup]\nnot_found = \"/x\"\n" + goodTool, "t.toml:4: provider p: a sandbox provider's lookup is built in", "", ""},
		{"a sandbox's lookup value", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n[providers.lookup]\nnot_found_value = \"x\"\n" + goodTool, "t.toml:4: provider p: a sandbox provider's lookup is built in", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.toml", []byte(c.doc), noEnv)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "":
				l := cfg.Providers[0].HTTP.Config.Lookup
				if l.NotFound != c.ptr || l.NotFoundValue != c.value {
					t.Errorf("NotFound, NotFoundValue = %q, %q; want %q, %q", l.NotFound, l.NotFoundValue, c.ptr, c.value)
				}
			case err == nil || !strings.HasPrefix(err.Error(), c.err):
				t.Errorf("Parse: %v; want an error starting %q", err, c.err)
			}
		})
	}
}

// The README's mailer: against the sandbox server, a lookup URL with the
// right route gets the API's own 404 ({"error": "…"}) — has nothing; one
// with a wrong route (a typo, /delivery for /deliveries) gets the router's
// plain-text 404, which without not_found was "has nothing" too, and with
// it cannot tell.
func TestLookupNotFoundAgainstTheSandboxServer(t *testing.T) {
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "mail.provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, sandbox.Fault{}).Handler())
	defer srv.Close()
	lookup := func(t *testing.T, route, notFound string) (provider.Evidence, error) {
		t.Helper()
		doc := httpProvider("[providers.lookup]\nurl = \"" + srv.URL + "/v1/sandbox-idem/" + route + "/{downstream_key}\"\n" + notFound)
		cfg, err := config.Parse("t.toml", []byte(doc), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		p, err := httpapi.New(cfg.Providers[0].HTTP.Config)
		if err != nil {
			t.Fatal(err)
		}
		return p.Lookup(context.Background(), "rs-never-sent")
	}
	const guard = "not_found = \"/error\"\n"
	if ev, err := lookup(t, "deliveries", guard); err != nil || ev.Found {
		t.Errorf("right route, not_found: %+v, %v; want has nothing", ev, err)
	}
	if ev, err := lookup(t, "delivery", guard); err == nil || ev.Found || !strings.Contains(err.Error(), "a wrong route looks like this") {
		t.Errorf("wrong route, not_found: %+v, %v; want cannot tell", ev, err)
	}
	// The risk the README names: without not_found the wrong route's 404
	// reads as "has nothing".
	if ev, err := lookup(t, "delivery", ""); err != nil || ev.Found {
		t.Errorf("wrong route, no not_found: %+v, %v; want has nothing (as documented)", ev, err)
	}
}
