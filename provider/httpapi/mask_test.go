package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// jsonString is s as a JSON string (quotes included) the way one encoder
// or another writes it.
type jsonString func(s string) string

// goJSON: encoding/json's default (<, > and & as \u003c…, non-ASCII as is).
func goJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// phpJSON: PHP's json_encode default: / as \/, every non-ASCII character
// as \uXXXX (lowercase hex, surrogate pairs past the BMP).
func phpJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '/':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// dotnetJSON: System.Text.Json's default encoder: HTML-sensitive
// characters and + as \u002B (uppercase hex), non-ASCII as \uXXXX.
func dotnetJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e || strings.ContainsRune("<>&'+`", r):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// nested: a JSON document carried as a string in another (a proxy that
// wraps the upstream's error body), each level PHP's.
func nested(s string) string {
	return phpJSON(`{"error":` + phpJSON(s) + `}`)
}

// An API that echoes the credentials it was sent in a JSON error body
// escapes them as its encoder does (PHP: ghp\/AbC…, .NET: \u002B, every
// encoder: \uXXXX for some characters): each such form of a secret — read
// from the environment into a header or the URL, or written in the URL's
// query — is masked before the body goes into the operation's detail,
// which the ledger stores, replays to every retry and ops show prints.
func TestASecretEchoedJSONEscapedIsMasked(t *testing.T) {
	env := map[string]string{
		"MAILER_TOKEN": "ghp/AbCdEf+123/xyz==",
		"API_KEY":      "k3y/With+Slash=",
		"SIG":          "pä<ss>&wörd€🔑x",
	}
	const literal = "lit/eral+Key=9"
	for _, c := range []struct {
		name string
		enc  jsonString
	}{
		{"Go", goJSON},
		{"PHP", phpJSON},
		{".NET", dotnetJSON},
		{"JSON within JSON", nested},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				msg := fmt.Sprintf("invalid credentials: Bearer %s for key %s sig %s literal %s url %s",
					strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.Query().Get("api_key"),
					r.Header.Get("X-Sig"), r.URL.Query().Get("lit"), r.URL.String())
				w.WriteHeader(401)
				io.WriteString(w, `{"error":`+c.enc(msg)+`}`)
			}))
			defer srv.Close()
			p, err := httpapi.New(httpapi.Config{Name: "mailer", Timeout: 2 * time.Second, MaxResponseBytes: 1 << 16,
				Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/send?api_key=${API_KEY}&lit=" + strings.NewReplacer("/", "%2F", "+", "%2B", "=", "%3D").Replace(literal),
					Headers: map[string]string{"Authorization": "Bearer ${MAILER_TOKEN}", "X-Sig": "${SIG}"}}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			if err != nil || resp.Status != provider.Rejected {
				t.Fatalf("%+v, %v; want failed", resp, err)
			}
			out := resp.Detail
			for _, frag := range []string{"AbCdEf", "xyz", "With", "Slash", "Key=9", "w\\u00f6rd", "wörd", "ss>", "ss\\u003e", "ss\\u003E", "p\\u00e4", "pä", "\\ud83d", "🔑"} {
				if strings.Contains(out, frag) {
					t.Errorf("detail %q holds %q", out, frag)
				}
			}
			if !strings.Contains(out, `invalid credentials: Bearer *** for key *** sig *** literal ***`) {
				t.Errorf("detail %q; want every secret masked, the rest kept", out)
			}
		})
	}
}

// The mask reads escapes as what they stand for, in any mix, and leaves
// text that only looks like a secret's start alone.
func TestMaskReadsEscapes(t *testing.T) {
	const secret = "ab/c+d=é"
	for _, c := range []struct{ body, want string }{
		{`x ab/c+d=é y`, `x *** y`},
		{`x ab\/c+d=\u00e9 y`, `x *** y`},
		{`x ab\u002Fc\u002bd\u003d\u00E9 y`, `x *** y`},
		{`x ab%2Fc%2Bd%3D%C3%A9 y`, `x *** y`},
		{`x ab%2fc%2bd%3d%c3%a9 y`, `x *** y`},
		{`x \u0061b/c+d=é y`, `x *** y`},
		{`x ab\\\/c+d=\\u00e9 y`, `x *** y`}, // JSON within JSON
		{`x ab/c+d= y ab\/ \u00e9`, `x ab/c+d= y ab\/ \u00e9`},
		{`x ab\/c+d=\u00e9`, `x ***`},
		{`x ab/c+d=Ã© y`, `x *** y`}, // mojibake: é read as Latin-1
		{`x ab\/c+d=\u00c3\u00a9 y`, `x *** y`},
		{`x ab%2Fc%2Bd%3D%C3%83%C2%A9 y`, `x *** y`},
		{`x ab/c+d=Ã y ab/c+d=Ã¨ ab/c+d=\u00c3`, `x ab/c+d=Ã y ab/c+d=Ã¨ ab/c+d=\u00c3`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, c.body)
		}))
		p, err := httpapi.New(httpapi.Config{Name: "m", Timeout: 2 * time.Second,
			Env:      func(string) (string, bool) { return secret, true },
			Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", Headers: map[string]string{"X-Token": "${TOKEN}"}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, _ := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
		srv.Close()
		if want := "HTTP 400: " + c.want; resp.Detail != want {
			t.Errorf("%s: %q; want %q", c.body, resp.Detail, want)
		}
	}
}

