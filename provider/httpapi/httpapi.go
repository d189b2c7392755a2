// Package httpapi is the generic HTTP provider: any API that takes an
// idempotency key. It sends a call's arguments as a JSON body with the
// downstream key in a header, classifies the answer by its status code
// (a documented table with per-provider overrides), and, when a lookup URL
// is configured, asks the API what it holds under a downstream key.
//
// Header values may carry secrets; they are kept in this provider's memory
// only: never in an error, a Detail, the ledger or a log.
package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/provider"
)

// Class is what a status code means for an operation.
type Class string

const (
	// Applied: the effect happened (2xx); the reference comes from the
	// response through RefPointer.
	Applied Class = "applied"
	// Failed: a definite rejection, final: stored and replayed.
	Failed Class = "failed"
	// Retry: not taken now (busy, rate-limited, the same key in flight):
	// retry the same key.
	Retry Class = "retry"
	// NotApplied: the provider guarantees nothing happened.
	NotApplied Class = "not_applied"
	// Unknown: the effect may or may not have happened (a 5xx, a timeout,
	// a connection that broke after the request was written).
	Unknown Class = "unknown"
)

// Classes is every class, in the order the README's table lists them.
var Classes = []Class{Applied, Failed, Retry, NotApplied, Unknown}

// ParseClass reads a class name.
func ParseClass(s string) (Class, error) {
	for _, c := range Classes {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown class %q (want applied, failed, retry, not_applied or unknown)", s)
}

// CheckClass says why a status code may not be classified as cl. The
// classes a code may take follow from what the answer says about the
// request:
//
//   - 2xx: the server took the request and acted on it. applied (the
//     default) or unknown (e.g. 202 Accepted, for an API that may still
//     refuse it later). Not failed, retry or not_applied: each tells the
//     caller nothing happened, and the effect would be sent again (retry
//     and not_applied by retrysafe itself, failed by a caller that fixes
//     the arguments and tries a new key) — a second effect.
//   - 1xx, 408 and 5xx but 503 (default unknown): nothing in these says
//     whether the server acted on the request before it failed or gave
//     up (a 500 after the write committed, a gateway's 502/504 while the
//     backend goes on). unknown only: a person (or a lookup) decides.
//   - 3xx (default unknown; redirects are not followed): unknown, or
//     applied for an API that answers a write with 303 See Other to the
//     created record. Not a class saying nothing happened: a 3xx from a
//     proxy or an API in front of another says nothing about that.
//   - any other 4xx, and 503 (defaults failed or retry; 503 unknown for an
//     API that does not honour keys, see DefaultClass): the server refused
//     the request — or, for a 503, a proxy in front of it answered, which
//     the configuration knows and retrysafe does not; any class (e.g. 409
//     = "failed" for an API whose 409 is a bad template, 503 =
//     "not_applied" for one that documents it).
func CheckClass(code int, cl Class) error {
	if code < 100 || code > 599 {
		return fmt.Errorf("%d is not an HTTP status code", code)
	}
	if _, err := ParseClass(string(cl)); err != nil {
		return err
	}
	var allowed []Class
	var what, why string
	switch {
	case code >= 200 && code <= 299:
		allowed, what, why = []Class{Applied, Unknown}, "a 2xx answer", "the server took the request"
	case code >= 300 && code <= 399:
		allowed, what, why = []Class{Unknown, Applied}, "a 3xx answer", "it says nothing about whether the request was acted on"
	case code >= 100 && code <= 199:
		allowed, what, why = []Class{Unknown}, "a 1xx answer", "it is no final answer"
	case code >= 500 && code != 503:
		allowed, what, why = []Class{Unknown}, "a 5xx answer but 503", "the server may have acted on the request before it failed"
	case code == 408:
		allowed, what, why = []Class{Unknown}, "408", "the server does not say whether it had started on the request"
	default:
		return nil
	}
	for _, a := range allowed {
		if a == cl {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return fmt.Errorf("%s may be classified only as %s, not %q (%s: a class saying nothing was applied could have the effect sent a second time)", what, strings.Join(names, " or "), cl, why)
}

// DefaultClass is the default classification of a status code, for an
// API that honours keys or one that does not.
//
// 503 is retry only for an API that honours keys. A 503 does not always
// come from the API: a proxy in front of it (Envoy, Istio: "upstream
// connect error or disconnect/reset before headers") answers 503 when the
// backend's connection broke — after the request may have reached it. An
// API that honours keys answers the same key sent again with its first
// result, so retrying is safe either way; for one that does not, retry
// would make the operation not_applied and the next call send the effect
// a second time. Unknown, unless its classify says otherwise (503 =
// "not_applied" for an API that documents its 503 as nothing done).
func DefaultClass(status int, honoursKeys bool) Class {
	switch {
	case status >= 200 && status <= 299:
		return Applied
	case status == 503 && !honoursKeys:
		return Unknown
	case status == 409, status == 425, status == 429, status == 503:
		return Retry
	case status == 408:
		// The server gave up waiting for the request; whether it had
		// started on it is not said.
		return Unknown
	case status >= 400 && status <= 499:
		return Failed
	}
	// 1xx, 3xx (redirects are not followed: a write is not re-sent to
	// another address), 5xx: nobody knows.
	return Unknown
}

// Defaults of a provider's limits.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 1 << 20
	DefaultKeyHeader        = "Idempotency-Key"
	// MaxTimeout bounds a provider's timeout: a dispatch's claim is held
	// that long, and a lookup within that long of a request cannot tell
	// (the grace after a request counts it). "100000h" is a typo.
	MaxTimeout = 10 * time.Minute
	// MaxRef bounds a provider's reference read from a response: a
	// reference is stored with the operation, its attempt and its receipt,
	// and replayed to every retry. A longer one is not taken.
	MaxRef = 512
)

// Endpoint is one request template.
type Endpoint struct {
	Method string
	// URL may hold {downstream_key} and, for a dispatch, {NAME} for a
	// top-level argument (a lookup: {provider_ref}); values are escaped
	// where they stand. With Config.Env, ${NAME} in its path or query is
	// read from the environment when a request is made.
	URL string
	// Headers are sent as given — with Config.Env, each ${NAME} read from
	// the environment when a request is made — and are never shown.
	Headers map[string]string
	// RefPointer is a JSON pointer (RFC 6901) to the provider's reference
	// in a 2xx response body ("" = none).
	RefPointer string
	// Found (lookups only) is a JSON pointer that must lead to a value in
	// a 2xx answer for the lookup to say "has it": a search that answers
	// 200 {"data":[]} found nothing. A value is there unless it is null,
	// false, 0, "", [] or {}; nothing there (or an empty value) in a JSON
	// body is "has nothing"; a body that is not JSON, broke off or is over
	// max_response_bytes cannot tell. "" = any 2xx answer is "has it".
	Found string
	// NotFound (lookups only) is a JSON pointer to where the API's own
	// not-found answer says so ("/error/code"): with it, a 404 is "has
	// nothing" only when its body is one JSON value with a value at that
	// pointer (as for Found: not null, false, 0, "", [] or {}) — or, with
	// NotFoundValue, a string or number written exactly NotFoundValue. Any
	// other 404 (HTML, plain text, empty, another code, over
	// max_response_bytes, broke off) cannot tell: a wrong route in the
	// config, or a gateway's or proxy's 404 for a path it does not know,
	// looks just like "no such delivery", and its "has nothing" would let
	// the call be sent again. "" = any 404 is "has nothing".
	NotFound      string
	NotFoundValue string
}

// Config is one HTTP provider.
type Config struct {
	Name        string
	HonoursKeys bool
	// Timeout bounds each request, connection to last byte.
	Timeout time.Duration
	// MaxResponseBytes caps how much of a response is read.
	MaxResponseBytes int64
	// KeyHeader carries the downstream key (default Idempotency-Key).
	KeyHeader string
	Dispatch  Endpoint
	// Lookup, when set, asks what the API holds under a downstream key:
	// 2xx found (with Found: a value at that pointer), 404 not found (with
	// NotFound: only the API's own not-found answer), anything else cannot
	// tell.
	Lookup *Endpoint
	// Classify overrides DefaultClass for exact status codes.
	Classify map[int]Class
	// Env, when set, reads the ${NAME}s of header values and URLs as a
	// request is made (config passes the process's environment): a
	// dispatch needs only the dispatch's variables, a lookup only the
	// lookup's, and a missing one is an error at that use, naming it. Nil:
	// header values are sent as given, and a URL may hold no ${NAME}.
	Env func(string) (string, bool)
	// Transport, when set, replaces the default transport (tests).
	Transport http.RoundTripper
}

// Provider is an HTTP provider.
type Provider struct {
	c      Config
	client *http.Client
	// secrets are the configured header values and their long words,
	// longest first: masked in a response body before it goes into a
	// Detail (an API may echo the credentials it was sent).
	secrets []string
	// ownTransport: the client's transport is net/http's, built here,
	// whose trace says when a connection was had (GotConn) before any
	// byte of a request is written on it; a Config.Transport may not.
	ownTransport bool
}

// minSecret is the shortest word written in the file (a header value's,
// a URL query value's) masked in a response body ("Bearer", "Basic"
// stay). A value read from the environment is masked whatever its length
// (envSecretWords).
const minSecret = 8

// secretWords adds v and its long words to out (see minSecret).
func secretWords(out []string, v string) []string {
	for _, w := range append(strings.Fields(v), strings.TrimSpace(v)) {
		if len(w) >= minSecret {
			out = append(out, w)
		}
	}
	return out
}

// envSecretWords adds v, a value read from the environment, to out: whole
// and whatever its length (a value from the environment is a secret,
// however short: an account id, a region), and its long words. A value
// that is only spaces masks nothing.
func envSecretWords(out []string, v string) []string {
	t := strings.TrimSpace(v)
	if t == "" {
		return out
	}
	out = append(out, t)
	if v != t {
		out = append(out, v)
	}
	return secretWords(out, v)
}

// literalSecrets are what the configuration itself says that may be a
// secret: header values (with Env, their words outside a ${NAME}) and the
// query values of the URLs (an API key written in the URL).
func literalSecrets(env bool, es ...*Endpoint) []string {
	var out []string
	for _, e := range es {
		if e == nil {
			continue
		}
		for _, v := range e.Headers {
			if env {
				v = envRef.ReplaceAllString(v, " ")
			}
			out = secretWords(out, v)
		}
		if i := strings.IndexByte(e.URL, '?'); i >= 0 {
			q := e.URL[i+1:]
			if j := strings.IndexByte(q, '#'); j >= 0 {
				q = q[:j]
			}
			for _, kv := range strings.Split(q, "&") {
				_, v, _ := strings.Cut(kv, "=")
				v = envRef.ReplaceAllString(v, " ")
				for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '{' || r == '}' }) {
					out = secretWords(out, w)
					if u, err := url.QueryUnescape(w); err == nil && u != w {
						out = secretWords(out, u)
					}
				}
			}
		}
	}
	return sortSecrets(out)
}

