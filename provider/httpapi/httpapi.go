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
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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

// DefaultClass is the default classification of a status code.
func DefaultClass(status int) Class {
	switch {
	case status >= 200 && status <= 299:
		return Applied
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
	// MaxRef bounds a provider's reference read from a response: a
	// reference is stored with the operation, its attempt and its receipt,
	// and replayed to every retry. A longer one is not taken.
	MaxRef = 512
)

// Endpoint is one request template.
type Endpoint struct {
	Method string
	// URL may hold {downstream_key} and, for a dispatch, {NAME} for a
	// top-level argument; values are path-escaped.
	URL string
	// Headers are sent as given; values were expanded from ${ENV} when the
	// config was read and are never shown.
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
	// 2xx found (with Found: a value at that pointer), 404 not found,
	// anything else cannot tell.
	Lookup *Endpoint
	// Classify overrides DefaultClass for exact status codes.
	Classify map[int]Class
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
}

// minSecret is the shortest header word masked in a response body
// ("Bearer", "Basic" stay).
const minSecret = 8

func headerSecrets(es ...*Endpoint) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range es {
		if e == nil {
			continue
		}
		for _, v := range e.Headers {
			for _, w := range append(strings.Fields(v), strings.TrimSpace(v)) {
				if len(w) >= minSecret && !seen[w] {
					seen[w] = true
					out = append(out, w)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// snippet is a response body's start for a Detail, with every configured
// header value masked.
func (p *Provider) snippet(b []byte) string {
	if len(p.secrets) > 0 && utf8.Valid(b) {
		s := string(b)
		for _, w := range p.secrets {
			s = strings.ReplaceAll(s, w, "***")
		}
		b = []byte(s)
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
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxResponseBytes < 0 {
		return nil, errors.New("max_response_bytes must be positive")
	}
	if c.KeyHeader == "" {
		c.KeyHeader = DefaultKeyHeader
	}
	if err := checkEndpoint(&c.Dispatch, "POST", true); err != nil {
		return nil, &EndpointError{Endpoint: "dispatch", Err: err}
	}
	if c.Lookup != nil {
		if err := checkEndpoint(c.Lookup, "GET", false); err != nil {
			return nil, &EndpointError{Endpoint: "lookup", Err: err}
		}
	}
	for code, cl := range c.Classify {
		if code < 100 || code > 599 {
			return nil, fmt.Errorf("classify: %d is not an HTTP status code", code)
		}
		if _, err := ParseClass(string(cl)); err != nil {
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
	return &Provider{c: c, client: client, secrets: headerSecrets(&c.Dispatch, c.Lookup)}, nil
}

func checkEndpoint(e *Endpoint, method string, dispatch bool) error {
	if e.Method == "" {
		e.Method = method
	}
	e.Method = strings.ToUpper(e.Method)
	switch e.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
	default:
		return fmt.Errorf("method %q is not one of GET, POST, PUT, PATCH, DELETE", e.Method)
	}
	names, err := templateNames(e.URL)
	if err != nil {
		return err
	}
	probe := e.URL
	for _, n := range names {
		if !dispatch && n != "downstream_key" && n != "provider_ref" {
			return fmt.Errorf("url: {%s}: a lookup URL knows only {downstream_key} and {provider_ref}", n)
		}
		probe = strings.ReplaceAll(probe, "{"+n+"}", "x")
	}
	u, err := url.Parse(probe)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return fmt.Errorf("url: %v", err)
	}
	// Neither message repeats the URL: it may hold credentials.
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return errors.New("url must be an absolute http:// or https:// URL (e.g. https://api.example.com/v1/send)")
	}
	// Credentials in the URL are a secret in the config file, which never
	// holds one, and Go sends them as Basic authentication that no mask
	// covers (an API that echoes its Authorization header would have them
	// stored in the operation's detail).
	if u.User != nil {
		return errors.New("url holds credentials (user:password@): put them in a header from the environment instead, e.g. headers = { Authorization = \"Basic ${API_BASIC}\" }")
	}
	if e.RefPointer != "" && !strings.HasPrefix(e.RefPointer, "/") {
		return fmt.Errorf("ref_pointer %q must be a JSON pointer starting with /", e.RefPointer)
	}
	if e.Found != "" {
		if dispatch {
			return errors.New("found belongs in [providers.lookup]")
		}
		if err := CheckPointer(e.Found); err != nil {
			return fmt.Errorf("found: %w", err)
		}
	}
	for k := range e.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return fmt.Errorf("header name %q is not valid", k)
		}
	}
	return nil
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

// Classify returns the class of a status code: the override if declared,
// else DefaultClass.
func (p *Provider) Classify(status int) Class {
	if c, ok := p.c.Classify[status]; ok {
		return c
	}
	return DefaultClass(status)
}

// expand fills a URL template: {downstream_key}, a lookup's
// {provider_ref} (ref; only lookups pass one), or an argument. A value is
// one value where it stands: query-escaped after the "?" (path escaping
// keeps & and =, and a value could add parameters of its own), one path
// segment before it — and never "", "." or "..", which a server that
// cleans the path would read as another endpoint.
func expand(tmpl, downstreamKey, ref string, args map[string]any) (string, error) {
	if _, err := templateNames(tmpl); err != nil {
		return "", err
	}
	query := strings.IndexByte(tmpl, '?')
	var out strings.Builder
	rest, at := tmpl, 0
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			out.WriteString(rest)
			return out.String(), nil
		}
		j := strings.IndexByte(rest[i:], '}') // templateNames checked it
		n := rest[i+1 : i+j]
		out.WriteString(rest[:i])
		var v string
		switch {
		case n == "downstream_key":
			v = downstreamKey
		case n == "provider_ref" && args == nil:
			v = ref
		default:
			a, ok := args[n]
			if !ok {
				return "", fmt.Errorf("the URL needs argument %q, which this call does not have", n)
			}
			switch x := a.(type) {
			case string:
				v = x
			case json.Number:
				v = x.String()
			case bool:
				v = strconv.FormatBool(x)
			default:
				return "", fmt.Errorf("argument %q is not a string, number or boolean and cannot go in the URL", n)
			}
		}
		if query >= 0 && at+i > query {
			out.WriteString(url.QueryEscape(v))
		} else {
			if v == "" || v == "." || v == ".." {
				return "", fmt.Errorf("{%s} is %q, which cannot be a segment of the URL's path (a server would read another path)", n, v)
			}
			out.WriteString(url.PathEscape(v))
		}
		rest, at = rest[i+j+1:], at+i+j+1
	}
}

// exchange is one request's outcome at the transport level.
type exchange struct {
	status   int
	header   http.Header
	body     []byte
	overCap  bool
	bodyErr  error
	sentNone bool // the request failed before a byte of it was written
}

func (p *Provider) do(ctx context.Context, e *Endpoint, target string, body []byte, key string) (*exchange, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	// The transport writes from its own goroutine.
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaderField: func(string, []string) { wrote.Store(true) },
	})
	req, err := http.NewRequestWithContext(ctx, e.Method, target, rd)
	if err != nil {
		return &exchange{sentNone: true}, fmt.Errorf("cannot build the request: %v", err)
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
	for k, v := range e.Headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set(p.c.KeyHeader, key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return &exchange{sentNone: !wrote.Load() && refusedBeforeSending(err)}, transportError(err)
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
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// transportError describes a failed exchange without the request's
// headers (url.Error carries the URL, which holds no secret: secrets live
// only in headers).
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("%s %s: no answer within the timeout", ue.Op, ue.URL)
		}
		return fmt.Errorf("%s %s: %v", ue.Op, ue.URL, ue.Err)
	}
	return err
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
	target, err := expand(p.c.Dispatch.URL, req.DownstreamKey, "", args)
	if err != nil {
		// Nothing was sent, and the same arguments can never be sent:
		// a final failure.
		return provider.Response{Status: provider.Rejected, Detail: "not sent: " + err.Error()}, nil
	}
	x, err := p.do(ctx, &p.c.Dispatch, target, req.Args, req.DownstreamKey)
	if err != nil {
		if x.sentNone {
			return provider.Response{Status: provider.NotApplied, Detail: "not sent: " + err.Error()}, nil
		}
		return provider.Response{}, provider.Ambiguous("%v", err)
	}
	detail := fmt.Sprintf("HTTP %d", x.status)
	if s := p.snippet(x.body); s != "" && p.Classify(x.status) != Applied {
		detail += ": " + s
	}
	switch p.Classify(x.status) {
	case Applied:
		ref, why := pointer(x, p.c.Dispatch.RefPointer)
		if why != "" {
			detail += " (" + why + ")"
		}
		return provider.Response{Status: provider.Applied, Ref: ref, Detail: detail}, nil
	case Failed:
		return provider.Response{Status: provider.Rejected, Detail: detail}, nil
	case Retry:
		return provider.Response{Status: provider.Busy, Detail: detail, RetryAfter: retryAfter(x.header.Get("Retry-After"), time.Now())}, nil
	case NotApplied:
		return provider.Response{Status: provider.NotApplied, Detail: detail}, nil
	}
	return provider.Response{}, provider.Ambiguous("%s", detail)
}

