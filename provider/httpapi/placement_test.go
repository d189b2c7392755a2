package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// R11 H2: the scheme and authority of a URL (host, port, user
// information) are the config's own. A {placeholder} there lets a call's
// arguments (an agent's, through the gateway) choose where the request —
// and its headers' secrets — go; a lookup's {downstream_key} or
// {provider_ref} there would send the lookup's wherever a reference says.
// Refused as a ${NAME} there is; a placeholder in the path or query is
// one value where it stands.
func TestAPlaceholderMayNotChooseTheHost(t *testing.T) {
	env := func(string) (string, bool) { return "tok", true }
	auth := map[string]string{"Authorization": "Bearer ${EVIL_TOKEN}"}
	lookup := func(u string) httpapi.Config {
		return httpapi.Config{Name: "x", Env: env, Dispatch: httpapi.Endpoint{URL: "http://h/send"},
			Lookup: &httpapi.Endpoint{URL: u, Headers: auth}}
	}
	dispatch := func(u string) httpapi.Config {
		return httpapi.Config{Name: "x", Env: env, Dispatch: httpapi.Endpoint{URL: u, Headers: auth}}
	}
	for _, c := range []struct {
		name   string
		c      httpapi.Config
		refuse bool
	}{
		{"argument as the host", dispatch("http://{region}/m/ok/send"), true},
		{"argument in the host", dispatch("https://api.{region}.example.com/send"), true},
		{"argument ending the host", dispatch("https://api.example.com{suffix}/send"), true},
		{"argument as the port", dispatch("https://api.example.com:{port}/send"), true},
		{"argument as user information", dispatch("https://{who}@api.example.com/send"), true},
		{"argument as the scheme", dispatch("{scheme}://api.example.com/send"), true},
		{"argument host without a path", dispatch("http://{region}"), true},
		{"argument host before a query", dispatch("http://{region}?to={to}"), true},
		{"downstream key as the host", dispatch("http://{downstream_key}/send"), true},
		{"lookup key as the host", lookup("http://{downstream_key}/m"), true},
		{"lookup reference as the host", lookup("https://{provider_ref}.example.com/m/{downstream_key}"), true},
		{"argument in the path", dispatch("https://api.example.com/{region}/send"), false},
		{"argument in the query", dispatch("https://api.example.com/send?r={region}"), false},
		{"argument right after the host, in the query", dispatch("https://api.example.com?r={region}"), false},
		{"lookup key in the path", lookup("https://api.example.com/m/{downstream_key}"), false},
	} {
		_, err := httpapi.New(c.c)
		switch {
		case c.refuse && err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.refuse && !strings.Contains(err.Error(), "a {placeholder} may stand only in the URL's path or query, not in its scheme or host"):
			t.Errorf("%s: %v; want the placeholder refused where it stands", c.name, err)
		case c.refuse && strings.Contains(err.Error(), "example.com"):
			t.Errorf("%s: %v repeats the URL", c.name, err)
		case !c.refuse && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		}
		var ee *httpapi.EndpointError
		if c.refuse && (!errors.As(err, &ee) || ee.Field != "url") {
			t.Errorf("%s: %v; want an EndpointError at url", c.name, err)
		}
	}
}

// R11 M2: net/http sends nothing for a header value with a control
// character (other than a tab) — it refuses the request before dialing.
// Written in the config, such a value is a config error. Read from the
// environment, the dispatch is refused before anything is claimed
// (CanDispatch, naming the variable and never the value); one that
// reaches Dispatch anyway (the variable changed in between) is "not sent",
// never an unknown outcome, and a lookup says it asked nothing.
func TestAHeaderValueWithAControlCharacter(t *testing.T) {
	for _, v := range []string{"a\x01b", "a\x7fb", "a\x00b", "a\x1bb"} {
		_, err := httpapi.New(httpapi.Config{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send", Headers: map[string]string{"X-Tag": v}}})
		if err == nil || !strings.Contains(err.Error(), "header X-Tag holds a control character") || strings.Contains(err.Error(), v) {
			t.Errorf("literal %q: %v; want a config error naming the header", v, err)
		}
		_, err = httpapi.New(httpapi.Config{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send"},
			Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", Headers: map[string]string{"X-Tag": v}}})
		if err == nil || !strings.Contains(err.Error(), "lookup: header X-Tag holds a control character") {
			t.Errorf("literal %q in the lookup: %v; want a config error", v, err)
		}
	}
	if _, err := httpapi.New(httpapi.Config{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send", Headers: map[string]string{"X-Tag": "a\tb"}}}); err != nil {
		t.Errorf("a tab (allowed in a header value): %v", err)
	}

	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{"id":"ch_1"}`)
	}))
	defer srv.Close()
	const evil = "abc\x01defSECRET"
	env := func(k string) (string, bool) {
		if k == "EVIL_TOKEN" {
			return evil, true
		}
		return "fine-value", true
	}
	p, err := httpapi.New(httpapi.Config{Name: "pay", Env: env, HonoursKeys: true,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", Headers: map[string]string{"Authorization": "Bearer ${EVIL_TOKEN}", "X-Ok": "${OK}"}},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/m/{downstream_key}", Headers: map[string]string{"Authorization": "Bearer ${EVIL_TOKEN}"}}})
	if err != nil {
		t.Fatal(err)
	}
	noValue := func(what, s string) {
		t.Helper()
		if strings.Contains(s, "SECRET") || strings.Contains(s, "abc") || strings.Contains(s, "\x01") {
			t.Errorf("%s: %q repeats the value", what, s)
		}
	}
	cerr := p.CanDispatch()
	if cerr == nil || !strings.Contains(cerr.Error(), "$EVIL_TOKEN") || !strings.Contains(cerr.Error(), "control character") {
		t.Errorf("CanDispatch: %v; want it refused, naming $EVIL_TOKEN", cerr)
	} else {
		noValue("CanDispatch", cerr.Error())
	}
	resp, derr := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{}`)})
	if derr != nil || !provider.SentNothing(resp) || !strings.Contains(resp.Detail, "$EVIL_TOKEN") {
		t.Errorf("Dispatch: %+v %v; want not sent, naming the variable", resp, derr)
	}
	noValue("Dispatch", resp.Detail+errString(derr))
	_, lerr := p.Lookup(context.Background(), "k1")
	if lerr == nil || !strings.Contains(lerr.Error(), "cannot tell") || !strings.Contains(lerr.Error(), "nothing was asked") || !strings.Contains(lerr.Error(), "$EVIL_TOKEN") {
		t.Errorf("Lookup: %v; want cannot tell, nothing asked, naming the variable", lerr)
	}
	noValue("Lookup", errString(lerr))
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests; want none", n)
	}
}