// sortSecrets deduplicates, longest first (a secret that holds another is
// masked whole).
func sortSecrets(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range in {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// mask replaces every secret in s (p.secrets and the values read from the
// environment for this request) with ***: as written, or as an API echoes
// it escaped, or decoded as Latin-1 (maskSecret).
func (p *Provider) mask(s string, more []string) string { return p.maskCut(s, more, false) }

// maskCut is mask of s, which with cut is a body cut short (at
// max_response_bytes, or broken off): the start of a secret at its end —
// part of the secret, or an escape cut in half — is masked too.
func (p *Provider) maskCut(s string, more []string, cut bool) string {
	var forms, short []string
	for _, w := range append(append([]string(nil), more...), p.secrets...) {
		if len(w) < minAnywhere {
			short = append(short, escapedForms(w)...)
		} else {
			forms = append(forms, escapedForms(w)...)
		}
	}
	forms, short = sortSecrets(forms), sortSecrets(short)
	tail := ""
	for cut {
		// The earliest start of a secret that runs into the end, on the
		// text as it came (no secret masked yet, which would hide
		// another's start): masked, and what is before it is cut short
		// there in turn (a whole secret may have ended past that start).
		at := len(s)
		for _, w := range forms {
			at = min(at, tailStart(s, w, false))
		}
		for _, w := range short {
			at = min(at, tailStart(s, w, true))
		}
		if at == len(s) {
			break
		}
		s, tail = s[:at], "***"
	}
	for _, w := range forms {
		s = maskSecret(s, w, false)
	}
	for _, w := range short {
		s = maskSecret(s, w, true)
	}
	return s + tail
}

// tailStart is where in s a start of w (as maskSecret reads it: escapes,
// mojibake; with whole, not inside a word) runs into the end of s — at
// least one byte of w, or w's first bytes and an escape cut in half —
// else len(s).
func tailStart(s, w string, whole bool) int {
	if w == "" {
		return len(s)
	}
	high := 0
	for high < len(w) && w[high] < utf8.RuneSelf {
		high++
	}
	// A byte of w takes at most 12 bytes of s (mojibake, escaped).
	lo := max(0, len(s)-12*len(w)-12)
	for i := lo; i < len(s); i++ {
		if whole && wordByte(s, i-1) {
			continue
		}
		j, k, at := matchFrom(s, i, 0, w, false, high)
		if k > 0 && k < len(w) && ranOut(s, j) {
			return i
		}
		if k == len(w) || k < high {
			continue
		}
		j, k, _ = matchFrom(s, at, high, w, true, high)
		if k > 0 && k < len(w) && ranOut(s, j) {
			return i
		}
	}
	return len(s)
}

// escapedForms are w and w as one JSON encoder or another writes it inside
// a string (Go's \u003c for <, > and &; PHP's \/ and \u00e9): maskSecret
// reads one level of escapes itself, and these forms the level below — a
// JSON error body carried as a string in another (a proxy's wrapper).
func escapedForms(w string) []string {
	out := []string{w}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(w) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		q = q[1 : len(q)-1]
		out = append(out, q, strings.ReplaceAll(q, "/", `\/`), asciiJSON(q), asciiJSON(strings.ReplaceAll(q, "/", `\/`)))
	}
	return sortSecrets(out)
}

// asciiJSON is q (JSON string content) with every non-ASCII character
// written \uXXXX, as PHP and Python write them.
func asciiJSON(q string) string {
	var b strings.Builder
	for _, r := range q {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

// maskSecret replaces every occurrence of w in s with ***, reading each
// escape in s as the character it stands for — a JSON string's (\/, \",
// \u002B, \u00e9, a surrogate pair, hex in either case) or a URL's (%2F,
// %2f) — in any mix: an API echoes the credentials it was sent escaped as
// its encoder does (PHP: ghp\/AbC…), and the escaped form is as much the
// secret as the raw one. With whole (a value read from the environment
// shorter than minAnywhere, and its escaped forms), w is masked only
// where it stands whole: not inside a longer word or number. A w with
// non-ASCII characters is also masked as mojibake (matchEscaped).
func maskSecret(s, w string, whole bool) string {
	if w == "" {
		return s
	}
	// Where a match may start: w's first byte, an escape, or — w's first
	// byte not ASCII — that byte's mojibake.
	var start [256]bool
	start[w[0]], start['\\'], start['%'] = true, true, true
	if c := w[0]; c >= utf8.RuneSelf {
		start[mojibake[c-0x80][0][0]], start[mojibake[c-0x80][1][0]] = true, true
	}
	high := 0 // w's first non-ASCII byte
	for high < len(w) && w[high] < utf8.RuneSelf {
		high++
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !start[s[i]] {
			i++
			continue
		}
		j, ok := matchEscaped(s, i, w, high)
		if ok && whole && (wordByte(s, i-1) || wordByte(s, j)) {
			ok = false
		}
		if !ok {
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString("***")
		i, last = j, j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// minAnywhere is the shortest value read from the environment masked
// wherever it stands; a shorter one ("42", "eu") only where it stands
// whole (masking every "e" would leave no error to read). A URL's
// ${NAME} is masked where it stands however short (expand's shown URL).
const minAnywhere = 3

// wordByte reports whether s[i] is a letter or digit (out of range: no).
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// matchEscaped reports whether s from i holds w, with escapes read as
// what they stand for, and where that ends: w as written, or — past its
// first non-ASCII byte, w[high] — as mojibake (an API that read the UTF-8
// bytes it was sent as Latin-1 or Windows-1252 echoes "é", C3 A9, as
// "Ã©"), every non-ASCII byte of w as the character that encoding reads
// it as, itself written in UTF-8 or escaped. The two readings agree on
// w's ASCII start: one that fails there fails both ways, and mojibake is
// read only where w as written failed past it.
func matchEscaped(s string, i int, w string, high int) (int, bool) {
	j, k, at := matchFrom(s, i, 0, w, false, high)
	if k == len(w) {
		return j, true
	}
	if k < high {
		return 0, false
	}
	// w[:high] is ASCII and read alike both ways: go on from where it
	// ended (at), reading the rest as mojibake.
	j, k, _ = matchFrom(s, at, high, w, true, high)
	return j, k == len(w)
}

// ranOut: s ends at j, or from j with an escape cut in half (\, \u00,
// a high surrogate without its pair yet, %2).
func ranOut(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	t := s[j:]
	switch t[0] {
	case '%':
		return len(t) < 3 && allHex(t[1:])
	case '\\':
		if len(t) == 1 {
			return true
		}
		if t[1] != 'u' {
			return false
		}
		if len(t) < 6 {
			return allHex(t[2:])
		}
		if len(t) >= 12 || !allHex(t[2:6]) {
			return false
		}
		v, _ := hexN(t[2:6])
		rest := t[6:]
		return utf16.IsSurrogate(rune(v)) && (rest == "" || rest == "\\" || strings.HasPrefix(rest, "\\u") && allHex(rest[2:]))
	}
	return false
}

func allHex(s string) bool {
	_, ok := hexN(s)
	return ok
}

// matchFrom reads w from w[k] in s from j, escapes read as what they
// stand for (with moji, each non-ASCII byte of w as its mojibake): where
// it got to in s and in w (k == len(w): all of w), and where in s it was
// when it got to w[high] (each byte before it ASCII, read one at a time).
func matchFrom(s string, j, k int, w string, moji bool, high int) (int, int, int) {
	at := j
	var buf [utf8.UTFMax]byte
	for k < len(w) {
		if k == high {
			at = j
		}
		if moji && w[k] >= utf8.RuneSelf {
			m := &mojibake[w[k]-0x80]
			if j >= len(s) {
				return j, k, at
			}
			if c := s[j]; c != m[0][0] && c != m[1][0] && c != '\\' && c != '%' {
				return j, k, at
			}
			e, n, _ := matchFrom(s, j, 0, m[0], false, -1)
			if n == len(m[0]) {
				j, k = e, k+1
				continue
			}
			if m[1] != m[0] {
				e1, n1, _ := matchFrom(s, j, 0, m[1], false, -1)
				if n1 == len(m[1]) {
					j, k = e1, k+1
					continue
				}
				if ranOut(s, e1) {
					return len(s), k, at // w's mojibake, cut short
				}
			}
			if ranOut(s, e) {
				return len(s), k, at
			}
			return j, k, at
		}
		if j >= len(s) {
			return j, k, at
		}
		if c := s[j]; c == '\\' || c == '%' {
			if n, m := unescapeAt(s[j:], &buf); n > 0 && strings.HasPrefix(w[k:], string(buf[:m])) {
				j, k = j+n, k+m
				continue
			}
		}
		if s[j] != w[k] {
			return j, k, at
		}
		j, k = j+1, k+1
	}
	return j, k, at
}

// mojibake is, for each byte 0x80–0xFF, the UTF-8 of the character
// Latin-1 reads it as, and of the one Windows-1252 reads it as (they
// differ for 0x80–0x9F; the five bytes Windows-1252 leaves undefined read
// as in Latin-1, as the WHATWG decoder — every browser's — reads them).
var mojibake = func() (t [128][2]string) {
	cp1252 := []rune("€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ")
	for c := 0x80; c <= 0xff; c++ {
		r := rune(c)
		t[c-0x80][0] = string(r)
		if c <= 0x9f {
			r = cp1252[c-0x80]
		}
		t[c-0x80][1] = string(r)
	}
	return t
}()

// unescapeAt reads the escape s starts with into buf: its length in s
// (0: none) and the length of what it stands for in buf.
func unescapeAt(s string, buf *[utf8.UTFMax]byte) (int, int) {
	if s[0] == '%' {
		if len(s) >= 3 {
			if v, ok := hexN(s[1:3]); ok {
				buf[0] = byte(v)
				return 3, 1
			}
		}
		return 0, 0
	}
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	var r rune
	n := 2
	switch s[1] {
	case '"', '\\', '/':
		r = rune(s[1])
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		if len(s) < 6 {
			return 0, 0
		}
		v, ok := hexN(s[2:6])
		if !ok {
			return 0, 0
		}
		r, n = rune(v), 6
		if utf16.IsSurrogate(r) {
			if len(s) < 12 || s[6] != '\\' || s[7] != 'u' {
				return 0, 0
			}
			v2, ok := hexN(s[8:12])
			if !ok {
				return 0, 0
			}
			if r = utf16.DecodeRune(r, rune(v2)); r == utf8.RuneError {
				return 0, 0
			}
			n = 12
		}
	default:
		return 0, 0
	}
	return n, utf8.EncodeRune(buf[:], r)
}

// hexN reads hex digits (either case).
func hexN(s string) (uint32, bool) {
	var v uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

// snippet is a response body's start for a Detail, with every configured
// header value, URL query value and value read from the environment
// masked.
func (p *Provider) snippet(b []byte, more []string, cut bool) string {
	if cut {
		// A character cut in half at the end is no binary body.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	if utf8.Valid(b) {
		b = []byte(p.maskCut(string(b), more, cut))
	}
	return snippet(b)
}

// New checks c and returns the provider. It opens nothing.
func New(c Config) (*Provider, error) {
	if c.Name == "" {
		return nil, errors.New("a provider name is required")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < 0 {
		return nil, errors.New("timeout must be positive")
	}
	if c.Timeout > MaxTimeout {
		return nil, fmt.Errorf("timeout %v is longer than %v", c.Timeout, MaxTimeout)
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxResponseBytes < 0 {
		return nil, errors.New("max_response_bytes must be positive")
	}
	if c.KeyHeader == "" {
		c.KeyHeader = DefaultKeyHeader
	}
	if field, err := checkEndpoint(&c.Dispatch, "POST", true, c.Env != nil); err != nil {
		return nil, &EndpointError{Endpoint: "dispatch", Field: field, Err: err}
	}
	if err := CheckKeyHeader(c.KeyHeader, c.Dispatch.Headers); err != nil {
		return nil, &EndpointError{Endpoint: "dispatch", Field: "key_header", Err: err}
	}
	if k, err := CheckHeaders(c.Dispatch.Headers, c.KeyHeader); err != nil {
		return nil, &EndpointError{Endpoint: "dispatch", Field: "headers." + k, Err: err}
	}
	if c.Lookup != nil {
		if field, err := checkEndpoint(c.Lookup, "GET", false, c.Env != nil); err != nil {
			return nil, &EndpointError{Endpoint: "lookup", Field: field, Err: err}
		}
		if k, err := CheckHeaders(c.Lookup.Headers, ""); err != nil {
			return nil, &EndpointError{Endpoint: "lookup", Field: "headers." + k, Err: err}
		}
	}
	codes := make([]int, 0, len(c.Classify))
	for code := range c.Classify {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	for _, code := range codes {
		if err := CheckClass(code, c.Classify[code]); err != nil {
			return nil, fmt.Errorf("classify %d: %w", code, err)
		}
	}
	tr := c.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   c.Timeout,
			ResponseHeaderTimeout: c.Timeout,
		}
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   c.Timeout,
		// A write is never re-sent to another address behind our back.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Provider{c: c, client: client, secrets: literalSecrets(c.Env != nil, &c.Dispatch, c.Lookup), ownTransport: c.Transport == nil}, nil
}

// checkEndpoint says what is wrong with e, and in which of its fields.
func checkEndpoint(e *Endpoint, method string, dispatch, env bool) (string, error) {
	if e.Method == "" {
		e.Method = method
	}
	e.Method = strings.ToUpper(e.Method)
	switch e.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
	default:
		return "method", fmt.Errorf("method %q is not one of GET, POST, PUT, PATCH, DELETE", e.Method)
	}
	names, err := templateNames(e.URL)
	if err != nil {
		return "url", err
	}
	// The scheme and authority (user information, host, port) are the
	// config's own: a placeholder there would let a call's arguments (an
	// agent's, through the gateway) — or a lookup's key or reference —
	// choose where the request and its headers' secrets go.
	if strings.Contains(envRef.ReplaceAllString(e.URL[:authorityEnd(e.URL)], ""), "{") {
		return "url", errors.New("url: a {placeholder} may stand only in the URL's path or query, not in its scheme or host: the arguments of a call would choose where the request and its headers go")
	}
	probe := envRef.ReplaceAllString(e.URL, "x")
	for _, n := range names {
		if !dispatch && n != "downstream_key" && n != "provider_ref" {
			return "url", fmt.Errorf("url: {%s}: a lookup URL knows only {downstream_key} and {provider_ref}", n)
		}
		probe = strings.ReplaceAll(probe, "{"+n+"}", "x")
	}
	u, err := url.Parse(probe)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return "url", fmt.Errorf("url: %v", err)
	}
	// Neither message repeats the URL: it may hold credentials.
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "url", errors.New("url must be an absolute http:// or https:// URL (e.g. https://api.example.com/v1/send)")
	}
	// Credentials in the URL are a secret in the config file, which never
	// holds one, and Go sends them as Basic authentication that no mask
	// covers (an API that echoes its Authorization header would have them
	// stored in the operation's detail).
	if u.User != nil {
		return "url", errors.New("url holds credentials (user:password@): put them in a header from the environment instead, e.g. headers = { Authorization = \"Basic ${API_BASIC}\" }")
	}
	if strings.Contains(e.URL, "${") {
		if !env {
			return "url", errors.New("url holds a ${NAME}, and this provider reads no environment")
		}
		// The scheme and host are the config's own: a variable there
		// would send the request (and its headers' secrets) wherever the
		// environment says.
		if i := strings.Index(e.URL, "${"); i < authorityEnd(e.URL) {
			return "url", errors.New("url: a ${NAME} may stand only in the URL's path or query, not in its scheme or host")
		}
	}
	// A lookup asks about one operation: a URL without its key or its
	// reference (or with them only in the fragment, which is never sent)
	// asks about nothing, and its "has nothing" would say this request
	// never arrived — and the next call would send it again.
	if !dispatch {
		sent, _, _ := strings.Cut(e.URL, "#")
		if !strings.Contains(sent, "{downstream_key}") && !strings.Contains(sent, "{provider_ref}") {
			return "url", errors.New("url must name {downstream_key} or {provider_ref} (in its path or query): a lookup that asks about no operation in particular would answer for every one")
		}
	}
	if e.RefPointer != "" && !strings.HasPrefix(e.RefPointer, "/") {
		return "ref_pointer", fmt.Errorf("ref_pointer %q must be a JSON pointer starting with /", e.RefPointer)
	}
	if e.Found != "" {
		if dispatch {
			return "found", errors.New("found belongs in [providers.lookup]")
		}
		if err := CheckPointer(e.Found); err != nil {
			return "found", fmt.Errorf("found: %w", err)
		}
	}
	if e.NotFound != "" {
		if dispatch {
			return "not_found", errors.New("not_found belongs in [providers.lookup]")
		}
		if err := CheckPointer(e.NotFound); err != nil {
			return "not_found", fmt.Errorf("not_found: %w", err)
		}
	}
	if e.NotFoundValue != "" {
		if dispatch {
			return "not_found_value", errors.New("not_found_value belongs in [providers.lookup]")
		}
		if e.NotFound == "" {
			return "not_found_value", errors.New("not_found_value needs not_found (the JSON pointer to the API's not-found code)")
		}
	}
	for k, v := range e.Headers {
		if !validHeaderName(k) {
			return "headers." + k, fmt.Errorf("header name %q is not valid", k)
		}
		if env {
			if err := CheckEnvRefs(v); err != nil {
				return "headers." + k, fmt.Errorf("header %s: %v", k, err)
			}
		}
		if err := CheckHeaderValue(v); err != nil {
			return "headers." + k, fmt.Errorf("header %s %v", k, err)
		}
	}
	return "", nil
}

// CheckHeaderValue says why v cannot be a header value as written: a line
// break, or another control character (a tab is allowed). net/http sends
// no request with such a value. The message names no part of v.
func CheckHeaderValue(v string) error {
	if strings.ContainsAny(v, "\r\n") {
		return errors.New("holds a line break")
	}
	if !validHeaderValue(v) {
		return errors.New("holds a control character (other than a tab): net/http sends no request with one")
	}
	return nil
}

// validHeaderValue: no control character but a tab (RFC 9110 5.5: what
// net/http sends).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// authorityEnd is where a URL's scheme and host end.
func authorityEnd(u string) int {
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + 3
	}
	if j := strings.IndexAny(u[start:], "/?#"); j >= 0 {
		return start + j
	}
	return len(u)
}

// envRef is a ${NAME}: a value read from the environment (Config.Env).
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// envName is the NAME of a ${NAME}.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnvRefs says why s holds a malformed ${…}.
func CheckEnvRefs(s string) error {
	if strings.Contains(envRef.ReplaceAllString(s, ""), "${") {
		return errors.New("a secret reference is written ${NAME} (letters, digits, _)")
	}
	return nil
}

// EnvNames lists the variables s's ${NAME}s read.
func EnvNames(s string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// EnvError is a ${NAME} whose variable is not set (or empty) when a
// request needs it, or — Why set — whose value cannot be sent there.
type EnvError struct {
	Where, Name string
	// Why is what is wrong with the value ("" = not set); it never
	// repeats the value.
	Why string
}

func (e *EnvError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%s reads $%s, which %s", e.Where, e.Name, e.Why)
	}
	return fmt.Sprintf("%s needs $%s, which is not set", e.Where, e.Name)
}

// resolveHeaders is e's headers as this request sends them, with the
// values read from the environment (to mask).
func (p *Provider) resolveHeaders(e *Endpoint) (map[string]string, []string, error) {
	if p.c.Env == nil {
		return e.Headers, nil, nil
	}
	out := make(map[string]string, len(e.Headers))
	var read []string
	names := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var bad *EnvError
		v := envRef.ReplaceAllStringFunc(e.Headers[k], func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			val, ok := p.c.Env(name)
			if bad == nil {
				bad = badEnvValue("header "+k, name, val, ok)
			}
			read = envSecretWords(read, val)
			read = envSecretWords(read, url.QueryEscape(val))
			return val
		})
		if bad != nil {
			return nil, read, bad
		}
		out[k] = v
	}
	return out, read, nil
}

// badEnvValue says why val, variable name's value (ok: set), cannot go in
// a header value (where): not set, or empty, or a control character in
// it (net/http would send no request). Nil when it can.
func badEnvValue(where, name, val string, ok bool) *EnvError {
	if !ok || val == "" {
		return &EnvError{Where: where, Name: name}
	}
	if err := CheckHeaderValue(val); err != nil {
		return &EnvError{Where: where, Name: name, Why: err.Error()}
	}
	return nil
}

// validHeaderName: a token (RFC 9110 5.1, 5.6.2).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// clientHeaders are written by net/http from the request itself (a value
// in the header map is dropped or replaced) or belong to one connection
// (hop-by-hop: a proxy strips them, HTTP/2 refuses them); Accept-Encoding
// is the client's transparent decompression.
var clientHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Trailer": true,
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Upgrade": true, "Te": true,
	"Accept-Encoding": true,
}

// CheckKeyHeader says why name cannot carry the downstream key: the key
// must reach the provider as sent, alone in its header. A key the client
// drops (Host) never arrives, yet an API that honours keys would have its
// lost reply re-sent "safely" — a second effect; a key in a header the
// configuration also sets (Authorization) replaces it, or is replaced.
func CheckKeyHeader(name string, headers map[string]string) error {
	if name == "" {
		return nil
	}
	if !validHeaderName(name) {
		return fmt.Errorf("key_header %q is not a valid header name", name)
	}
	c := http.CanonicalHeaderKey(name)
	switch {
	case clientHeaders[c]:
		return fmt.Errorf("key_header %q is set by the HTTP client itself (or belongs to one connection): the key would never reach the provider", name)
	case c == "Content-Type" || c == "Accept":
		return fmt.Errorf("key_header %q is set by retrysafe (the body is JSON, and so is the answer it reads): the key needs a header of its own", name)
	}
	for k := range headers {
		if http.CanonicalHeaderKey(k) == c {
			return fmt.Errorf("key_header %q is also in [providers.dispatch] headers (%s): one would replace the other — the key needs a header of its own", name, k)
		}
	}
	return nil
}

// CheckHeaders says which of headers (its name as written) is wrong, and
// why: a header the client writes itself, one the downstream key goes in
// (keyHeader; "" for a lookup, which sends none), or a name given twice in
// different cases (header names are case-insensitive: one would replace
// the other).
func CheckHeaders(headers map[string]string, keyHeader string) (string, error) {
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	seen := map[string]string{}
	key := ""
	if keyHeader != "" {
		key = http.CanonicalHeaderKey(keyHeader)
	}
	for _, k := range names {
		if !validHeaderName(k) {
			return k, fmt.Errorf("header name %q is not valid", k)
		}
		c := http.CanonicalHeaderKey(k)
		if first, ok := seen[c]; ok {
			return k, fmt.Errorf("headers %s and %s are the same header (names are case-insensitive): one would replace the other", first, k)
		}
		seen[c] = k
		if clientHeaders[c] {
			return k, fmt.Errorf("header %q is set by the HTTP client itself (or belongs to one connection): the value would be dropped or break the request", k)
		}
		if key != "" && c == key {
			return k, fmt.Errorf("header %q is key_header: retrysafe sets it to each call's downstream key", k)
		}
	}
	return "", nil
}

// CheckPointer says why ptr is not a JSON pointer (RFC 6901) to a value
// inside a document: it starts with "/", and every "~" is "~0" or "~1".
func CheckPointer(ptr string) error {
	if !strings.HasPrefix(ptr, "/") {
		return fmt.Errorf("%q is not a JSON pointer: it must start with / (e.g. \"/data/0\")", ptr)
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || ptr[i+1] != '0' && ptr[i+1] != '1') {
			return fmt.Errorf("%q is not a JSON pointer: ~ must be written ~0, and / inside a name ~1", ptr)
		}
	}
	return nil
}

// TemplateNames lists the {names} a URL template uses, or says why it is
// malformed (without repeating the template: a URL may hold credentials).
func TemplateNames(tmpl string) ([]string, error) { return templateNames(tmpl) }

func templateNames(tmpl string) ([]string, error) {
	var names []string
	rest := tmpl
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			return names, nil
		}
		if rest[i] == '}' {
			return nil, errors.New("url: unmatched }")
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, errors.New("url: unclosed {")
		}
		name := rest[i+1 : i+j]
		if i > 0 && rest[i-1] == '$' {
			// ${NAME}: the environment's (Config.Env), not a placeholder.
			if !envName.MatchString(name) {
				return nil, errors.New("url: a ${NAME} (read from the environment) is written with letters, digits and _")
			}
			rest = rest[i+j+1:]
			continue
		}
		if name == "" || strings.ContainsAny(name, "{ /") {
			return nil, fmt.Errorf("url: bad placeholder {%s}", name)
		}
		names = append(names, name)
		rest = rest[i+j+1:]
	}
}

