package httpapi_test

import (
	"reflect"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// An HTTP provider says where its requests go: the method, scheme, host
// and the URL template after the host as configured (a ${NAME} stays a
// name), the dispatch's key header, and each endpoint's headers as
// written (R11 H3: an account header is where a request goes) — a ${NAME}
// as its name: the values read from the environment (credentials) are no
// part of it.
func TestAnHTTPProvidersIdentityIsWhereItsRequestsGo(t *testing.T) {
	env := func(string) (string, bool) { return "v", true }
	p, err := httpapi.New(httpapi.Config{Name: "mail", Env: env,
		Dispatch: httpapi.Endpoint{Method: "put", URL: "https://API.example.com:8443/v1/send/{to}?k=${KEY}",
			Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}},
		Lookup: &httpapi.Endpoint{URL: "http://status.example.com/m/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Identity{
		Dispatch: provider.Target{Kind: "http", Method: "PUT", Scheme: "https", Host: "API.example.com:8443",
			URL: "/v1/send/{to}?k=${KEY}", KeyHeader: httpapi.DefaultKeyHeader, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}},
		Lookup: &provider.Target{Kind: "http", Method: "GET", Scheme: "http", Host: "status.example.com", URL: "/m/{downstream_key}", Headers: map[string]string{}},
	}
	if got := p.Identity(); !reflect.DeepEqual(got, want) {
		t.Errorf("Identity = %+v %+v; want %+v %+v", got.Dispatch, got.Lookup, want.Dispatch, want.Lookup)
	}
	q, err := httpapi.New(httpapi.Config{Name: "mail", Dispatch: httpapi.Endpoint{URL: "https://api.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Identity(); got.Lookup != nil || got.Dispatch.Host != "api.example.com" || got.Dispatch.URL != "" || got.Dispatch.Headers == nil {
		t.Errorf("without a path, headers or a lookup: %+v %+v; want its (no) headers recorded", got.Dispatch, got.Lookup)
	}
	build := func(env func(string) (string, bool), auth string, lookupHeaders map[string]string) provider.Provider {
		t.Helper()
		p, err := httpapi.New(httpapi.Config{Name: "mail", Env: env,
			Dispatch: httpapi.Endpoint{Method: "PUT", URL: "https://api.example.com:8443/v1/send/{to}?k=${KEY}",
				Headers: map[string]string{"Authorization": auth}},
			Lookup: &httpapi.Endpoint{URL: "http://status.example.com/m/{downstream_key}", Headers: lookupHeaders}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	d1, l1 := provider.IdentityOf(p)
	other := func(string) (string, bool) { return "another-token", true }
	if d2, l2 := provider.IdentityOf(build(other, "Bearer ${TOKEN}", nil)); d1 != d2 || l1 != l2 {
		t.Errorf("other values in the environment, the host's case: %q %q vs %q %q; want the same identity", d1, l1, d2, l2)
	}
	if d2, l2 := provider.IdentityOf(build(env, "Basic ${OTHER}", nil)); d1 == d2 || l1 != l2 {
		t.Errorf("another header template: %q %q vs %q %q; want another dispatch identity", d1, l1, d2, l2)
	}
	if d2, l2 := provider.IdentityOf(build(env, "Bearer ${TOKEN}", map[string]string{"Stripe-Account": "acct_TWO"})); d1 != d2 || l1 == l2 {
		t.Errorf("an account header on the lookup: %q %q vs %q %q; want another lookup identity", d1, l1, d2, l2)
	}
}
