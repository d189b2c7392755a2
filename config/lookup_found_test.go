package config_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// A search API answers 200 with an empty list when it found nothing: with
// found = "/data/0" in [providers.lookup], only a value at that pointer is
// "has it"; nothing there in a JSON body is "has nothing"; a body that is
// not JSON, not whole, or over max_response_bytes cannot tell. Without
// found any 2xx is "has it", as before (documented). Each answer comes
// from a real server, through a provider built from a config file read by
// config.Load.
func TestLookupFoundPointerTellsAnEmptySearchFromAHit(t *testing.T) {
	answers := map[string]struct {
		status int
		body   string
	}{
		"hit":          {200, `{"data":[{"id":"ch_1","status":"paid"}]}`},
		"empty-list":   {200, `{"data":[]}`},
		"null":         {200, `{"data":null}`},
		"no-data":      {200, `{"object":"list"}`},
		"empty-object": {200, `{"data":[{}]}`},
		"not-json":     {200, `<html>maintenance</html>`},
		"two-values":   {200, `{"data":[]} {"data":[{"id":"x"}]}`},
		"too-big":      {200, `{"data":[{"id":"ch_2","note":"` + strings.Repeat("x", 300) + `"}]}`},
		"gone":         {404, `{"error":"no such charge"}`},
		"broken":       {500, `{"data":[]}`},
		"count-zero":   {200, `{"total":0,"data":[]}`},
		"count-two":    {200, `{"total":2,"data":[{"id":"a"},{"id":"b"}]}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[strings.TrimPrefix(r.URL.Path, "/charges/")]
		if !ok {
			t.Errorf("unexpected request %s", r.URL.Path)
			a.status = 400
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		w.Write([]byte(a.body))
	}))
	defer srv.Close()
	build := func(t *testing.T, lookup string) *httpapi.Provider {
		t.Helper()
		doc := "[[providers]]\nname = \"pay\"\nkind = \"http\"\nmax_response_bytes = 200\n[providers.dispatch]\nurl = \"" + srv.URL + "/charges\"\n" +
			"[providers.lookup]\nurl = \"" + srv.URL + "/charges/{downstream_key}\"\n" + lookup +
			"[[tools]]\nname = \"charge\"\nprovider = \"pay\"\narguments = '{\"type\":\"object\"}'\n"
		path := filepath.Join(t.TempDir(), "tools.toml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		p, err := httpapi.New(cfg.Providers[0].HTTP.Config)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const hasIt, hasNothing = "has it", "has nothing"
	for _, c := range []struct {
		name, lookup, key string
		want              string // hasIt, hasNothing, or a part of the cannot-tell error
		ref               string // with hasIt
	}{
		{"found: a hit", "found = \"/data/0\"\nref_pointer = \"/data/0/id\"\n", "hit", hasIt, "ch_1"},
		{"found: an empty list", "found = \"/data/0\"\n", "empty-list", hasNothing, ""},
		{"found: null", "found = \"/data/0\"\n", "null", hasNothing, ""},
		{"found: no such member", "found = \"/data/0\"\n", "no-data", hasNothing, ""},
		{"found: an empty object", "found = \"/data/0\"\n", "empty-object", hasNothing, ""},
		{"found: a count of zero", "found = \"/total\"\n", "count-zero", hasNothing, ""},
		{"found: a count of two", "found = \"/total\"\n", "count-two", hasIt, ""},
		{"found: not JSON", "found = \"/data/0\"\n", "not-json", "the response is not JSON", ""},
		{"found: two JSON values", "found = \"/data/0\"\n", "two-values", "not one JSON value", ""},
		{"found: over max_response_bytes", "found = \"/data/0\"\n", "too-big", "over max_response_bytes", ""},
		{"found: 404 is still nothing", "found = \"/data/0\"\n", "gone", hasNothing, ""},
		{"found: 500 still cannot tell", "found = \"/data/0\"\n", "broken", "HTTP 500", ""},
		{"no found: an empty list is has it (documented)", "", "empty-list", hasIt, ""},
		{"no found: 404 is nothing", "", "gone", hasNothing, ""},
		{"not_found: the API's 404 is nothing", "not_found = \"/error\"\n", "gone", hasNothing, ""},
		{"not_found_value: another 404 cannot tell", "not_found = \"/error\"\nnot_found_value = \"charge_not_found\"\n", "gone", "a wrong route looks like this", ""},
		{"not_found: an HTML 200 is still has it without found", "not_found = \"/error\"\n", "not-json", hasIt, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, err := build(t, c.lookup).Lookup(context.Background(), c.key)
			switch c.want {
			case hasIt:
				if err != nil || !ev.Found || ev.Ref != c.ref {
					t.Errorf("Lookup = %+v, %v; want has it, ref %q", ev, err, c.ref)
				}
			case hasNothing:
				if err != nil || ev.Found {
					t.Errorf("Lookup = %+v, %v; want has nothing", ev, err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), "cannot tell") || !strings.Contains(err.Error(), c.want) || ev.Found {
					t.Errorf("Lookup = %+v, %v; want cannot tell saying %q", ev, err, c.want)
				}
			}
		})
	}
}

// A bad found pointer is a config error with its line, before anything
// is opened; found belongs to an http provider's lookup only.
func TestLookupFoundIsCheckedAtLoad(t *testing.T) {
	lookup := func(found string) string {
		return httpProvider("[providers.lookup]\nurl = \"http://127.0.0.1:9/d/{downstream_key}\"\n" + found)
	}
	for _, c := range []struct {
		name, doc, err string
	}{
		{"a pointer", lookup("found = \"/data/0\"\n"), ""},
		{"an escaped name", lookup("found = \"/a~1b/c~0d\"\n"), ""},
		{"empty", lookup("found = \"\"\n"), `t.toml:8: provider mail: lookup found: "" is not a JSON pointer: it must start with /`},
		{"no leading slash", lookup("found = \"data/0\"\n"), `t.toml:8: provider mail: lookup found: "data/0" is not a JSON pointer`},
		{"a bad escape", lookup("found = \"/a~2\"\n"), `t.toml:8: provider mail: lookup found: "/a~2" is not a JSON pointer: ~ must be written ~0`},
		{"a trailing ~", lookup("found = \"/a~\"\n"), "t.toml:8: provider mail: lookup found"},
		{"not a string", lookup("found = 3\n"), "t.toml:8"},
		{"in dispatch", httpProvider("found = \"/id\"\n"), "t.toml:6: provider mail: found belongs in [providers.lookup]"},
		{"a sandbox's lookup", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n[providers.lookup]\nfound = \"/x\"\n" + goodTool, "t.toml:4: provider p: a sandbox provider's lookup is built in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.toml", []byte(c.doc), noEnv)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "":
				if got := cfg.Providers[0].HTTP.Config.Lookup.Found; !strings.HasPrefix(got, "/") {
					t.Errorf("Found = %q", got)
				}
			case err == nil || !strings.HasPrefix(err.Error(), c.err):
				t.Errorf("Parse: %v; want an error starting %q", err, c.err)
			}
		})
	}
}