// The reconcile rules ask through provider.LookupFor, which gives an HTTP
// provider the operation's recorded reference too.
var _ provider.QueryLooker = (*Provider)(nil)

// Name is the provider's name.
func (p *Provider) Name() string { return p.c.Name }

// HonoursKeys reports whether the API is declared to answer a repeated
// downstream key with its first result.
func (p *Provider) HonoursKeys() bool { return p.c.HonoursKeys }

// RequestTimeout is reconcile.RequestTimeouter: how long the client waits
// for one request (its configured timeout). The server may still apply a
// request after that; reconcile's grace after a request counts it.
func (p *Provider) RequestTimeout() time.Duration { return p.c.Timeout }

// Identity is provider.Identifier: where its dispatches and lookups go —
// method, scheme, host and the URL template after the host, and the
// headers, as configured (a ${NAME} stays a name: its value is the
// environment's), and the dispatch's key header. A ledger records it with
// each claim.
func (p *Provider) Identity() provider.Identity {
	id := provider.Identity{Dispatch: target(&p.c.Dispatch)}
	id.Dispatch.KeyHeader = p.c.KeyHeader
	if p.c.Lookup != nil {
		l := target(p.c.Lookup)
		id.Lookup = &l
	}
	return id
}

// target is where e's requests go; New checked that its URL is an
// absolute http(s) URL with its scheme and host written out.
func target(e *Endpoint) provider.Target {
	scheme, _, _ := strings.Cut(e.URL, "://")
	end, host := authorityEnd(e.URL), ""
	if start := len(scheme) + len("://"); end >= start {
		host = e.URL[start:end]
	}
	headers := make(map[string]string, len(e.Headers))
	for k, v := range e.Headers {
		headers[k] = v // as written: a ${NAME} stays a name
	}
	return provider.Target{Kind: "http", Method: e.Method, Scheme: scheme, Host: host, URL: e.URL[end:], Headers: headers}
}

