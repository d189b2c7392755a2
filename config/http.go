package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// maxNotFoundValue bounds not_found_value: an API's error code, not a
// message.
const maxNotFoundValue = 256

// HTTP is an HTTP provider's settings, checked; building the provider from
// it opens nothing.
type HTTP struct {
	Config httpapi.Config
}

// MissingEnv lists the environment variables an endpoint ("dispatch" or
// "lookup") reads — its headers' and its URL's ${NAME}s — that are not set
// now. They are read when a request is made, not when the config is
// loaded (a lookup needs only the lookup's): a command about to dispatch
// may ask first, and refuse before it writes anything.
func (h *HTTP) MissingEnv(which string) []string {
	e := &h.Config.Dispatch
	if which == "lookup" {
		e = h.Config.Lookup
	}
	var out []string
	for _, u := range httpapi.UnsetEnv(e, which, h.Config.Env) {
		out = append(out, u.Name)
	}
	sort.Strings(out)
	return out
}

// parseHTTP checks an http provider. Header values, and the path or query
// of a URL, may take a secret only from the environment (${NAME}), read
// when a request is made: the config file itself never holds one, and no
// error repeats a value.
func parseHTTP(ps providerSpec, at func(...string) func(string, ...any) error, lookupEnv func(string) (string, bool)) (*HTTP, error) {
	c := httpapi.Config{Name: ps.Name, HonoursKeys: ps.HonoursKeys, MaxResponseBytes: ps.MaxResponseBytes, Env: lookupEnv}
	if ps.Timeout != "" {
		d, err := time.ParseDuration(ps.Timeout)
		if err != nil || d <= 0 {
			return nil, at("timeout")("provider %s: timeout %q is not a positive duration (e.g. \"5s\")", ps.Name, ps.Timeout)
		}
		if d > httpapi.MaxTimeout {
			return nil, at("timeout")("provider %s: timeout %q is longer than %v: a dispatch holds its claim that long, and a lookup within that long of a request cannot tell", ps.Name, ps.Timeout, httpapi.MaxTimeout)
		}
		c.Timeout = d
	}
	if ps.MaxResponseBytes < 0 {
		return nil, at("max_response_bytes")("provider %s: max_response_bytes must be positive", ps.Name)
	}
	if ps.Dispatch == nil {
		return nil, at()("provider %s: an http provider needs [providers.dispatch] with its url", ps.Name)
	}
	endpoint := func(e *endpointSpec, which string) (httpapi.Endpoint, error) {
		if e.URL == "" {
			return httpapi.Endpoint{}, at(which)("provider %s: %s.url is required", ps.Name, which)
		}
		if e.Rate != nil && which != "lookup" {
			return httpapi.Endpoint{}, at(which, "rate")("provider %s: rate belongs in [providers.lookup] (lookups per second)", ps.Name)
		}
		if e.KeyHeader != "" && which != "dispatch" {
			return httpapi.Endpoint{}, at(which, "key_header")("provider %s: key_header belongs in [providers.dispatch]", ps.Name)
		}
		out := httpapi.Endpoint{Method: e.Method, URL: e.URL, RefPointer: e.RefPointer}
		if e.Found != nil {
			if which != "lookup" {
				return httpapi.Endpoint{}, at(which, "found")("provider %s: found belongs in [providers.lookup] (what a lookup's answer must hold)", ps.Name)
			}
			if err := httpapi.CheckPointer(*e.Found); err != nil {
				return httpapi.Endpoint{}, at(which, "found")("provider %s: lookup found: %v", ps.Name, err)
			}
			out.Found = *e.Found
		}
		if e.NotFound != nil {
			if which != "lookup" {
				return httpapi.Endpoint{}, at(which, "not_found")("provider %s: not_found belongs in [providers.lookup] (what the API's own 404 answer holds)", ps.Name)
			}
			if err := httpapi.CheckPointer(*e.NotFound); err != nil {
				return httpapi.Endpoint{}, at(which, "not_found")("provider %s: lookup not_found: %v", ps.Name, err)
			}
			out.NotFound = *e.NotFound
		}
		if e.NotFoundValue != nil {
			v := *e.NotFoundValue
			switch {
			case which != "lookup":
				return httpapi.Endpoint{}, at(which, "not_found_value")("provider %s: not_found_value belongs in [providers.lookup] (with not_found)", ps.Name)
			case e.NotFound == nil:
				return httpapi.Endpoint{}, at(which, "not_found_value")("provider %s: not_found_value needs not_found, the JSON pointer to the API's not-found code (e.g. not_found = \"/error/code\")", ps.Name)
			case v == "":
				return httpapi.Endpoint{}, at(which, "not_found_value")("provider %s: not_found_value is empty: give the code the API's 404 holds at %s, or leave not_found_value out (any value there will do)", ps.Name, *e.NotFound)
			}
			// Shown in a lookup's detail: plain text only.
			if err := model.ValidateText("not_found_value", v, maxNotFoundValue); err != nil {
				return httpapi.Endpoint{}, at(which, "not_found_value")("provider %s: %v", ps.Name, err)
			}
			out.NotFoundValue = v
		}
		keyHeader := ""
		if which == "dispatch" {
			keyHeader = e.KeyHeader
			if keyHeader == "" {
				keyHeader = httpapi.DefaultKeyHeader
			}
			if err := httpapi.CheckKeyHeader(e.KeyHeader, e.Headers); err != nil {
				return httpapi.Endpoint{}, at(which, "key_header")("provider %s: %v", ps.Name, err)
			}
		}
		if k, err := httpapi.CheckHeaders(e.Headers, keyHeader); err != nil {
			return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: %v", ps.Name, err)
		}
		if len(e.Headers) > 0 {
			out.Headers = map[string]string{}
		}
		names := make([]string, 0, len(e.Headers))
		for k := range e.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			v := e.Headers[k]
			if err := httpapi.CheckEnvRefs(v); err != nil {
				return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: header %s: %v", ps.Name, k, err)
			}
			if err := httpapi.CheckHeaderValue(v); err != nil {
				return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: header %s %v", ps.Name, k, err)
			}
			// Kept as written: each ${NAME} is read when a request is made.
			out.Headers[k] = v
		}
		return out, nil
	}
	d, err := endpoint(ps.Dispatch, "dispatch")
	if err != nil {
		return nil, err
	}
	c.Dispatch, c.KeyHeader = d, ps.Dispatch.KeyHeader
	if ps.Lookup != nil {
		l, err := endpoint(ps.Lookup, "lookup")
		if err != nil {
			return nil, err
		}
		c.Lookup = &l
	}
	if len(ps.Classify) > 0 {
		c.Classify = map[int]httpapi.Class{}
		for k, v := range ps.Classify {
			code, err := strconv.Atoi(k)
			if err != nil || code < 100 || code > 599 {
				return nil, at("classify", k)("provider %s: classify: %q is not an HTTP status code", ps.Name, k)
			}
			cl, err := httpapi.ParseClass(v)
			if err == nil {
				err = httpapi.CheckClass(code, cl)
			}
			if err != nil {
				return nil, at("classify", k)("provider %s: classify %d: %v", ps.Name, code, err)
			}
			c.Classify[code] = cl
		}
	}
	if _, err := httpapi.New(c); err != nil {
		where := at("dispatch")
		if ee := (*httpapi.EndpointError)(nil); errors.As(err, &ee) {
			path := []string{ee.Endpoint}
			if ee.Field != "" {
				path = append(path, strings.SplitN(ee.Field, ".", 2)...)
			}
			where = at(path...)
		}
		return nil, where("provider %s: %v", ps.Name, err)
	}
	return &HTTP{Config: c}, nil
}

// checkURLArguments: every {NAME} of an http provider's dispatch URL must
// be a required argument of each tool that uses the provider, or a call
// could reach the provider with a URL it cannot build.
func checkURLArguments(p Provider, tool string, required []string) error {
	if p.HTTP == nil {
		return nil
	}
	names, _ := httpapi.TemplateNames(p.HTTP.Config.Dispatch.URL)
	for _, n := range names {
		if n == "downstream_key" {
			continue
		}
		found := false
		for _, r := range required {
			found = found || r == n
		}
		if !found {
			return fmt.Errorf("tool %s: provider %s's URL needs {%s}, which is not a required argument of the tool's schema", tool, p.Name, n)
		}
	}
	return nil
}
