package config_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
)

func noEnv(string) (string, bool) { return "", false }

// The embedded default is the demo's registry: three tools, two providers.
func TestDefaultConfigIsTheDemoRegistry(t *testing.T) {
	c := config.Default()
	if got := strings.Join(c.Tools.Names(), ","); got != "create_support_task,create_report_job,send_notification" {
		t.Fatalf("tools %s", got)
	}
	want := map[string]model.Effect{
		"create_support_task": {Kind: model.EffectLocal, Table: model.TableTasks},
		"create_report_job":   {Kind: model.EffectLocal, Table: model.TableReportJobs},
		"send_notification":   {Kind: model.EffectExternal, Provider: "sandbox"},
	}
	for name, eff := range want {
		tool, err := c.Tools.Lookup(name)
		if err != nil || tool.Effect != eff || tool.PayloadVersion != 1 || tool.Description == "" {
			t.Errorf("%s: %+v, %v", name, tool, err)
		}
	}
	if len(c.Providers) != 2 || c.Providers[0].Name != "sandbox" || c.Providers[0].HonoursKeys ||
		c.Providers[1].Name != "sandbox-idem" || !c.Providers[1].HonoursKeys ||
		!c.Providers[0].AuthoritativeLookup || !c.Providers[1].AuthoritativeLookup {
		t.Errorf("providers %+v", c.Providers)
	}
}

const goodTool = `
[[tools]]
name = "open_ticket"
description = "Open a ticket"
summary = "title"
local = "local_effects"
arguments = '''
{"type": "object", "properties": {"title": {"type": "string", "maxLength": 10}}, "required": ["title"]}
'''
`