// Classify returns the class of a status code: the override if declared,
// else DefaultClass for whether this API honours keys.
func (p *Provider) Classify(status int) Class {
	if c, ok := p.c.Classify[status]; ok {
		return c
	}
	return DefaultClass(status, p.c.HonoursKeys)
}

// expand fills a URL template: {downstream_key}, a lookup's
// {provider_ref} (ref; only lookups pass one), an argument, or a ${NAME}
// from env. A value is one value where it stands: query-escaped after the
// "?" (path escaping keeps & and =, and a value could add parameters of
// its own), one path segment before it — and never "", "." or "..", which
// a server that cleans the path would read as another endpoint. read are
// the values read from the environment (to mask); a variable not set is
// an *EnvError.
func expand(tmpl, downstreamKey, ref string, args map[string]any, env func(string) (string, bool)) (reqURL, []string, error) {
	if _, err := templateNames(tmpl); err != nil {
		return reqURL{}, nil, err
	}
	query := strings.IndexByte(tmpl, '?')
	var out, shown strings.Builder
	var read []string
	rest, at := tmpl, 0
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			out.WriteString(rest)
			shown.WriteString(rest)
			return reqURL{url: out.String(), shown: shown.String()}, read, nil
		}
		j := strings.IndexByte(rest[i:], '}') // templateNames checked it
		n := rest[i+1 : i+j]
		isEnv := i > 0 && rest[i-1] == '$'
		lit := rest[:i]
		if isEnv {
			lit = rest[:i-1]
		}
		out.WriteString(lit)
		shown.WriteString(lit)
		var v string
		switch {
		case isEnv:
			var ok bool
			if env != nil {
				v, ok = env(n)
			}
			if !ok || v == "" {
				return reqURL{}, read, &EnvError{Where: "the URL", Name: n}
			}
			read = envSecretWords(read, v)
			read = envSecretWords(read, url.QueryEscape(v))
			read = envSecretWords(read, url.PathEscape(v))
		case n == "downstream_key":
			v = downstreamKey
		case n == "provider_ref" && args == nil:
			v = ref
		default:
			a, ok := args[n]
			if !ok {
				return reqURL{}, read, fmt.Errorf("the URL needs argument %q, which this call does not have", n)
			}
			switch x := a.(type) {
			case string:
				v = x
			case json.Number:
				v = x.String()
			case bool:
				v = strconv.FormatBool(x)
			default:
				return reqURL{}, read, fmt.Errorf("argument %q is not a string, number or boolean and cannot go in the URL", n)
			}
		}
		var esc string
		if query >= 0 && at+i > query {
			esc = url.QueryEscape(v)
		} else {
			if v == "" || v == "." || v == ".." {
				return reqURL{}, read, fmt.Errorf("{%s} is %q, which cannot be a segment of the URL's path (a server would read another path)", n, v)
			}
			esc = url.PathEscape(v)
		}
		out.WriteString(esc)
		if isEnv {
			// However short: where it stands, it is the secret.
			shown.WriteString("***")
		} else {
			shown.WriteString(esc)
		}
		rest, at = rest[i+j+1:], at+i+j+1
	}
}

