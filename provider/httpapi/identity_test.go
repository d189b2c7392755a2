package httpapi_test

import (
	"reflect"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// An HTTP provider says where its requests go: the method, scheme, host
// and the URL template after the host as configured (a ${NAME} stays a
// name), and the dispatch's key header; header values (credentials) are
// no part of it.
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
			URL: "/v1/send/{to}?k=${KEY}", KeyHeader: httpapi.DefaultKeyHeader},
		Lookup: &provider.Target{Kind: "http", Method: "GET", Scheme: "http", Host: "status.example.com", URL: "/m/{downstream_key}"},
	}
	if got := p.Identity(); !reflect.DeepEqual(got, want) {
		t.Errorf("Identity = %+v %+v; want %+v %+v", got.Dispatch, got.Lookup, want.Dispatch, want.Lookup)
	}
	q, err := httpapi.New(httpapi.Config{Name: "mail", Dispatch: httpapi.Endpoint{URL: "https://api.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Identity(); got.Lookup != nil || got.Dispatch.Host != "api.example.com" || got.Dispatch.URL != "" {
		t.Errorf("without a path or a lookup: %+v %+v", got.Dispatch, got.Lookup)
	}
	other, err := httpapi.New(httpapi.Config{Name: "mail", Env: env,
		Dispatch: httpapi.Endpoint{Method: "PUT", URL: "https://api.example.com:8443/v1/send/{to}?k=${KEY}",
			Headers: map[string]string{"Authorization": "Basic ${OTHER}"}},
		Lookup: &httpapi.Endpoint{URL: "http://status.example.com/m/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	d1, l1 := provider.IdentityOf(p)
	d2, l2 := provider.IdentityOf(other)
	if d1 != d2 || l1 != l2 {
		t.Errorf("other credentials, the host's case: %q %q vs %q %q; want the same identity", d1, l1, d2, l2)
	}
}
