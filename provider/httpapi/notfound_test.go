package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// A 404 is "has nothing" only when it is the API's own not-found answer:
// with Endpoint.NotFound (and NotFoundValue), a 404 whose JSON body holds
// (that value) at the pointer is "has nothing"; any other 404 — a wrong
// route in the config, a gateway's or proxy's page for a path it does not
// know, a v1/v2 mix-up — cannot tell, and says why. A "has nothing" from a
// route-miss would let an operator mark the call not applied, and the next
// call would send the e-mail again. Without NotFound a 404 is "has
// nothing", as before.
func TestLookupNotFoundTellsTheAPIsAnswerFromARouteMiss(t *testing.T) {
	answers := map[string]struct {
		status int
		ctype  string
		body   string
	}{
		"api-miss":     {404, "application/json", `{"error":{"code":"delivery_not_found","message":"no such delivery"}}`},
		"other-code":   {404, "application/json", `{"error":{"code":"route_not_found"}}`},
		"number-code":  {404, "application/json", `{"error":{"code":1001}}`},
		"no-code":      {404, "application/json", `{"message":"Not Found"}`},
		"empty-code":   {404, "application/json", `{"error":{"code":""}}`},
		"null-code":    {404, "application/json", `{"error":{"code":null}}`},
		"object-code":  {404, "application/json", `{"error":{"code":{"x":"delivery_not_found"}}}`},
		"html":         {404, "text/html", `<html><body><h1>404 Not Found</h1>nginx</body></html>`},
		"plain":        {404, "text/plain", "404 page not found\n"},
		"empty":        {404, "", ""},
		"two-values":   {404, "application/json", `{"error":{"code":"delivery_not_found"}} {}`},
		"too-big":      {404, "application/json", `{"error":{"code":"delivery_not_found","pad":"` + strings.Repeat("x", 300) + `"}}`},
		"hit":          {200, "application/json", `{"id":"msg_1"}`},
		"broken":       {500, "application/json", `{"error":{"code":"delivery_not_found"}}`},
		"gone-no-body": {404, "application/json", `null`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[strings.TrimPrefix(r.URL.Path, "/deliveries/")]
		if !ok {
			t.Errorf("unexpected request %s", r.URL.Path)
			a.status = 400
		}
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	defer srv.Close()
	build := func(t *testing.T, ptr, value string) *httpapi.Provider {
		t.Helper()
		p, err := httpapi.New(httpapi.Config{Name: "mail", MaxResponseBytes: 200,
			Dispatch: httpapi.Endpoint{URL: srv.URL + "/deliveries"},
			Lookup: &httpapi.Endpoint{URL: srv.URL + "/deliveries/{downstream_key}", RefPointer: "/id",
				NotFound: ptr, NotFoundValue: value}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const hasIt, hasNothing = "has it", "has nothing"
	const routeMiss = "a 404 without the API's not-found answer: a wrong route looks like this"
	for _, c := range []struct {
		name, ptr, value, key string
		want                  string   // hasIt, hasNothing, or cannot tell with all of these
		says                  []string // with cannot tell
	}{
		{"value: the API's not-found answer", "/error/code", "delivery_not_found", "api-miss", hasNothing, nil},
		{"value: another code", "/error/code", "delivery_not_found", "other-code", "", []string{routeMiss, "/error/code is not \"delivery_not_found\""}},
		{"value: a number written as the value", "/error/code", "1001", "number-code", hasNothing, nil},
		{"value: a number that differs", "/error/code", "1002", "number-code", "", []string{routeMiss, "is not \"1002\""}},
		{"value: an object that holds the value deeper", "/error/code", "delivery_not_found", "object-code", "", []string{routeMiss}},
		{"value: nothing at the pointer", "/error/code", "delivery_not_found", "no-code", "", []string{routeMiss, "nothing at /error/code"}},
		{"value: an HTML 404 (a proxy's page)", "/error/code", "delivery_not_found", "html", "", []string{routeMiss, "not JSON"}},
		{"value: a plain-text 404 (a router's)", "/error/code", "delivery_not_found", "plain", "", []string{routeMiss, "not JSON"}},
		{"value: an empty 404", "/error/code", "delivery_not_found", "empty", "", []string{routeMiss, "empty"}},
		{"value: two JSON values", "/error/code", "delivery_not_found", "two-values", "", []string{routeMiss, "not one JSON value"}},
		{"value: over max_response_bytes", "/error/code", "delivery_not_found", "too-big", "", []string{routeMiss, "over max_response_bytes"}},
		{"value: JSON null", "/error/code", "delivery_not_found", "gone-no-body", "", []string{routeMiss, "nothing at /error/code"}},
		{"pointer only: a value there", "/error/code", "", "api-miss", hasNothing, nil},
		{"pointer only: any code is the API's", "/error/code", "", "other-code", hasNothing, nil},
		{"pointer only: nothing there", "/error/code", "", "no-code", "", []string{routeMiss, "nothing at /error/code"}},
		{"pointer only: an empty value", "/error/code", "", "empty-code", "", []string{routeMiss, "nothing at /error/code"}},
		{"pointer only: a null value", "/error/code", "", "null-code", "", []string{routeMiss, "nothing at /error/code"}},
		{"pointer only: an HTML 404", "/error", "", "html", "", []string{routeMiss, "not JSON"}},
		{"pointer only: an empty 404", "/error", "", "empty", "", []string{routeMiss, "empty"}},
		{"pointer only: over max_response_bytes", "/error", "", "too-big", "", []string{routeMiss, "over max_response_bytes"}},
		{"not_found: 2xx is still has it", "/error/code", "delivery_not_found", "hit", hasIt, nil},
		{"not_found: 500 still cannot tell", "/error/code", "delivery_not_found", "broken", "", []string{"HTTP 500"}},
		{"no not_found: the API's 404 is nothing", "", "", "api-miss", hasNothing, nil},
		{"no not_found: an HTML 404 is nothing (documented)", "", "", "html", hasNothing, nil},
		{"no not_found: an empty 404 is nothing (documented)", "", "", "empty", hasNothing, nil},
		{"no not_found: an over-limit 404 is nothing (documented)", "", "", "too-big", hasNothing, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, err := build(t, c.ptr, c.value).Lookup(context.Background(), c.key)
			switch c.want {
			case hasIt:
				if err != nil || !ev.Found || ev.Ref != "msg_1" {
					t.Errorf("Lookup = %+v, %v; want has it", ev, err)
				}
			case hasNothing:
				if err != nil || ev.Found || !strings.Contains(ev.Detail, "holds nothing") {
					t.Errorf("Lookup = %+v, %v; want has nothing", ev, err)
				}
				if c.ptr != "" && !strings.Contains(ev.Detail, c.ptr) {
					t.Errorf("Detail %q does not say which answer it read (%s)", ev.Detail, c.ptr)
				}
			default:
				if err == nil || ev.Found || !strings.HasPrefix(err.Error(), "cannot tell: ") {
					t.Fatalf("Lookup = %+v, %v; want cannot tell", ev, err)
				}
				for _, s := range c.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("cannot tell %q; want it to say %q", err, s)
					}
				}
			}
		})
	}
}

// NotFound is a lookup's, and a JSON pointer; NotFoundValue needs it.
func TestNotFoundIsCheckedByNew(t *testing.T) {
	disp := httpapi.Endpoint{URL: "http://h/x"}
	for _, c := range []struct {
		name string
		c    httpapi.Config
		err  string
	}{
		{"a pointer", httpapi.Config{Name: "x", Dispatch: disp, Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", NotFound: "/error/code"}}, ""},
		{"with a value", httpapi.Config{Name: "x", Dispatch: disp, Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", NotFound: "/error/code", NotFoundValue: "x"}}, ""},
		{"not a pointer", httpapi.Config{Name: "x", Dispatch: disp, Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", NotFound: "error"}}, "not_found"},
		{"a bad escape", httpapi.Config{Name: "x", Dispatch: disp, Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", NotFound: "/a~2"}}, "not_found"},
		{"a value without a pointer", httpapi.Config{Name: "x", Dispatch: disp, Lookup: &httpapi.Endpoint{URL: "http://h/{downstream_key}", NotFoundValue: "x"}}, "not_found_value"},
		{"in dispatch", httpapi.Config{Name: "x", Dispatch: httpapi.Endpoint{URL: "http://h/x", NotFound: "/e"}}, "not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := httpapi.New(c.c)
			switch {
			case c.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("New: %v; want an error naming %s", err, c.err)
			}
		})
	}
}