// reqURL is a request's URL, and the URL an error names for it: each
// value read from the environment written *** where it stands.
type reqURL struct{ url, shown string }

// exchange is one request's outcome at the transport level.
type exchange struct {
	status   int
	header   http.Header
	body     []byte
	overCap  bool
	bodyErr  error
	sentNone bool // the request failed before a byte of it was written
}

func (p *Provider) do(ctx context.Context, e *Endpoint, headers map[string]string, t reqURL, body []byte, key string, secrets []string) (*exchange, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	caller, own := ctx, time.Now().Add(p.c.Timeout)
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	// The transport writes from its own goroutine. connected: a
	// connection was had for the request (dialled, its TLS handshake
	// done), on which it may have been written.
	var wrote, connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:          func(httptrace.GotConnInfo) { connected.Store(true) },
		WroteHeaderField: func(string, []string) { wrote.Store(true) },
	})
	req, err := http.NewRequestWithContext(ctx, e.Method, t.url, rd)
	if err != nil {
		return &exchange{sentNone: true}, fmt.Errorf("cannot build the request: %s", p.mask(redactErr(err, t.shown), secrets))
	}
	if body != nil && !p.c.HonoursKeys {
		// A dispatch to an API that does not honour keys is sent once.
		// net/http re-sends a request whose body it can rewind on a fresh
		// connection when a reused one breaks — even after the request was
		// written, when it carries an Idempotency-Key header: a second
		// effect, reported as the first one's answer. Without GetBody it
		// never re-sends; a broken connection is this dispatch's outcome
		// (unknown, unless nothing was sent). An API that honours keys
		// answers the same key sent again with its first result: that
		// re-send is safe, and spares an unknown when a keep-alive
		// connection closes as the request goes out.
		req.GetBody = nil
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	// The configured headers come after the defaults: an API that wants
	// Accept: application/vnd.api+json is sent that. None of them is the
	// key header (CheckHeaders), which comes last.
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if key != "" {
		req.Header.Set(p.c.KeyHeader, key)
	}
	// net/http refuses a header value with a control character before it
	// dials: nothing is sent, which is said so (never "unknown").
	for k, vs := range req.Header {
		for _, v := range vs {
			if err := CheckHeaderValue(v); err != nil {
				return &exchange{sentNone: true}, fmt.Errorf("%s %s: header %s %v", e.Method, p.mask(redactURL(t.shown), secrets), k, err)
			}
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		cut := p.cutShort(caller, own)
		if p.ownTransport && !connected.Load() && !wrote.Load() {
			// No connection was ever had — the dial or the TLS handshake
			// did not complete (a server that accepts and never answers
			// the handshake), in time or at all: not a byte of the
			// request was written.
			var ue *url.Error
			if cut == "" && errors.As(err, &ue) && ue.Timeout() {
				return &exchange{sentNone: true}, fmt.Errorf("%s %s: no connection within the timeout (provider %s's, %v): the connection or its TLS handshake was not completed",
					ue.Op, p.mask(redactURL(t.shown), secrets), p.c.Name, p.c.Timeout)
			}
			return &exchange{sentNone: true}, errors.New(p.transportError(err, t.shown, cut, secrets))
		}
		return &exchange{sentNone: !wrote.Load() && refusedBeforeSending(err)}, errors.New(p.transportError(err, t.shown, cut, secrets))
	}
	defer resp.Body.Close()
	x := &exchange{status: resp.StatusCode, header: resp.Header}
	x.body, x.bodyErr = io.ReadAll(io.LimitReader(resp.Body, p.c.MaxResponseBytes+1))
	if int64(len(x.body)) > p.c.MaxResponseBytes {
		x.body, x.overCap = x.body[:p.c.MaxResponseBytes], true
	}
	return x, nil
}

// refusedBeforeSending: the connection was never made (refused, no route,
// no such host), or its TLS handshake failed (a certificate nobody vouches
// for, an alert, a server that answers TLS with plain HTTP), so no byte of
// the request left this process.
func refusedBeforeSending(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var cert *tls.CertificateVerificationError
	var alert tls.AlertError
	var record tls.RecordHeaderError
	if errors.As(err, &cert) || errors.As(err, &alert) || errors.As(err, &record) || errors.Is(err, http.ErrSchemeMismatch) {
		return true
	}
	var dns *net.DNSError
	// net/http checks the header fields before it dials.
	if strings.Contains(err.Error(), "net/http: invalid header field") {
		return true
	}
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// cutShort says why a request ended early, when its caller's context
// ended it (a call's deadline — --timeout, a lease — before own, this
// provider's timeout; a cancel); "" when it did not. A deadline the
// caller set to this provider's timeout (reconcile's, set a moment
// before own) is the provider's.
func (p *Provider) cutShort(caller context.Context, own time.Time) string {
	err := caller.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		if dl, ok := caller.Deadline(); ok && dl.Before(own.Add(-p.c.Timeout/20)) {
			return fmt.Sprintf("no answer before the call's own deadline ran out (its --timeout or lease), sooner than provider %s's %v timeout", p.c.Name, p.c.Timeout)
		}
		return ""
	}
	if err != nil {
		return "the call was cancelled before an answer came"
	}
	return ""
}

// transportError describes a failed exchange without the request's
// headers, and names its URL as shown (each value read from the
// environment ***) without a query value or credentials (redactURL): the
// text is stored with the attempt and shown to whoever reads the
// operation; secrets (and p.secrets) are masked in what the exchange
// said. cut, when the caller's context ended the request, says so: "no
// answer within the timeout" alone reads as the provider's.
func (p *Provider) transportError(err error, shown, cut string, secrets []string) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return p.mask(err.Error(), secrets)
	}
	u := p.mask(redactURL(shown), secrets)
	switch {
	case cut != "":
		return fmt.Sprintf("%s %s: %s", ue.Op, u, cut)
	case ue.Timeout():
		return fmt.Sprintf("%s %s: no answer within the timeout (provider %s's, %v)", ue.Op, u, p.c.Name, p.c.Timeout)
	}
	return fmt.Sprintf("%s %s: %s", ue.Op, u, p.mask(redactErr(ue.Err, ""), secrets))
}

