package provider_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
)

// A digest names each field that says something, with a digest of its
// value — never the value (a URL may hold an API key) — and two digests
// tell which fields differ.
func TestIdentityDigestsNameWhatChanged(t *testing.T) {
	base := provider.Target{Kind: "http", Method: "POST", Scheme: "https", Host: "api.example.com",
		URL: "/v1/send?api_key=s3cr3t-value", KeyHeader: "Idempotency-Key"}
	d := base.Digest()
	if strings.Contains(d, "s3cr3t") || strings.Contains(d, "api.example.com") {
		t.Fatalf("digest %q holds a value", d)
	}
	for _, c := range []struct {
		name   string
		change func(*provider.Target)
		want   []string
	}{
		{"nothing", func(*provider.Target) {}, nil},
		{"case of the host, scheme and key header", func(x *provider.Target) {
			x.Host, x.Scheme, x.KeyHeader = "API.example.com", "HTTPS", "idempotency-key"
		}, nil},
		{"host", func(x *provider.Target) { x.Host = "api2.example.com" }, []string{"host"}},
		{"port", func(x *provider.Target) { x.Host = "api.example.com:8443" }, []string{"host"}},
		{"scheme", func(x *provider.Target) { x.Scheme = "http" }, []string{"scheme"}},
		{"method", func(x *provider.Target) { x.Method = "PUT" }, []string{"method"}},
		{"URL", func(x *provider.Target) { x.URL = "/v2/send" }, []string{"URL template"}},
		{"key header", func(x *provider.Target) { x.KeyHeader = "X-Request-Id" }, []string{"key header"}},
		{"kind", func(x *provider.Target) { *x = provider.Target{Kind: "sandbox"} },
			[]string{"kind", "method", "scheme", "host", "URL template", "key header"}},
	} {
		cur := base
		c.change(&cur)
		if got := provider.IdentityChanges(d, cur.Digest()); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: changes %q; want %q", c.name, got, c.want)
		}
	}
	if got := provider.IdentityChanges("not a digest", d); !reflect.DeepEqual(got, []string{"where it is sent"}) {
		t.Errorf("an unreadable digest: %q", got)
	}
}

type plain struct{}

func (plain) Name() string      { return "p" }
func (plain) HonoursKeys() bool { return true }
func (plain) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	return provider.Response{}, nil
}
func (plain) Lookup(context.Context, string) (provider.Evidence, error) {
	return provider.Evidence{}, nil
}

// A provider that does not say where its requests go has one fixed
// dispatch digest, never "" (which a ledger reads as "not recorded"), and
// no lookup digest.
func TestIdentityOfAProviderThatDoesNotSay(t *testing.T) {
	d, l := provider.IdentityOf(plain{})
	d2, _ := provider.IdentityOf(plain{})
	if d == "" || d != d2 || l != "" {
		t.Errorf("IdentityOf = %q %q (again %q); want one fixed dispatch digest and no lookup", d, l, d2)
	}
	if provider.IdentityChanges(d, (provider.Target{Kind: "http"}).Digest()) == nil {
		t.Error("an unnamed provider reads the same as an HTTP one")
	}
}