// Lookup asks the API what it holds under a downstream key: 2xx found
// (with Endpoint.Found, only when a value is at that pointer), 404 not
// found, anything else (or no lookup configured) cannot tell — an error,
// never evidence. A lookup URL that needs {provider_ref} cannot
// tell from a downstream key alone: see LookupQuery.
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
	target, err := expand(p.c.Lookup.URL, downstreamKey, q.Ref, nil)
	if err != nil {
		return ev, fmt.Errorf("cannot tell: %v", err)
	}
	under := downstreamKey
	if byRef {
		under = "reference " + q.Ref
	}
	x, err := p.do(ctx, p.c.Lookup, target, nil, "")
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
		ref, why := pointer(x, p.c.Lookup.RefPointer)
		if ref == "" && byRef {
			ref, why = q.Ref, "" // the record asked for by its reference
		}
		ev.Found, ev.Effects, ev.Ref, ev.Status = true, 1, ref, "found"
		ev.Detail = fmt.Sprintf("%s holds %s under %s (HTTP %d)", p.c.Name, orDash(ref), under, x.status)
		if why != "" {
			ev.Detail += " (" + why + ")"
		}
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
	if x.overCap {
		return false, "the response is over max_response_bytes, so whether anything is at " + ptr + " is not known"
	}
	if x.bodyErr != nil {
		return false, "the response body broke off"
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(x.body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return false, "the response is not JSON"
	}
	if dec.More() {
		return false, "the response is not one JSON value"
	}
	v, ok := resolvePointer(doc, ptr)
	if !ok {
		return false, ""
	}
	switch v := v.(type) {
	case nil:
		return false, ""
	case bool:
		return v, ""
	case string:
		return v != "", ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0, ""
	case []any:
		return len(v) > 0, ""
	case map[string]any:
		return len(v) > 0, ""
	}
	return true, ""
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

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64); err == nil {
		if n < 0 || n > int64(math.MaxInt64/time.Second) {
			return 0 // no wait a duration can hold
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
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
	Err      error
}

func (e *EndpointError) Error() string { return e.Endpoint + ": " + e.Err.Error() }
func (e *EndpointError) Unwrap() error { return e.Err }