// redactErr is err's text with the URL it carries redacted: shown, the
// request's own as an error may name it, when it is the request's (""
// for a URL of its own).
func redactErr(err error, shown string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		u := ue.URL
		if shown != "" {
			u = shown
		}
		return fmt.Sprintf("%s %s: %s", ue.Op, redactURL(u), redactErr(ue.Err, ""))
	}
	return err.Error()
}

// redactURL is a URL with every query value masked (an API key written in
// it, or read from the environment) and no user information; the
// parameters' names stay, to tell which URL it was.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i] + "?…"
		}
		if i := strings.Index(raw, "@"); i >= 0 {
			raw = "…" + raw[i:]
		}
		return raw
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, kv := range parts {
			k, _, hasValue := strings.Cut(kv, "=")
			if hasValue {
				parts[i] = k + "=***"
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}

var _ provider.Checker = (*Provider)(nil)

// CanDispatch is provider.Checker: the first ${NAME} the dispatch reads
// (its URL's, its headers') that is not set now, nil if none. It reads
// what Dispatch reads and shows no value.
func (p *Provider) CanDispatch() error {
	if unset := UnsetEnv(&p.c.Dispatch, "dispatch", p.c.Env); len(unset) > 0 {
		return unset[0]
	}
	// A value no header may carry: net/http would send nothing, and the
	// claim would only record "not sent".
	if p.c.Env != nil {
		keys := make([]string, 0, len(p.c.Dispatch.Headers))
		for k := range p.c.Dispatch.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, n := range EnvNames(p.c.Dispatch.Headers[k]) {
				v, ok := p.c.Env(n)
				if bad := badEnvValue("dispatch header "+k, n, v, ok); bad != nil {
					return bad
				}
			}
		}
	}
	return nil
}

