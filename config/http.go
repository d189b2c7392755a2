package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// HTTP is an HTTP provider's settings, checked; building the provider from
// it opens nothing.
type HTTP struct {
	Config httpapi.Config
}

// envRef is a ${NAME} in a header value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// parseHTTP checks an http provider. Header values are the only place a
// secret may come from, and only from the environment (${NAME}): the
// config file itself never holds one, and no error repeats a value.
func parseHTTP(ps providerSpec, at func(...string) func(string, ...any) error, lookupEnv func(string) (string, bool)) (*HTTP, error) {
	c := httpapi.Config{Name: ps.Name, HonoursKeys: ps.HonoursKeys, MaxResponseBytes: ps.MaxResponseBytes}
	if ps.Timeout != "" {
		d, err := time.ParseDuration(ps.Timeout)
		if err != nil || d <= 0 {
			return nil, at("timeout")("provider %s: timeout %q is not a positive duration (e.g. \"5s\")", ps.Name, ps.Timeout)
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
			var missing string
			expanded := envRef.ReplaceAllStringFunc(v, func(ref string) string {
				name := envRef.FindStringSubmatch(ref)[1]
				val, ok := lookupEnv(name)
				if (!ok || val == "") && missing == "" {
					missing = name
				}
				return val
			})
			if missing != "" {
				return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: header %s needs $%s, which is not set", ps.Name, k, missing)
			}
			if rest := envRef.ReplaceAllString(v, ""); strings.Contains(rest, "${") {
				return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: header %s: a secret reference is written ${NAME} (letters, digits, _)", ps.Name, k)
			}
			if strings.ContainsAny(expanded, "\r\n") {
				return httpapi.Endpoint{}, at(which, "headers", k)("provider %s: header %s holds a line break (from the file or the environment)", ps.Name, k)
			}
			out.Headers[k] = expanded
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
			if err != nil {
				return nil, at("classify", k)("provider %s: classify %d: %v", ps.Name, code, err)
			}
			c.Classify[code] = cl
		}
	}
	if _, err := httpapi.New(c); err != nil {
		where := at("dispatch")
		if ee := (*httpapi.EndpointError)(nil); errors.As(err, &ee) && ee.Endpoint == "lookup" {
			where = at("lookup", "url")
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
