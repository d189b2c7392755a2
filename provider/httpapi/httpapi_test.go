package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// seen is what the test server received.
type seen struct {
	method, path, key, auth, contentType string
	body                                 string
}

// One row per class of the classification table, against a real server.
func TestDispatchClassifiesEveryAnswer(t *testing.T) {
	type want struct {
		status     provider.Status
		ambiguous  bool
		ref        string
		detail     string
		retryAfter time.Duration
	}
	cases := []struct {
		name     string
		handler  http.HandlerFunc
		classify map[int]httpapi.Class
		honours  bool
		want     want
	}{
		{"201 applied, reference from the JSON pointer", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			io.WriteString(w, `{"delivery":{"id":"msg_42"},"status":"queued"}`)
		}, nil, false, want{status: provider.Applied, ref: "msg_42"}},
		{"200 applied without a reference in the body", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"ok":true}`)
		}, nil, false, want{status: provider.Applied, detail: "nothing at /delivery/id"}},
		{"200 applied, body over the size cap", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"delivery":{"id":"msg_1"},"pad":"`+strings.Repeat("x", 5000)+`"}`)
		}, nil, false, want{status: provider.Applied, detail: "over the size cap"}},
		{"400 failed", status(400, `{"error":"bad address"}`), nil, false, want{status: provider.Rejected, detail: "HTTP 400: {\"error\":\"bad address\"}"}},
		{"401 failed", status(401, ""), nil, false, want{status: provider.Rejected, detail: "HTTP 401"}},
		{"403 failed", status(403, ""), nil, false, want{status: provider.Rejected, detail: "HTTP 403"}},
		{"404 failed", status(404, ""), nil, false, want{status: provider.Rejected, detail: "HTTP 404"}},
		{"422 failed", status(422, "recipient refused"), nil, false, want{status: provider.Rejected, detail: "HTTP 422: recipient refused"}},
		{"409 retry the same key", status(409, "in flight"), nil, true, want{status: provider.Busy, detail: "HTTP 409"}},
		{"425 retry the same key", status(425, ""), nil, true, want{status: provider.Busy}},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
		}, nil, false, want{status: provider.Busy, retryAfter: 3 * time.Second}},
		{"503 with honours_keys: retry the same key", status(503, ""), nil, true, want{status: provider.Busy}},
		{"503 without honours_keys: unknown (a proxy answers 503 after the backend got the request)",
			status(503, "upstream connect error or disconnect/reset before headers. reset reason: connection termination"), nil, false,
			want{ambiguous: true, detail: "HTTP 503: upstream connect error"}},
		{"503 without honours_keys classified retry: retry", status(503, ""), map[int]httpapi.Class{503: httpapi.Retry}, false, want{status: provider.Busy}},
		{"502 with honours_keys: unknown", status(502, ""), nil, true, want{ambiguous: true, detail: "HTTP 502"}},
		{"504 unknown", status(504, ""), nil, false, want{ambiguous: true, detail: "HTTP 504"}},
		{"500 unknown", status(500, "boom"), nil, false, want{ambiguous: true, detail: "HTTP 500: boom"}},
		{"502 unknown", status(502, ""), nil, false, want{ambiguous: true, detail: "HTTP 502"}},
		{"302 unknown: a write is not followed elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, nil, false, want{ambiguous: true, detail: "HTTP 302"}},
		{"timeout unknown", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}, nil, false, want{ambiguous: true, detail: "no answer within the timeout (provider mail's, 300ms)"}},
		{"connection broken after the request was written: unknown", func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, nil, false, want{ambiguous: true, detail: "EOF"}},
		{"override: 409 is a failure for this provider", status(409, ""), map[int]httpapi.Class{409: httpapi.Failed}, false, want{status: provider.Rejected}},
		{"override: 503 guarantees nothing was applied for this provider", status(503, ""), map[int]httpapi.Class{503: httpapi.NotApplied}, false, want{status: provider.NotApplied}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := make(chan seen, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				select {
				case got <- seen{r.Method, r.URL.Path, r.Header.Get("X-Request-Key"), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}:
				default:
				}
				r.Body = io.NopCloser(strings.NewReader(string(b)))
				c.handler(w, r)
			}))
			defer srv.Close()
			p, err := httpapi.New(httpapi.Config{
				Name: "mail", HonoursKeys: c.honours, Timeout: 300 * time.Millisecond, MaxResponseBytes: 1024,
				KeyHeader: "X-Request-Key", Classify: c.classify,
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/{to}/messages", RefPointer: "/delivery/id",
					Headers: map[string]string{"Authorization": "Bearer s3cret"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			args := json.RawMessage(`{"body":"hello","to":"ops@example.com"}`)
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "rs-abc", Tool: "send", Args: args})
			if c.want.ambiguous {
				if !errors.Is(err, provider.ErrAmbiguous) {
					t.Fatalf("got %+v, %v; want an ambiguous outcome", resp, err)
				}
				if !strings.Contains(err.Error(), c.want.detail) {
					t.Errorf("error %q does not say %q", err, c.want.detail)
				}
			} else {
				if err != nil {
					t.Fatalf("error %v; want %s", err, c.want.status)
				}
				if resp.Status != c.want.status || resp.Ref != c.want.ref || !strings.Contains(resp.Detail, c.want.detail) || resp.RetryAfter != c.want.retryAfter {
					t.Errorf("got %+v; want %+v", resp, c.want)
				}
			}
			if e := errString(err) + resp.Detail; strings.Contains(e, "s3cret") {
				t.Errorf("the secret header leaked into %q", e)
			}
			s := <-got
			if s.method != "POST" || s.path != "/v1/ops@example.com/messages" || s.key != "rs-abc" ||
				s.auth != "Bearer s3cret" || s.contentType != "application/json" || s.body != string(args) {
				t.Errorf("the server saw %+v", s)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// A request cut short says whose time ran out: the provider's configured
// timeout, or the call's own deadline (--timeout, a lease) before it —
// "no answer within the timeout" alone reads as the provider's.
func TestATimeoutSaysWhoseItWas(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: 400 * time.Millisecond,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/send/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	// Each request's context is made as it starts: one already done sends
	// nothing (not applied), which is not what is tested here.
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		return ctx
	}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	for _, c := range []struct {
		name  string
		ctx   func() context.Context
		want  string
		never string
	}{
		{"the provider's timeout", context.Background, "no answer within the timeout (provider mail's, 400ms)", "deadline"},
		{"the call's deadline", short, "no answer before the call's own deadline ran out (its --timeout or lease), sooner than provider mail's 400ms timeout", "within the timeout"},
		{"the call cancelled", cancelled, "the call was cancelled before an answer came", "within the timeout"},
	} {
		resp, derr := p.Dispatch(c.ctx(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		_, lerr := p.Lookup(c.ctx(), "k")
		for what, out := range map[string]string{"dispatch": errString(derr) + resp.Detail, "lookup": errString(lerr)} {
			if !strings.Contains(out, c.want) || strings.Contains(out, c.never) {
				t.Errorf("%s, %s: %q; want %q", c.name, what, out, c.want)
			}
		}
		if !errors.Is(derr, provider.ErrAmbiguous) {
			t.Errorf("%s: dispatch %+v, %v; want unknown", c.name, resp, derr)
		}
	}
}

// A provider that is down: the connection is refused before a byte is
// sent, so nothing was applied — the one transport failure that is
// evidence. Its lookup cannot tell.
func TestConnectionRefusedIsNotApplied(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	p, err := httpapi.New(httpapi.Config{Name: "down", Timeout: time.Second,
		Dispatch: httpapi.Endpoint{URL: "http://" + addr + "/send"},
		Lookup:   &httpapi.Endpoint{URL: "http://" + addr + "/send/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
	if err != nil || resp.Status != provider.NotApplied || !strings.Contains(resp.Detail, "not sent") {
		t.Fatalf("got %+v, %v; want not applied", resp, err)
	}
	if ev, err := p.Lookup(context.Background(), "k"); err == nil || ev.Found || !strings.Contains(err.Error(), "cannot tell") {
		t.Errorf("lookup of a provider that is down: %+v, %v; want cannot tell", ev, err)
	}
}

// Lookup: 2xx found (with the reference), 404 not found, anything else
// cannot tell; no lookup configured cannot tell either.
func TestLookupFoundNotFoundCannotTell(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/messages/rs-1":
			io.WriteString(w, `{"id":"msg_1"}`)
		case "/messages/rs-2":
			w.WriteHeader(404)
		default:
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "mail",
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/messages"},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/messages/{downstream_key}", RefPointer: "/id"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ev, err := p.Lookup(ctx, "rs-1"); err != nil || !ev.Found || ev.Ref != "msg_1" {
		t.Errorf("found: %+v, %v", ev, err)
	}
	if ev, err := p.Lookup(ctx, "rs-2"); err != nil || ev.Found {
		t.Errorf("not found: %+v, %v", ev, err)
	}
	if ev, err := p.Lookup(ctx, "rs-3"); err == nil || ev.Found || !strings.Contains(err.Error(), "cannot tell") {
		t.Errorf("500: %+v, %v; want cannot tell", ev, err)
	}
	noLookup, _ := httpapi.New(httpapi.Config{Name: "blind", Dispatch: httpapi.Endpoint{URL: srv.URL + "/messages"}})
	if _, err := noLookup.Lookup(ctx, "rs-1"); err == nil || !strings.Contains(err.Error(), "cannot tell") {
		t.Errorf("no lookup configured: %v; want cannot tell", err)
	}
}

// The defaults, for an API that honours keys and for one that does not:
// they differ only at 503, which a proxy (Envoy, Istio: "upstream connect
// error or disconnect/reset before headers") answers after the backend
// got the request — retry re-sends the same key, which only an API that
// honours keys answers with its first result.
func TestDefaultClassTable(t *testing.T) {
	for code, want := range map[int]httpapi.Class{
		200: httpapi.Applied, 201: httpapi.Applied, 202: httpapi.Applied, 204: httpapi.Applied,
		400: httpapi.Failed, 401: httpapi.Failed, 403: httpapi.Failed, 404: httpapi.Failed, 422: httpapi.Failed, 405: httpapi.Failed,
		409: httpapi.Retry, 425: httpapi.Retry, 429: httpapi.Retry,
		408: httpapi.Unknown, 500: httpapi.Unknown, 502: httpapi.Unknown, 504: httpapi.Unknown, 301: httpapi.Unknown,
	} {
		for _, honours := range []bool{true, false} {
			if got := httpapi.DefaultClass(code, honours); got != want {
				t.Errorf("%d (honours keys %t): %s, want %s", code, honours, got, want)
			}
		}
	}
	if got := httpapi.DefaultClass(503, true); got != httpapi.Retry {
		t.Errorf("503 (honours keys): %s, want retry", got)
	}
	if got := httpapi.DefaultClass(503, false); got != httpapi.Unknown {
		t.Errorf("503 (does not honour keys): %s, want unknown", got)
	}
}

func TestConfigRefusesBadTemplates(t *testing.T) {
	for _, c := range []httpapi.Config{
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "ftp://h/x"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "/relative"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/{unclosed"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x", Method: "TRACE"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x", RefPointer: "id"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x"}, Lookup: &httpapi.Endpoint{URL: "http://h/{to}"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x"}, Lookup: &httpapi.Endpoint{URL: "http://h/{provider_reference}"}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x"}, Classify: map[int]httpapi.Class{700: httpapi.Failed}},
		{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x"}, Classify: map[int]httpapi.Class{500: "maybe"}},
	} {
		if _, err := httpapi.New(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

// A lookup URL may name the provider's reference ({provider_ref}, the
// API's status path by its own id) as well as the downstream key. The
// reference is the one an earlier attempt recorded; without one the
// lookup cannot tell, and nothing is asked.
func TestLookupByProviderReference(t *testing.T) {
	var asked []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.EscapedPath())
		mu.Unlock()
		switch r.URL.EscapedPath() {
		case "/v1/rs-1/charges/ch_1", "/v1/rs-9/charges/ch%2F9":
			io.WriteString(w, `{"status":"succeeded"}`)
		case "/v1/rs-2/charges/ch_2":
			w.WriteHeader(404)
		default:
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "pay",
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/charges"},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/v1/{downstream_key}/charges/{provider_ref}"}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.NeedsRef() {
		t.Error("NeedsRef = false for a lookup URL with {provider_ref}")
	}
	ctx := context.Background()
	cases := []struct {
		name  string
		q     provider.Query
		found bool
		ref   string
		tell  string // "" conclusive, else what the cannot-tell error says
		path  string // the request made, "" none
	}{
		{"found by its reference", provider.Query{DownstreamKey: "rs-1", Ref: "ch_1"}, true, "ch_1", "", "/v1/rs-1/charges/ch_1"},
		{"not found by its reference", provider.Query{DownstreamKey: "rs-2", Ref: "ch_2"}, false, "", "", "/v1/rs-2/charges/ch_2"},
		{"a reference is path-escaped", provider.Query{DownstreamKey: "rs-9", Ref: "ch/9"}, true, "ch/9", "", "/v1/rs-9/charges/ch%2F9"},
		{"the API cannot answer", provider.Query{DownstreamKey: "rs-3", Ref: "ch_3"}, false, "", "HTTP 500", "/v1/rs-3/charges/ch_3"},
		{"no reference recorded", provider.Query{DownstreamKey: "rs-1"}, false, "", "no reference is recorded", ""},
	}
	for _, c := range cases {
		mu.Lock()
		asked = nil
		mu.Unlock()
		ev, err := provider.LookupFor(ctx, p, c.q)
		switch {
		case c.tell == "" && (err != nil || ev.Found != c.found || ev.Ref != c.ref):
			t.Errorf("%s: %+v, %v; want found %v, ref %q", c.name, ev, err, c.found, c.ref)
		case c.tell != "" && (err == nil || ev.Found || !strings.Contains(err.Error(), "cannot tell") || !strings.Contains(err.Error(), c.tell)):
			t.Errorf("%s: %+v, %v; want cannot tell: %s", c.name, ev, err, c.tell)
		}
		mu.Lock()
		if got := strings.Join(asked, ","); got != c.path {
			t.Errorf("%s: asked %q; want %q", c.name, got, c.path)
		}
		mu.Unlock()
	}
	// By downstream key alone (Lookup), a lookup by reference cannot tell.
	if ev, err := p.Lookup(ctx, "rs-1"); err == nil || ev.Found || !strings.Contains(err.Error(), "no reference is recorded") {
		t.Errorf("Lookup by key alone: %+v, %v; want cannot tell", ev, err)
	}
	// A lookup by downstream key ignores a recorded reference.
	byKey, err := httpapi.New(httpapi.Config{Name: "mail", Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/charges"},
		Lookup: &httpapi.Endpoint{URL: srv.URL + "/v1/{downstream_key}/charges/ch_1"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := provider.LookupFor(ctx, byKey, provider.Query{DownstreamKey: "rs-1", Ref: "other"}); err != nil || !ev.Found || byKey.NeedsRef() {
		t.Errorf("by key with a reference recorded: %+v, %v", ev, err)
	}
}

// A connection reused from an earlier call that breaks after the request
// was written leaves the outcome unknown, and the request is sent once, at
// an API that does not honour keys:
// net/http re-sends such a request on a fresh connection by itself when
// it carries an Idempotency-Key header (the default key header) — a second
// effect at a provider that does not honour keys, and "applied" for a
// dispatch whose first sending nobody can account for.
func TestAWriteOnAReusedConnectionThatBreaksIsSentOnce(t *testing.T) {
	for _, keyHeader := range []string{"", "X-Idempotency-Key", "X-Request-Key"} {
		t.Run("key header "+keyHeader, func(t *testing.T) {
			var mu sync.Mutex
			effects := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				mu.Lock()
				effects++
				n := effects
				mu.Unlock()
				if n == 2 { // applied, then the connection drops
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
				io.WriteString(w, `{"id":"m"}`)
			}))
			defer srv.Close()
			p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: 2 * time.Second, KeyHeader: keyHeader, HonoursKeys: false,
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if resp, err := p.Dispatch(ctx, provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{}`)}); err != nil || resp.Status != provider.Applied {
				t.Fatalf("first dispatch: %+v, %v", resp, err)
			}
			resp, err := p.Dispatch(ctx, provider.Request{DownstreamKey: "k2", Args: json.RawMessage(`{}`)})
			if !errors.Is(err, provider.ErrAmbiguous) {
				t.Errorf("second dispatch, connection dropped after the request: %+v, %v; want unknown", resp, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if effects != 2 {
				t.Errorf("the server took %d requests for 2 dispatches", effects)
			}
		})
	}
}

// An API that echoes the credentials it was sent in its error body (a
// "bad token: Bearer …" page, a debugging proxy) does not get them into
// the operation's detail, which the ledger stores and every output shows:
// a header value, or any long word of one, is masked in the body's
// snippet.
func TestAnEchoedSecretIsMaskedInTheDetail(t *testing.T) {
	const secret = "sk_live_0123456789abcdef"
	for _, code := range []int{401, 500, 429, 302} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			io.WriteString(w, "token refused: "+r.Header.Get("Authorization")+" (key "+r.Header.Get("X-Api-Key")+")")
		}))
		p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second,
			Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", Headers: map[string]string{
				"Authorization": "Bearer " + secret, "X-Api-Key": "k-" + secret}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		srv.Close()
		out := errString(err) + resp.Detail
		if strings.Contains(out, "0123456789abcdef") || !strings.Contains(out, "token refused") {
			t.Errorf("HTTP %d: %q; want the body without the secret", code, out)
		}
	}
}

// A reference is a short identifier: one an API returns at the pointer
// that is longer than MaxRef bytes (a whole document, an endless string)
// is not taken — it would be stored with the operation, its attempt and
// its receipt, and replayed to every retry. The operation is applied
// without a reference, and the detail says why; a lookup finds the effect
// without one.
func TestAHugeReferenceIsNotTaken(t *testing.T) {
	huge := strings.Repeat("r", httpapi.MaxRef+1)
	for _, c := range []struct {
		ref  string
		want string
	}{{strings.Repeat("r", httpapi.MaxRef), strings.Repeat("r", httpapi.MaxRef)}, {huge, ""}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]string{"id": c.ref})
		}))
		p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second,
			Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", RefPointer: "/id"},
			Lookup:   &httpapi.Endpoint{URL: srv.URL + "/send/{downstream_key}", RefPointer: "/id"}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		if err != nil || resp.Status != provider.Applied || resp.Ref != c.want || len(resp.Detail) > 300 ||
			(c.want == "" && !strings.Contains(resp.Detail, "longer than")) {
			t.Errorf("dispatch, reference of %d bytes: %s ref %d bytes, detail %q, %v", len(c.ref), resp.Status, len(resp.Ref), resp.Detail, err)
		}
		ev, err := p.Lookup(context.Background(), "k")
		if err != nil || !ev.Found || ev.Ref != c.want || len(ev.Detail) > httpapi.MaxRef+200 {
			t.Errorf("lookup, reference of %d bytes: found %v ref %d bytes, detail %d bytes, %v", len(c.ref), ev.Found, len(ev.Ref), len(ev.Detail), err)
		}
		srv.Close()
	}
}

// A TLS handshake that fails — a certificate nobody vouches for, a server
// that answers TLS with plain HTTP — fails before a byte of the request is
// sent: nothing was applied, exactly like a refused connection, and the
// next call sends it once. It was "unknown", a person's work for every
// call to a misconfigured endpoint.
func TestATLSHandshakeThatFailsIsNotApplied(t *testing.T) {
	var hits sync.Map
	count := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { hits.Store(name, true) }
	}
	untrusted := httptest.NewTLSServer(count("untrusted"))
	defer untrusted.Close()
	plain := httptest.NewServer(count("plain"))
	defer plain.Close()
	for _, c := range []struct{ name, url string }{
		{"untrusted", untrusted.URL},
		{"plain", strings.Replace(plain.URL, "http://", "https://", 1)},
	} {
		p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: 2 * time.Second, Dispatch: httpapi.Endpoint{URL: c.url + "/send"}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		if err != nil || resp.Status != provider.NotApplied || !strings.Contains(resp.Detail, "not sent") {
			t.Errorf("%s: %+v, %v; want not applied, not sent", c.name, resp, err)
		}
		if _, took := hits.Load(c.name); took {
			t.Errorf("%s: the server took a request", c.name)
		}
	}
}

// Retry-After as the API sent it, or nothing when it makes no sense; a
// wait longer than a day (a number of seconds too large for a duration
// too) is a day: read as no wait, it sent again at once; read as it was,
// it wrapped around to a negative or arbitrary wait. The attempt's detail
// says what a longer one asked (a date: until when), and that a value
// neither seconds nor a date was not understood (read as no wait: 429 is
// still not taken).
func TestRetryAfterIsReadOrIgnored(t *testing.T) {
	far := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	for _, c := range []struct {
		header string
		want   time.Duration
		detail string // in the detail ("" = nothing about Retry-After)
	}{
		{"3", 3 * time.Second, ""},
		{" 120 ", 2 * time.Minute, ""},
		{"0", 0, ""},
		{"-5", 0, `Retry-After "-5" not understood (neither seconds nor an HTTP date): read as no wait`},
		{"soon", 0, `Retry-After "soon" not understood (neither seconds nor an HTTP date): read as no wait`},
		{"86400", 24 * time.Hour, ""},
		{"86401", 24 * time.Hour, "Retry-After: 86401 seconds"},
		{"99999999999", 24 * time.Hour, "Retry-After: 99999999999 seconds"},
		{"9223372036854775807", 24 * time.Hour, "Retry-After: 9223372036854775807 seconds"},
		{"99999999999999999999999", 24 * time.Hour, "Retry-After: 99999999999999999999999 seconds"},
		{"1.5", 0, `Retry-After "1.5" not understood (neither seconds nor an HTTP date): read as no wait`},
		{far, 24 * time.Hour, "Retry-After: until " + far},
		{"Mon, 01 Jan 2001 00:00:00 GMT", 0, ""}, // past: no wait
		{strings.Repeat("x", 300), 0, `Retry-After "` + strings.Repeat("x", 40) + `…" not understood`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", c.header)
			w.WriteHeader(429)
		}))
		p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second, Dispatch: httpapi.Endpoint{URL: srv.URL + "/send"}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		srv.Close()
		if err != nil || resp.Status != provider.Busy || resp.RetryAfter != c.want {
			t.Errorf("Retry-After %q: %+v, %v; want busy, wait %v", c.header, resp, err, c.want)
		}
		if c.detail == "" && strings.Contains(resp.Detail, "Retry-After") || !strings.Contains(resp.Detail, c.detail) {
			t.Errorf("Retry-After %q: detail %q; want %q", c.header, resp.Detail, c.detail)
		}
	}
}

// A NUL character in an answer — a reference, an error body — is text a
// PostgreSQL ledger cannot hold: recording the answer failed there, and an
// effect the API applied (or refused for good) became a claim stuck in
// flight, then an unknown for a person. A reference holding one is not
// taken (applied without a reference, the detail says why); in a body's
// snippet it is shown as \x00.
func TestANULInTheAnswerNeverReachesTheLedger(t *testing.T) {
	for _, c := range []struct {
		code int
		body string
	}{{201, `{"id":"ch_\u00007"}`}, {200, `{"id":"ch_\u00007"}`}, {422, "bad \x00 address"}, {500, "boom \x00"}, {429, "slow \x00 down"}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.code)
			io.WriteString(w, c.body)
		}))
		p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second,
			Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", RefPointer: "/id"},
			Lookup:   &httpapi.Endpoint{URL: srv.URL + "/send/{downstream_key}", RefPointer: "/id"}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		out := resp.Ref + resp.Detail + errString(err)
		if strings.ContainsRune(out, 0) {
			t.Errorf("dispatch, HTTP %d %q: ref %q, detail %q, err %v: a NUL reached what the ledger records", c.code, c.body, resp.Ref, resp.Detail, err)
		}
		if c.code < 300 && (resp.Status != provider.Applied || resp.Ref != "" || !strings.Contains(resp.Detail, "NUL")) {
			t.Errorf("dispatch, HTTP %d: %s ref %q detail %q; want applied without the reference, saying why", c.code, resp.Status, resp.Ref, resp.Detail)
		}
		if c.code >= 300 && !strings.Contains(out, `\x00`) {
			t.Errorf("dispatch, HTTP %d: %q; want the NUL shown as \\x00", c.code, out)
		}
		ev, err := p.Lookup(context.Background(), "k")
		if strings.ContainsRune(ev.Ref+ev.Detail+errString(err), 0) {
			t.Errorf("lookup, HTTP %d: ref %q, detail %q, err %v: a NUL reached what the ledger records", c.code, ev.Ref, ev.Detail, err)
		}
		srv.Close()
	}
}

// An argument that goes into the URL is one value where it stands: in the
// query it is query-escaped ("x&admin=true" was path-escaped, which keeps &
// and =, and added a parameter of the caller's choosing); in the path it is
// one segment, and "." or ".." — a segment that climbs to another endpoint
// once the server cleans the path — is not sent at all. A provider's
// reference goes into a lookup URL the same way.
func TestAnArgumentInTheURLStaysOneValue(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.RequestURI)
		mu.Unlock()
		w.WriteHeader(201)
		io.WriteString(w, `{"id":"x&admin=true"}`)
	}))
	defer srv.Close()
	p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second,
		Dispatch: httpapi.Endpoint{URL: srv.URL + "/accounts/{account}/send?to={to}&mode=safe"},
		Lookup:   &httpapi.Endpoint{URL: srv.URL + "/search?ref={provider_ref}&key={downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{"account":"a b/c","to":"x&admin=true#frag"}`)})
	if err != nil || resp.Status != provider.Applied {
		t.Fatalf("dispatch: %+v %v", resp, err)
	}
	if _, err := p.LookupQuery(context.Background(), provider.Query{DownstreamKey: "k", Ref: "r&admin=true"}); err != nil {
		t.Fatalf("lookup: %v", err)
	}
	for _, acct := range []string{"..", "."} {
		resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{"account":"` + acct + `","to":"x"}`)})
		if err != nil || resp.Status != provider.Rejected || !strings.Contains(resp.Detail, "not sent") {
			t.Errorf("account %q: %+v %v; want refused, not sent", acct, resp, err)
		}
	}
	want := []string{"/accounts/a%20b%2Fc/send?to=x%26admin%3Dtrue%23frag&mode=safe", "/search?ref=r%26admin%3Dtrue&key=k"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the API was asked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