// UnsetEnv is every ${NAME} endpoint e (of which: "dispatch", "lookup")
// reads — its URL's first, then its headers' in name order, each once —
// that env does not have or has empty, with where it is read. Nil env
// reads nothing (a provider without ${NAME}s).
func UnsetEnv(e *Endpoint, which string, env func(string) (string, bool)) []*EnvError {
	if e == nil || env == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []*EnvError
	add := func(at, s string) {
		for _, n := range EnvNames(s) {
			if seen[n] {
				continue
			}
			seen[n] = true
			if v, ok := env(n); !ok || v == "" {
				out = append(out, &EnvError{Where: at, Name: n})
			}
		}
	}
	add(which+" url", e.URL)
	keys := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(which+" header "+k, e.Headers[k])
	}
	return out
}

// Dispatch sends the call. See the package documentation for the table.
func (p *Provider) Dispatch(ctx context.Context, req provider.Request) (provider.Response, error) {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(req.Args))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return provider.Response{Status: provider.Rejected, Detail: "arguments are not a JSON object: " + err.Error()}, nil
	}
	if args == nil {
		args = map[string]any{} // JSON null: no arguments, never a lookup's {provider_ref}
	}
	headers, secrets, err := p.resolveHeaders(&p.c.Dispatch)
	if err != nil {
		// Nothing was sent; once the variable is set the same key may be.
		return provider.Response{Status: provider.NotApplied, Detail: fmt.Sprintf("not sent: provider %s: %s", p.c.Name, p.mask(err.Error(), secrets))}, nil
	}
	target, read, err := expand(p.c.Dispatch.URL, req.DownstreamKey, "", args, p.c.Env)
	secrets = append(secrets, read...)
	var envErr *EnvError
	if errors.As(err, &envErr) {
		return provider.Response{Status: provider.NotApplied, Detail: fmt.Sprintf("not sent: provider %s: %v", p.c.Name, envErr)}, nil
	}
	if err != nil {
		// Nothing was sent, and the same arguments can never be sent:
		// a final failure.
		return provider.Response{Status: provider.Rejected, Detail: "not sent: " + err.Error()}, nil
	}
	x, err := p.do(ctx, &p.c.Dispatch, headers, target, req.Args, req.DownstreamKey, secrets)
	if err != nil {
		if x.sentNone {
			return provider.Response{Status: provider.NotApplied, Detail: "not sent: " + err.Error()}, nil
		}
		return provider.Response{}, provider.Ambiguous("%v", err)
	}
	detail := fmt.Sprintf("HTTP %d", x.status)
	if p.Classify(x.status) != Applied {
		if s := p.snippet(x.body, secrets, x.overCap || x.bodyErr != nil); s != "" {
			detail += ": " + s
		}
	}
	switch p.Classify(x.status) {
	case Applied:
		ref, why := p.reference(x, p.c.Dispatch.RefPointer, secrets)
		if why != "" {
			detail += " (" + why + ")"
		}
		return provider.Response{Status: provider.Applied, Ref: ref, Detail: detail}, nil
	case Failed:
		return provider.Response{Status: provider.Rejected, Detail: detail}, nil
	case Retry:
		wait, note := retryAfter(x.header.Get("Retry-After"), time.Now())
		if note != "" {
			detail += " (" + note + ")"
		}
		return provider.Response{Status: provider.Busy, Detail: detail, RetryAfter: wait}, nil
	case NotApplied:
		return provider.Response{Status: provider.NotApplied, Detail: detail}, nil
	}
	return provider.Response{}, provider.Ambiguous("%s", detail)
}

// Lookup asks the API what it holds under a downstream key: 2xx found
// (with Endpoint.Found, only when a value is at that pointer), 404 not
// found (with Endpoint.NotFound, only the API's own not-found answer: any
// other 404 cannot tell), anything else (or no lookup configured) cannot
// tell — an error, never evidence. A lookup URL that needs {provider_ref}
// cannot tell from a downstream key alone: see LookupQuery.
func (p *Provider) Lookup(ctx context.Context, downstreamKey string) (provider.Evidence, error) {
	return p.LookupQuery(ctx, provider.Query{DownstreamKey: downstreamKey})
}

// NeedsRef reports whether the lookup URL names {provider_ref}: such a
// lookup can ask only about an operation with a recorded reference.
func (p *Provider) NeedsRef() bool {
	if p.c.Lookup == nil {
		return false
	}
	names, _ := templateNames(p.c.Lookup.URL)
	for _, n := range names {
		if n == "provider_ref" {
			return true
		}
	}
	return false
}

// LookupQuery is Lookup with the operation's recorded reference, for a
// lookup URL that names {provider_ref} (the API's status path by its own
// id). Without a recorded reference such a lookup cannot tell: nothing was
// asked, and that is no evidence either way.
func (p *Provider) LookupQuery(ctx context.Context, q provider.Query) (provider.Evidence, error) {
	downstreamKey := q.DownstreamKey
	ev := provider.Evidence{Provider: p.c.Name, DownstreamKey: downstreamKey}
	if p.c.Lookup == nil {
		return ev, fmt.Errorf("cannot tell: provider %s has no lookup configured", p.c.Name)
	}
	byRef := p.NeedsRef()
	if byRef && q.Ref == "" {
		return ev, fmt.Errorf("cannot tell: provider %s is looked up by {provider_ref}, and no reference is recorded for this operation (nothing was asked)", p.c.Name)
	}
	headers, secrets, err := p.resolveHeaders(p.c.Lookup)
	if err != nil {
		return ev, fmt.Errorf("cannot tell: provider %s's lookup: %s (nothing was asked)", p.c.Name, p.mask(err.Error(), secrets))
	}
	target, read, err := expand(p.c.Lookup.URL, downstreamKey, q.Ref, nil, p.c.Env)
	secrets = append(secrets, read...)
	if err != nil {
		return ev, fmt.Errorf("cannot tell: provider %s's lookup: %v (nothing was asked)", p.c.Name, err)
	}
	under := downstreamKey
	if byRef {
		under = "reference " + q.Ref
	}
	x, err := p.do(ctx, p.c.Lookup, headers, target, nil, "", secrets)
	if err != nil {
		return ev, fmt.Errorf("cannot tell: %v", err)
	}
	switch {
	case x.status >= 200 && x.status <= 299 && p.c.Lookup.Found != "":
		there, why := found(x, p.c.Lookup.Found)
		if why != "" {
			return ev, fmt.Errorf("cannot tell: %s answered the lookup with HTTP %d, but %s", p.c.Name, x.status, why)
		}
		if !there {
			ev.Detail = fmt.Sprintf("%s holds nothing under %s (HTTP %d with nothing at %s)", p.c.Name, under, x.status, p.c.Lookup.Found)
			return ev, nil
		}
		fallthrough
	case x.status >= 200 && x.status <= 299:
		ref, why := p.reference(x, p.c.Lookup.RefPointer, secrets)
		if ref == "" && byRef {
			ref, why = q.Ref, "" // the record asked for by its reference
		}
		ev.Found, ev.Effects, ev.Ref, ev.Status = true, 1, ref, "found"
		ev.Detail = fmt.Sprintf("%s holds %s under %s (HTTP %d)", p.c.Name, orDash(ref), under, x.status)
		if why != "" {
			ev.Detail += " (" + why + ")"
		}
		return ev, nil
	case x.status == http.StatusNotFound && p.c.Lookup.NotFound != "":
		why := notFound(x, p.c.Lookup.NotFound, p.c.Lookup.NotFoundValue)
		if why != "" {
			return ev, fmt.Errorf("cannot tell: %s answered the lookup with HTTP 404, but %s — a 404 without the API's not-found answer: a wrong route looks like this (check the lookup url)", p.c.Name, why)
		}
		at := p.c.Lookup.NotFound
		if v := p.c.Lookup.NotFoundValue; v != "" {
			at += " = " + strconv.Quote(v)
		}
		ev.Detail = fmt.Sprintf("%s holds nothing under %s (HTTP 404 with its not-found answer, %s)", p.c.Name, under, at)
		return ev, nil
	case x.status == http.StatusNotFound:
		ev.Detail = fmt.Sprintf("%s holds nothing under %s (HTTP 404)", p.c.Name, under)
		return ev, nil
	}
	return ev, fmt.Errorf("cannot tell: %s answered the lookup with HTTP %d", p.c.Name, x.status)
}