// Every config error is one line naming the file and the line at fault.
func TestConfigErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
		want      string
	}{
		{"syntax", "[[tools]\nname = \"x\"\n", 1, "expected"},
		{"unknown top-level key", "colour = \"red\"\n" + goodTool, 1, `unknown key "colour"`},
		{"unknown tool key", goodTool + "locl = \"tasks\"\n", 10, `unknown key "tools.locl"`},
		{"unknown key in the second tool", goodTool + goodTool[:len(goodTool)-1] + "\nsumary = \"x\"\n", 19, `unknown key "tools.sumary"`},
		{"wrong type", "[[tools]]\nname = 3\n", 2, "name"},
		{"tool without name", "[[tools]]\nlocal = \"tasks\"\n", 1, "has no name"},
		{"no effect", "[[tools]]\nname = \"x\"\narguments = '{\"type\":\"object\"}'\n", 1, "say where its effect happens"},
		{"both effects", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\nprovider = \"p\"\n", 7, "either local"},
		{"unknown provider", "[[tools]]\nname = \"x\"\nprovider = \"mailer\"\narguments = '{\"type\":\"object\"}'\n", 3, `unknown provider "mailer"`},
		{"unknown local table", "[[tools]]\nname = \"x\"\nlocal = \"users\"\narguments = '{\"type\":\"object\"}'\n", 3, `local table "users"`},
		{"schema not JSON", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\n\narguments = '{\"type\": '\n", 5, "not a JSON Schema"},
		{"schema not an object schema", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\narguments = '{\"type\": \"string\"}'\n", 4, `"type": "object"`},
		{"schema with a bad keyword value", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\narguments = '{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"pattern\": \"(\"}}}'\n", 4, "arguments schema"},
		{"schema missing", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\n", 1, "arguments (its JSON Schema) is required"},
		{"summary not a property", "[[tools]]\nname = \"x\"\nlocal = \"local_effects\"\nsummary = \"nope\"\narguments = '{\"type\":\"object\"}'\n", 4, `summary argument "nope"`},
		{"duplicate tool", goodTool + goodTool, 12, "declared twice"},
		// A description goes to every MCP client, whose terminal shows it.
		{"description with an escape sequence", strings.Replace(goodTool, "Open a ticket", `Open \u001b]0;pwned\u0007 a ticket`, 1), 4, "description must be printable text on one line"},
		{"description with a right-to-left override", strings.Replace(goodTool, "Open a ticket", `Open \u202e a ticket`, 1), 4, "description must be printable text on one line"},
		{"description of 10 KB", strings.Replace(goodTool, "Open a ticket", strings.Repeat("x", 10<<10), 1), 4, "description is 10240 bytes; at most 2048"},
		{"duplicate provider", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n" + goodTool, 5, "declared twice"},
		{"provider name with an escape", "[[providers]]\nname = \"sb\\u001b[31m\"\nkind = \"sandbox\"\n" + goodTool, 2, "provider name must be printable"},
		{"provider name with spaces", "[[providers]]\nname = \"my mail\"\nkind = \"sandbox\"\n" + goodTool, 2, "must not contain spaces"},
		{"provider without kind", "[[providers]]\nname = \"p\"\n" + goodTool, 1, "kind is required"},
		{"provider of unknown kind", "[[providers]]\nname = \"p\"\nkind = \"smtp\"\n" + goodTool, 3, `unknown kind "smtp"`},
		{"no tools", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n", 1, "no tools"},
		{"http: malformed ${", httpProvider("headers = { Authorization = \"Bearer ${MAIL-TOKEN}\" }\n"), 6, "${NAME}"},
		{"http: no dispatch", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n" + goodTool, 1, "needs [providers.dispatch]"},
		{"http: relative url", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"/send\"\n" + goodTool, 5, "absolute http"},
		{"http: bad timeout", "[[providers]]\nname = \"mail\"\nkind = \"http\"\ntimeout = \"soon\"\n[providers.dispatch]\nurl = \"http://h/send\"\n" + goodTool, 4, "timeout"},
		{"http: bad class", httpProvider("[providers.classify]\n409 = \"maybe\"\n"), 7, "unknown class"},
		{"http: unknown key in dispatch", httpProvider("retries = 3\n"), 6, `unknown key "providers.dispatch.retries"`},
		{"http: authoritative without a lookup", "[[providers]]\nname = \"mail\"\nkind = \"http\"\nauthoritative_lookup = true\n[providers.dispatch]\nurl = \"http://h/send\"\n" + goodTool, 4, "authoritative_lookup needs a lookup"},
		{"authoritative not a boolean", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\nauthoritative_lookup = \"yes\"\n" + goodTool, 4, "authoritative_lookup"},
		{"http: url needs an argument the tool does not require", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"http://h/{account}/send\"\n[[tools]]\nname = \"x\"\nprovider = \"mail\"\narguments = '{\"type\":\"object\"}'\n", 8, "needs {account}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("tools.toml", []byte(c.doc), noEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			prefix := "tools.toml:" + itoa(c.line) + ": "
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("got %q; want one line starting %q containing %q", msg, prefix, c.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRegistryFromConfigValidatesArguments(t *testing.T) {
	c, err := config.Parse("t.toml", []byte(goodTool), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Tools.Prepare(model.Request{Tenant: "a", Key: "k", Tool: "open_ticket", Args: []byte(`{"title":"hi"}`)})
	if err != nil || p.PayloadVersion != 1 || p.Summary != "hi" {
		t.Fatalf("%+v %v", p, err)
	}
	for args, want := range map[string]string{
		`{}`:                        `missing required argument "title"`,
		`{"title": 3}`:              `argument title: must be a string, got a number`,
		`{"title": "far too long"}`: `argument title: "far too long" is 12 characters; at most 10`,
	} {
		_, err := c.Tools.Prepare(model.Request{Tenant: "a", Key: "k", Tool: "open_ticket", Args: []byte(args)})
		if !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", args, err, want)
		}
	}
}

func TestResolveOrder(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == config.EnvVar {
			return "/nonexistent/from-env.toml", true
		}
		return "", false
	}
	if _, err := config.Resolve("/nonexistent/from-flag.toml", env); err == nil || !strings.Contains(err.Error(), "from-flag.toml") {
		t.Errorf("the flag does not come first: %v", err)
	}
	if _, err := config.Resolve("", env); err == nil || !strings.Contains(err.Error(), "from-env.toml") {
		t.Errorf("$%s is not read: %v", config.EnvVar, err)
	}
	c, err := config.Resolve("", noEnv)
	if err != nil || c.File != config.DefaultName {
		t.Errorf("without either: %v, %v", c, err)
	}
}

// httpProvider is an http provider whose [providers.dispatch] table starts
// on line 4 and takes extra lines from line 6 on, and a tool using it.
func httpProvider(extra string) string {
	return "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"http://127.0.0.1:9/send\"\n" + extra +
		"[[tools]]\nname = \"notify\"\nprovider = \"mail\"\narguments = '{\"type\":\"object\"}'\n"
}

// A secret comes from the environment into the header, and appears in no
// error and nowhere but the provider's request.
func TestHTTPProviderSecretFromTheEnvironment(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "MAIL_TOKEN" {
			return "tok-123", true
		}
		return "", false
	}
	c, err := config.Parse("t.toml", []byte(httpProvider("headers = { Authorization = \"Bearer ${MAIL_TOKEN}\" }\n")), env)
	if err != nil {
		t.Fatal(err)
	}
	// The reference is kept, and read from the environment when a
	// request is made (provider/httpapi's tests): the value is in no
	// config structure.
	h := c.Providers[0].HTTP
	if h == nil || h.Config.Dispatch.Headers["Authorization"] != "Bearer ${MAIL_TOKEN}" || h.Config.KeyHeader != "" || len(h.MissingEnv("dispatch")) != 0 {
		t.Fatalf("%+v", h)
	}
	if v, ok := h.Config.Env("MAIL_TOKEN"); !ok || v != "tok-123" {
		t.Fatalf("Env: %q %v", v, ok)
	}
	// The same config with the secret unset loads: the variable is missing
	// only where a request needs it.
	c, err = config.Parse("t.toml", []byte(httpProvider("headers = { Authorization = \"Bearer ${MAIL_TOKEN}\" }\n")), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Providers[0].HTTP.MissingEnv("dispatch"); len(got) != 1 || got[0] != "MAIL_TOKEN" {
		t.Fatalf("MissingEnv = %v", got)
	}
}

// Only a provider whose entry says so has an authoritative lookup: not the
// kind, not the presence of a lookup.
func TestAuthoritativeLookupIsDeclared(t *testing.T) {
	lookup := "[providers.lookup]\nurl = \"http://127.0.0.1:9/d/{downstream_key}\"\n"
	cases := []struct {
		name, doc string
		want      bool
	}{
		{"sandbox, undeclared", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n" + goodTool, false},
		{"sandbox, declared", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\nauthoritative_lookup = true\n" + goodTool, true},
		{"sandbox, declared not", "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\nauthoritative_lookup = false\n" + goodTool, false},
		{"http with a lookup, undeclared", httpProvider(lookup), false},
		{"http with a lookup, declared", "[[providers]]\nname = \"mail\"\nkind = \"http\"\nauthoritative_lookup = true\n[providers.dispatch]\nurl = \"http://127.0.0.1:9/send\"\n" + lookup + goodTool, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.toml", []byte(c.doc), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Providers[0].AuthoritativeLookup; got != c.want {
				t.Fatalf("AuthoritativeLookup = %v, want %v", got, c.want)
			}
		})
	}
}

// A lookup URL may name {downstream_key} and {provider_ref}; any other
// name is refused at the lookup's url line.
func TestLookupURLPlaceholders(t *testing.T) {
	for _, c := range []struct {
		url, err string
	}{
		{"http://127.0.0.1:9/d/{downstream_key}", ""},
		{"http://127.0.0.1:9/charges/{provider_ref}", ""},
		{"http://127.0.0.1:9/{downstream_key}/charges/{provider_ref}", ""},
		{"http://127.0.0.1:9/charges/{id}", "t.toml:7: provider mail: lookup: url: {id}: a lookup URL knows only {downstream_key} and {provider_ref}"},
	} {
		cfg, err := config.Parse("t.toml", []byte(httpProvider("[providers.lookup]\nurl = \""+c.url+"\"\n")), noEnv)
		switch {
		case c.err == "" && (err != nil || cfg.Providers[0].HTTP.Config.Lookup.URL != c.url):
			t.Errorf("%s: %v", c.url, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: %v; want %s", c.url, err, c.err)
		}
	}
}

// A provider's [providers.lookup] may set rate, the lookups a second triage
// sends it: a positive number, checked like every other key, with its line.
func TestLookupRate(t *testing.T) {
	httpLookup := func(rate string) string {
		return httpProvider("[providers.lookup]\nurl = \"http://127.0.0.1:9/d/{downstream_key}\"\n" + rate)
	}
	sandbox := func(lookup string) string {
		return "[[providers]]\nname = \"p\"\nkind = \"sandbox\"\n" + lookup + goodTool
	}
	cases := []struct {
		name, doc string
		want      float64 // when err is ""
		err       string  // "LINE: text" the error starts with / contains
	}{
		{"http, none", httpLookup(""), 0, ""},
		{"http, integer", httpLookup("rate = 25\n"), 25, ""},
		{"http, fraction", httpLookup("rate = 0.5\n"), 0.5, ""},
		{"sandbox, none", sandbox(""), 0, ""},
		{"sandbox, rate only", sandbox("[providers.lookup]\nrate = 2000\n"), 2000, ""},
		{"zero", httpLookup("rate = 0\n"), 0, "8: provider mail: lookup rate must be a number of lookups per second"},
		{"negative", httpLookup("rate = -5\n"), 0, "8: provider mail: lookup rate must be a number of lookups per second"},
		{"nan", httpLookup("rate = nan\n"), 0, "8: provider mail: lookup rate must be a number of lookups per second"},
		{"infinite", httpLookup("rate = inf\n"), 0, "8: provider mail: lookup rate must be a number of lookups per second"},
		{"too low (a typo: 115 days a lookup)", httpLookup("rate = 0.0000001\n"), 0, "8: provider mail: lookup rate must be a number of lookups per second"},
		{"lowest", httpLookup("rate = 0.01\n"), 0.01, ""},
		{"too high", sandbox("[providers.lookup]\nrate = 1e9\n"), 0, "5: provider p: lookup rate must be a number of lookups per second"},
		{"not a number", httpLookup("rate = \"fast\"\n"), 0, "8: providers.lookup.rate"},
		{"unknown key beside it", httpLookup("rate = 25\nburst = 5\n"), 0, `9: unknown key "providers.lookup.burst"`},
		{"in dispatch", httpProvider("rate = 25\n"), 0, "6: provider mail: rate belongs in [providers.lookup]"},
		{"sandbox lookup with a url", sandbox("[providers.lookup]\nurl = \"http://127.0.0.1:9/d\"\nrate = 5\n"), 0, "4: provider p: a sandbox provider's lookup is built in"},
		{"http lookup with only a rate", httpProvider("[providers.lookup]\nrate = 25\n"), 0, "6: provider mail: lookup.url is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.toml", []byte(c.doc), noEnv)
			if c.err != "" {
				line, text, _ := strings.Cut(c.err, ": ")
				if err == nil {
					t.Fatal("accepted")
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "t.toml:"+line+": ") || !strings.Contains(msg, text) || strings.Contains(msg, "\n") {
					t.Fatalf("got %q; want one line starting t.toml:%s: containing %q", msg, line, text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Providers[0].LookupRate; got != c.want {
				t.Fatalf("LookupRate = %v, want %v", got, c.want)
			}
		})
	}
}

// A provider URL with credentials in it (https://user:password@host/) put a
// secret in the config file — which never holds one — and Go sent it as
// Basic authentication, which no mask covered: an API that echoed its
// Authorization header in an error body had the credentials stored in the
// operation's detail. It is refused, and the error does not repeat it.
func TestAProviderURLWithCredentialsIsRefusedWithoutRepeatingThem(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		line      int
	}{
		{"dispatch user and password", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"https://bob:hunter2pw@api.example/send\"\n" + goodTool, 5}, // the url's line
		{"dispatch token as the user", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"https://hunter2pw@api.example/send\"\n" + goodTool, 5},     // the url's line
		{"lookup", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"https://api.example/send\"\n[providers.lookup]\nurl = \"https://bob:hunter2pw@api.example/send/{downstream_key}\"\n" + goodTool, 7},
		{"a bad port, credentials and all", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"https://bob:hunter2pw@api.example:port/send\"\n" + goodTool, 5},        // the url's line
		{"an unclosed placeholder, credentials and all", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"https://bob:hunter2pw@api.example/{to\"\n" + goodTool, 5}, // the url's line
		{"not absolute, credentials and all", "[[providers]]\nname = \"mail\"\nkind = \"http\"\n[providers.dispatch]\nurl = \"bob:hunter2pw@api.example/send\"\n" + goodTool, 5},                   // the url's line
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("tools.toml", []byte(c.doc), noEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Contains(msg, "hunter2pw") || !strings.HasPrefix(msg, "tools.toml:"+itoa(c.line)+": ") {
				t.Errorf("got %q; want line %d, without the credentials", msg, c.line)
			}
		})
	}
}
