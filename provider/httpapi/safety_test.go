package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// A configured URL may carry a secret in its query (an API key) or, from
// the environment, in its path: a failed exchange's error text — stored
// in the attempt, shown by ops show, returned by the gateway — names the
// URL with every query value and every value read from the environment
// masked. A body that echoes them has them masked too.
func TestAFailedExchangeNeverRepeatsTheURLsSecrets(t *testing.T) {
	const literal = "sk_live_SECRETLITERAL"
	const fromEnv = "envsecret-0123456789"
	var mode string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		m := mode
		mu.Unlock()
		switch m {
		case "drop": // the reply is lost: EOF
			io.Copy(io.Discard, r.Body)
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		case "slow":
			time.Sleep(700 * time.Millisecond)
		case "echo":
			w.WriteHeader(500)
			io.WriteString(w, "bad request to "+r.URL.String())
		}
	}))
	defer srv.Close()
	env := func(k string) (string, bool) {
		if k == "PATH_TOKEN" {
			return fromEnv, true
		}
		return "", false
	}
	p, err := httpapi.New(httpapi.Config{Name: "pay", Timeout: 300 * time.Millisecond, Env: env,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/${PATH_TOKEN}/send?api_key=" + literal + "&to={to}"},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/${PATH_TOKEN}/charges/{downstream_key}?api_key=" + literal}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"drop", "slow", "echo"} {
		mu.Lock()
		mode = m
		mu.Unlock()
		resp, derr := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{"to":"a@example.com"}`)})
		_, lerr := p.Lookup(context.Background(), "k1")
		for what, out := range map[string]string{"dispatch": errString(derr) + resp.Detail, "lookup": errString(lerr)} {
			if out == "" {
				t.Errorf("%s %s: no error", m, what)
			}
			if strings.Contains(out, "SECRETLITERAL") || strings.Contains(out, "0123456789") {
				t.Errorf("%s %s: %q repeats a secret", m, what, out)
			}
			if m != "echo" && !strings.Contains(out, "api_key=***") {
				t.Errorf("%s %s: %q; want the URL named with its query masked", m, what, out)
			}
		}
	}
}

// A header's or URL's ${NAME} is read when the request is made: a lookup
// needs only the lookup's variables, a dispatch only the dispatch's. A
// missing one is an error at that use, naming it; a dispatch then sends
// nothing (not applied: the same key may go once it is set).
func TestEnvironmentIsReadWhenARequestIsMade(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" auth="+r.Header.Get("Authorization")+" accept="+r.Header.Get("Accept"))
		mu.Unlock()
		io.WriteString(w, `{"id":"ch_1"}`)
	}))
	defer srv.Close()
	vars := map[string]string{"LOOKUP_TOKEN": "look-1"}
	var vmu sync.Mutex
	env := func(k string) (string, bool) {
		vmu.Lock()
		defer vmu.Unlock()
		v, ok := vars[k]
		return v, ok
	}
	p, err := httpapi.New(httpapi.Config{Name: "pay", Env: env,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send?acct=${ACCOUNT}", Headers: map[string]string{"Authorization": "Bearer ${PAY_TOKEN}", "Accept": "application/vnd.api+json"}},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/charges/{downstream_key}", Headers: map[string]string{"Authorization": "Bearer ${LOOKUP_TOKEN}"}}})
	if err != nil {
		t.Fatalf("New without the dispatch's variables: %v", err)
	}
	if ev, err := p.Lookup(context.Background(), "k1"); err != nil || !ev.Found {
		t.Errorf("lookup without the dispatch's variables: %+v, %v", ev, err)
	}
	resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{}`)})
	if err != nil || resp.Status != provider.NotApplied || !strings.Contains(resp.Detail, "not sent") ||
		!strings.Contains(resp.Detail, "needs $ACCOUNT, which is not set") && !strings.Contains(resp.Detail, "needs $PAY_TOKEN, which is not set") {
		t.Errorf("dispatch without its variables: %+v, %v; want not sent, naming the variable", resp, err)
	}
	vmu.Lock()
	vars = map[string]string{"PAY_TOKEN": "pay-1", "ACCOUNT": "a&b"}
	vmu.Unlock()
	if _, err := p.Lookup(context.Background(), "k1"); err == nil || !strings.Contains(err.Error(), "cannot tell") || !strings.Contains(err.Error(), "header Authorization needs $LOOKUP_TOKEN, which is not set") {
		t.Errorf("lookup without its variable: %v; want cannot tell, naming it", err)
	}
	resp, err = p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{}`)})
	if err != nil || resp.Status != provider.Applied {
		t.Errorf("dispatch with its variables: %+v, %v", resp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"GET /charges/k1? auth=Bearer look-1 accept=application/json",
		"POST /send?acct=a%26b auth=Bearer pay-1 accept=application/vnd.api+json",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The rules config enforces hold for a provider built in Go too.
func TestNewRefusesWhatWouldSendASecondEffect(t *testing.T) {
	d := httpapi.Endpoint{URL: "http://h/send"}
	for name, c := range map[string]httpapi.Config{
		"lookup about nothing":     {Name: "x", Dispatch: d, Lookup: &httpapi.Endpoint{URL: "http://h/lookup/"}},
		"2xx as retry":             {Name: "x", Dispatch: d, Classify: map[int]httpapi.Class{201: httpapi.Retry}},
		"5xx as not applied":       {Name: "x", Dispatch: d, Classify: map[int]httpapi.Class{500: httpapi.NotApplied}},
		"key in Host":              {Name: "x", Dispatch: d, KeyHeader: "Host", HonoursKeys: true},
		"key over a header":        {Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send", Headers: map[string]string{"Authorization": "Bearer x"}}, KeyHeader: "authorization"},
		"header Transfer-Encoding": {Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send", Headers: map[string]string{"Transfer-Encoding": "chunked"}}},
		"timeout of years":         {Name: "x", Dispatch: d, Timeout: 100000 * time.Hour},
		"${ENV} without an env":    {Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/send?k=${KEY}"}},
	} {
		if _, err := httpapi.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