// found reports whether a lookup's 2xx answer holds a value at ptr (see
// Endpoint.Found); why says why the body cannot tell.
func found(x *exchange, ptr string) (bool, string) {
	doc, why := oneJSONValue(x, ptr)
	if why != "" {
		return false, why
	}
	v, ok := resolvePointer(doc, ptr)
	return ok && nonEmpty(v), ""
}

// oneJSONValue decodes a lookup's whole answer, which must be one JSON
// value; why says why it is not (ptr: what it would have been read for).
func oneJSONValue(x *exchange, ptr string) (any, string) {
	if x.overCap {
		return nil, "the response is over max_response_bytes, so whether anything is at " + ptr + " is not known"
	}
	if x.bodyErr != nil {
		return nil, "the response body broke off"
	}
	if len(bytes.TrimSpace(x.body)) == 0 {
		return nil, "the response is empty, not JSON"
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(x.body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, "the response is not JSON"
	}
	if dec.More() {
		// "404 page not found" starts with a number: text, not JSON.
		var next any
		if err := dec.Decode(&next); err != nil {
			return nil, "the response is not JSON"
		}
		return nil, "the response is not one JSON value"
	}
	return doc, ""
}

// notFound says why a lookup's 404 is not the API's own not-found answer
// (see Endpoint.NotFound), or "" when it is.
func notFound(x *exchange, ptr, want string) string {
	doc, why := oneJSONValue(x, ptr)
	if why != "" {
		return why
	}
	v, ok := resolvePointer(doc, ptr)
	if !ok || !nonEmpty(v) {
		return "there is nothing at " + ptr
	}
	if want == "" {
		return ""
	}
	// The value is not repeated: a response body may echo what it was
	// sent, and this error is stored and shown.
	switch v := v.(type) {
	case string:
		if v == want {
			return ""
		}
	case json.Number:
		if v.String() == want {
			return ""
		}
	default:
		return fmt.Sprintf("%s is not a string or number, so not %q", ptr, want)
	}
	return fmt.Sprintf("%s is not %q", ptr, want)
}

// nonEmpty: a value is there unless it is null, false, 0, "", [] or {}.
func nonEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// reference is pointer's reference, unless it holds a secret this
// request sent (p.secrets, and secrets read from the environment: an API
// that echoes its credentials as the new record's id): a reference is
// stored with the operation, its attempt and its receipt and shown
// everywhere. Not masked: a masked reference would name another record to
// a lookup by {provider_ref}.
func (p *Provider) reference(x *exchange, ptr string, secrets []string) (string, string) {
	ref, why := pointer(x, ptr)
	if ref != "" && p.mask(ref, secrets) != ref {
		return "", fmt.Sprintf("%s in the response holds a value this provider sends as a secret (a header's, the URL's or the environment's); no reference read", ptr)
	}
	return ref, why
}

// pointer reads the reference at ptr in a response body; why says why
// there is none.
func pointer(x *exchange, ptr string) (string, string) {
	if ptr == "" {
		return "", ""
	}
	if x.overCap {
		return "", "response over the size cap; no reference read"
	}
	if x.bodyErr != nil {
		return "", "response body broke off; no reference read"
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(x.body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return "", "response is not JSON; no reference read"
	}
	v, ok := resolvePointer(doc, ptr)
	if !ok {
		return "", fmt.Sprintf("nothing at %s in the response", ptr)
	}
	var ref string
	switch r := v.(type) {
	case string:
		ref = r
	case json.Number:
		ref = r.String()
	default:
		return "", fmt.Sprintf("%s in the response is not a string or number", ptr)
	}
	if len(ref) > MaxRef {
		return "", fmt.Sprintf("%s in the response is %d bytes, longer than a reference (%d); none read", ptr, len(ref), MaxRef)
	}
	// PostgreSQL text cannot hold a NUL: the answer could not be recorded
	// there, and an applied effect would be left a claim in flight.
	if strings.IndexByte(ref, 0) >= 0 {
		return "", fmt.Sprintf("%s in the response holds a NUL character, which is no reference; none read", ptr)
	}
	return ref, ""
}

// resolvePointer follows an RFC 6901 JSON pointer.
func resolvePointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// maxRetryAfter is the longest Retry-After read as it is: a longer one
// (a number of seconds too large for a duration among them) is read as
// this, far longer than any wait the ledger holds (reconcile.MaxRetryAfter)
// — never as no wait at all, which would send again at once.
const maxRetryAfter = provider.MaxRetryAfter

// retryAfter reads a Retry-After header: seconds or an HTTP date. note,
// for the attempt's detail, says what a header read otherwise than as it
// stands asked — a longer wait (seconds, or until a date), or a value
// that is neither (read as no wait: the answer still says not now).
func retryAfter(h string, now time.Time) (wait time.Duration, note string) {
	if h == "" {
		return 0, ""
	}
	if v := strings.TrimSpace(h); v != "" && strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter, "Retry-After: " + clipHeader(v) + " seconds"
		}
		return time.Duration(n) * time.Second, ""
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, "Retry-After " + strconv.Quote(clipHeader(h)) + " not understood (neither seconds nor an HTTP date): read as no wait"
	}
	if !t.After(now) {
		return 0, ""
	}
	if d := t.Sub(now).Round(time.Second); d <= maxRetryAfter {
		return d, ""
	}
	return maxRetryAfter, "Retry-After: until " + t.UTC().Format(http.TimeFormat)
}

// clipHeader is a header's value short enough for a detail's note.
func clipHeader(v string) string {
	if r := []rune(v); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return v
}

// snippet is the start of a response body for a Detail: one line, at most
// 200 characters, valid UTF-8, without a NUL.
func snippet(b []byte) string {
	if !utf8.Valid(b) {
		return "(binary body)"
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	// A NUL is text a PostgreSQL ledger cannot store: shown, not kept.
	s = strings.ReplaceAll(s, "\x00", `\x00`)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "a record"
	}
	return s
}

// EndpointError is a Config whose dispatch or lookup endpoint is wrong:
// Endpoint names which ("dispatch", "lookup"), so a config file's error
// can point at its table without reading the message.
type EndpointError struct {
	Endpoint string
	// Field is the key at fault within it ("url", "key_header",
	// "headers.NAME", …; "" for the endpoint as a whole).
	Field string
	Err   error
}

func (e *EndpointError) Error() string { return e.Endpoint + ": " + e.Err.Error() }
func (e *EndpointError) Unwrap() error { return e.Err }
