package config_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
)

// A config that would let a lost reply, a lookup or a status code send an
// effect a second time is refused at load, naming the key at fault (its
// line), before anything is opened.
func TestConfigRefusesWhatWouldSendASecondEffect(t *testing.T) {
	lookup := func(url string) string {
		return httpProvider("[providers.lookup]\nurl = \"" + url + "\"\n")
	}
	classify := func(code, class string) string {
		return httpProvider("[providers.classify]\n" + code + " = \"" + class + "\"\n")
	}
	dispatch := func(extra string) string { // extra is on line 6
		return httpProvider(extra)
	}
	withTimeout := func(d string) string {
		return "[[providers]]\nname = \"mail\"\nkind = \"http\"\ntimeout = \"" + d + "\"\n[providers.dispatch]\nurl = \"http://127.0.0.1:9/send\"\n" + goodTool
	}
	twoTools := func(a, b string) string {
		return strings.Replace(goodTool, "open_ticket", a, 1) + strings.Replace(goodTool, "open_ticket", b, 1)
	}
	cases := []struct {
		name, doc string
		line      int // 0: accepted
		want      string
	}{
		// 1. A lookup must ask about this operation.
		{"lookup url without a placeholder", lookup("http://127.0.0.1:9101/lookup/"), 7, "lookup: url must name {downstream_key} or {provider_ref}"},
		{"lookup url with the key only in its fragment", lookup("http://127.0.0.1:9101/lookup#{downstream_key}"), 7, "lookup: url must name {downstream_key} or {provider_ref}"},
		{"lookup url by key", lookup("http://127.0.0.1:9101/lookup/{downstream_key}"), 0, ""},
		{"lookup url by key in the query", lookup("http://127.0.0.1:9101/lookup?key={downstream_key}"), 0, ""},
		{"lookup url by reference", lookup("http://127.0.0.1:9101/charges/{provider_ref}"), 0, ""},
		// 2. A 2xx was applied; a status that says nothing about it may not
		// be read as "nothing happened".
		{"201 retry", classify("201", "retry"), 7, `classify 201: a 2xx answer may be classified only as applied or unknown, not "retry"`},
		{"200 not_applied", classify("200", "not_applied"), 7, "classify 200: a 2xx answer may be classified only as applied or unknown"},
		{"204 failed", classify("204", "failed"), 7, "classify 204: a 2xx answer may be classified only as applied or unknown"},
		{"202 unknown", classify("202", "unknown"), 0, ""},
		{"500 not_applied", classify("500", "not_applied"), 7, "classify 500: a 5xx answer but 503 may be classified only as unknown"},
		{"502 failed", classify("502", "failed"), 7, "classify 502"},
		{"504 retry", classify("504", "retry"), 7, "classify 504"},
		{"500 applied", classify("500", "applied"), 7, "classify 500"},
		{"408 not_applied", classify("408", "not_applied"), 7, "classify 408"},
		{"302 not_applied", classify("302", "not_applied"), 7, "classify 302: a 3xx answer may be classified only as unknown or applied"},
		{"303 applied", classify("303", "applied"), 0, ""},
		{"100 failed", classify("100", "failed"), 7, "classify 100"},
		{"409 failed", classify("409", "failed"), 0, ""},
		{"409 not_applied", classify("409", "not_applied"), 0, ""},
		{"423 retry", classify("423", "retry"), 0, ""},
		{"503 not_applied", classify("503", "not_applied"), 0, ""},
		// 3. The key must reach the provider, and must not replace a header.
		{"key_header Host", dispatch("key_header = \"Host\"\n"), 6, `key_header "Host" is set by the HTTP client itself`},
		{"key_header content-length", dispatch("key_header = \"content-length\"\n"), 6, "key_header \"content-length\" is set by the HTTP client itself"},
		{"key_header Transfer-Encoding", dispatch("key_header = \"Transfer-Encoding\"\n"), 6, "key_header"},
		{"key_header Connection", dispatch("key_header = \"Connection\"\n"), 6, "key_header"},
		{"key_header Content-Type", dispatch("key_header = \"Content-Type\"\n"), 6, "key_header \"Content-Type\" is set by retrysafe"},
		{"key_header Authorization over a configured one", dispatch("headers = { Authorization = \"Bearer x\" }\nkey_header = \"Authorization\"\n"), 7, `key_header "Authorization" is also in [providers.dispatch] headers`},
		{"key_header in another case than a header", dispatch("headers = { x-api-key = \"k\" }\nkey_header = \"X-Api-Key\"\n"), 7, "also in [providers.dispatch] headers"},
		{"key_header not a header name", dispatch("key_header = \"Idem Key\"\n"), 6, "key_header \"Idem Key\" is not a valid header name"},
		{"key_header in a lookup", httpProvider("[providers.lookup]\nurl = \"http://h/{downstream_key}\"\nkey_header = \"X-Key\"\n"), 8, "key_header belongs in [providers.dispatch]"},
		{"key_header X-Request-Key", dispatch("key_header = \"X-Request-Key\"\n"), 0, ""},
		{"header Host", dispatch("headers = { Host = \"evil\" }\n"), 6, `header "Host" is set by the HTTP client itself`},
		{"header Content-Length", dispatch("headers = { Content-Length = \"0\" }\n"), 6, "header \"Content-Length\" is set by the HTTP client itself"},
		{"header Connection in a lookup", httpProvider("[providers.lookup]\nurl = \"http://h/{downstream_key}\"\nheaders = { Connection = \"close\" }\n"), 8, "header \"Connection\""},
		{"header that is the key header", dispatch("headers = { Idempotency-Key = \"fixed\" }\n"), 6, `header "Idempotency-Key" is key_header: retrysafe sets it to each call's downstream key`},
		{"header that is a custom key header", dispatch("key_header = \"X-Key\"\nheaders = { x-key = \"fixed\" }\n"), 6, `key_header "X-Key" is also in [providers.dispatch] headers (x-key)`},
		{"two headers differing in case", dispatch("headers = { Authorization = \"Bearer a\", authorization = \"Bearer b\" }\n"), 6, "Authorization and authorization are the same header"},
		{"header value with a control character", dispatch("headers = { X-Tag = \"a\\u0001b\" }\n"), 6, "header X-Tag holds a control character"},
		{"header value with DEL", dispatch("headers = { X-Tag = \"a\\u007Fb\" }\n"), 6, "header X-Tag holds a control character"},
		{"lookup header value with a control character", httpProvider("[providers.lookup]\nurl = \"http://h/{downstream_key}\"\nheaders = { X-Tag = \"a\\u001Bb\" }\n"), 8, "header X-Tag holds a control character"},
		{"header value with a tab", dispatch("headers = { X-Tag = \"a\\tb\" }\n"), 0, ""},
		{"header name with a bad character", dispatch("headers = { \"X(y)\" = \"v\" }\n"), 6, `header name "X(y)" is not valid`},
		// 6. A timeout is a bound, not forever.
		{"timeout 100000h", withTimeout("100000h"), 4, "timeout \"100000h\" is longer than 10m0s"},
		{"timeout 11m", withTimeout("11m"), 4, "longer than 10m0s"},
		{"timeout 10m", withTimeout("10m"), 0, ""},
		// 7. Names that differ only in case.
		{"tools charge and Charge", twoTools("charge", "Charge"), 12, `tool "Charge" differs from tool "charge" only in case`},
		{"providers Mail and mail", "[[providers]]\nname = \"Mail\"\nkind = \"sandbox\"\n[[providers]]\nname = \"mail\"\nkind = \"sandbox\"\n" + goodTool, 5, `provider "mail" differs from provider "Mail" only in case`},
		// 4. ${ENV} in a URL: read at use, like a header's; never in the
		// scheme or host.
		{"${ENV} in a dispatch query", strings.Replace(httpProvider(""), "/send", "/send?api_key=${PAY_TOKEN}", 1), 0, ""},
		{"${ENV} in a lookup path", lookup("http://h/${TENANT}/{downstream_key}"), 0, ""},
		{"${ENV} in the host", strings.Replace(httpProvider(""), "127.0.0.1:9", "${API_HOST}", 1), 5, "a ${NAME} may stand only in the URL's path or query"},
		// R11 H2: nor a {placeholder}: a call's arguments would choose
		// where the request and its headers' secrets go.
		{"{argument} as the host", strings.Replace(httpProvider("headers = { Authorization = \"Bearer ${EVIL_TOKEN}\" }\n"), "127.0.0.1:9", "{region}", 1), 5, "a {placeholder} may stand only in the URL's path or query, not in its scheme or host"},
		{"{argument} in the host", strings.Replace(httpProvider(""), "127.0.0.1", "{region}.example.com", 1), 5, "not in its scheme or host"},
		{"{argument} as the port", strings.Replace(httpProvider(""), ":9", ":{port}", 1), 5, "not in its scheme or host"},
		{"{argument} as user information", strings.Replace(httpProvider(""), "127.0.0.1", "{who}@127.0.0.1", 1), 5, "not in its scheme or host"},
		{"{downstream_key} as a lookup's host", lookup("http://{downstream_key}/m"), 7, "lookup: url: a {placeholder} may stand only in the URL's path or query"},
		{"{provider_ref} in a lookup's host", lookup("http://{provider_ref}.example.com/m/{downstream_key}"), 7, "not in its scheme or host"},
		{"malformed ${ in a url", strings.Replace(httpProvider(""), "/send", "/send?k=${PAY-TOKEN}", 1), 5, "${NAME}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("tools.toml", []byte(c.doc), noEnv)
			if c.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
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

// 5. A secret is read from the environment when it is used, not when the
// config is loaded: an operator who runs lookups (ops check, triage)
// needs only the lookup's variables. A missing one is an error at that use
// (see provider/httpapi's tests); the config loads.
func TestEnvironmentVariablesAreReadAtUse(t *testing.T) {
	doc := httpProvider("headers = { Authorization = \"Bearer ${PAY_TOKEN}\" }\n[providers.lookup]\nurl = \"http://127.0.0.1:9/d/{downstream_key}\"\nheaders = { Authorization = \"Bearer ${LOOKUP_TOKEN}\" }\n")
	c, err := config.Parse("t.toml", []byte(doc), noEnv)
	if err != nil {
		t.Fatalf("refused without the variables set: %v", err)
	}
	if c.Providers[0].HTTP.Config.Env == nil {
		t.Fatal("no environment handed to the provider")
	}
	if got := c.Providers[0].HTTP.MissingEnv("dispatch"); strings.Join(got, ",") != "PAY_TOKEN" {
		t.Errorf("MissingEnv(dispatch) = %v", got)
	}
	if got := c.Providers[0].HTTP.MissingEnv("lookup"); strings.Join(got, ",") != "LOOKUP_TOKEN" {
		t.Errorf("MissingEnv(lookup) = %v", got)
	}
}