// A value read from the environment is a secret whatever its length (the
// 8-character floor is for words written in the file, where "Bearer"
// stays): an account id in the URL's path is masked in the URL an error
// names — by where it stands, however short — and in an echoed body: one
// of 3 characters or more wherever it stands, a shorter one where it
// stands whole.
func TestAShortEnvironmentValueIsMasked(t *testing.T) {
	env := map[string]string{"ACCT": "short7", "REGION": "eu", "KEY": "k9x", "ONE": "7"}
	for _, c := range []struct {
		name, url, hdr, reply string
		want, never           []string
	}{
		{"path, reply lost", "/v1/${ACCT}/send", "", "drop", []string{"/v1/***/send"}, []string{"short7"}},
		{"path, echoed", "/v1/${ACCT}/send", "", "account short7 (short7%2F) refused", []string{"HTTP 401: account *** (***%2F) refused"}, []string{"short7"}},
		{"2 characters in the path, reply lost", "/v1/${REGION}/send", "", "drop", []string{"/v1/***/send"}, nil},
		{"1 character beside text in the path, reply lost", "/v1/acct${ONE}/send", "", "drop", []string{"/v1/acct***/send"}, []string{"acct7"}},
		{"2 characters, echoed whole only", "/v1/${REGION}/send", "", `region "eu" unknown; queue eur, europe, 1eu`, []string{`HTTP 401: region "***" unknown; queue eur, europe, 1eu`}, nil},
		{"3 characters in a header, echoed", "/send", "${KEY}", "key k9x and xk9xx and k\\u0039x refused", []string{"HTTP 401: key *** and x***x and *** refused"}, []string{"k9x"}},
		{"2 characters in a header, escaped", "/send", "${REGION}", `token \u0065u refused`, []string{`HTTP 401: token *** refused`}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.reply == "drop" {
					io.Copy(io.Discard, r.Body)
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
				w.WriteHeader(401)
				io.WriteString(w, c.reply)
			}))
			defer srv.Close()
			e := httpapi.Endpoint{URL: srv.URL + c.url}
			if c.hdr != "" {
				e.Headers = map[string]string{"X-Key": c.hdr}
			}
			p, err := httpapi.New(httpapi.Config{Name: "mailer", Timeout: 2 * time.Second,
				Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Dispatch: e})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			out := errString(err) + resp.Detail
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q; want %q", out, w)
				}
			}
			for _, n := range c.never {
				if strings.Contains(out, n) {
					t.Errorf("%q holds %q", out, n)
				}
			}
		})
	}
}

// latin1 is s's UTF-8 bytes read as ISO-8859-1 and written again as
// UTF-8 — mojibake, "é" as "Ã©" — as an API (or a proxy) that decodes
// what it was sent as Latin-1 echoes it.
func latin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// cp1252 is latin1 as Windows-1252 reads bytes 0x80–0x9F (€, ‚, Ü's second
// byte as œ …; the five it leaves undefined as Latin-1 does, as the WHATWG
// decoder reads them).
func cp1252(s string) string {
	hi := []rune("€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 && c <= 0x9f {
			b.WriteRune(hi[c-0x80])
		} else {
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// R6 D4: a secret with non-ASCII characters that an API decoded as Latin-1
// (or Windows-1252) echoes as mojibake — the UTF-8 bytes of "é" as "Ã©" —
// as is, JSON-escaped by one encoder or another, or percent-encoded, is
// masked in each. (Mojibake in JSON within JSON is not read: a form of
// its own would be one more pass over every body.) Text that only looks
// like mojibake stays.
func TestASecretEchoedAsMojibakeIsMasked(t *testing.T) {
	env := map[string]string{"TOKEN": "pässwörd-é1", "SIG": "grüße€Ü/x"}
	inner := func(q string) string { return q[1 : len(q)-1] } // a JSON string without its quotes
	for _, c := range []struct {
		name string
		enc  func(string) string // the secret as the body holds it
	}{
		{"as sent", func(s string) string { return s }},
		{"Latin-1", latin1},
		{"Windows-1252", cp1252},
		{"Latin-1, Go JSON", func(s string) string { return inner(goJSON(latin1(s))) }},
		{"Latin-1, PHP JSON", func(s string) string { return inner(phpJSON(latin1(s))) }},
		{"Windows-1252, .NET JSON", func(s string) string { return inner(dotnetJSON(cp1252(s))) }},
		{"Latin-1, percent-encoded", func(s string) string { return url.QueryEscape(latin1(s)) }},
		{"Windows-1252, percent-encoded", func(s string) string { return url.PathEscape(cp1252(s)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, sig := c.enc(env["TOKEN"]), c.enc(env["SIG"])
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(401)
				io.WriteString(w, "bad token <"+tok+"> sig <"+sig+"> from r\u00e9gion Ã©t\u00e9")
			}))
			defer srv.Close()
			p, err := httpapi.New(httpapi.Config{Name: "mailer", Timeout: 2 * time.Second,
				Env:      func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Sig": "${SIG}"}}})
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			if want := "HTTP 401: bad token <***> sig <***> from r\u00e9gion Ã©t\u00e9"; resp.Detail != want {
				t.Errorf("%q; want %q", resp.Detail, want)
			}
		})
	}
}
