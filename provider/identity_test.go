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
		// Another kind of provider is somewhere else altogether: its kind
		// is the change, not each field a kind has or lacks.
		{"kind", func(x *provider.Target) { *x = provider.Target{Kind: "sandbox"} }, []string{"kind"}},
		{"kind, same fields", func(x *provider.Target) { x.Kind = "sandbox" }, []string{"kind"}},
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

// R11 H3: the headers written in the config are part of where a request
// goes (an account header: Stripe-Account, an idempotency key is per
// account), names and values as written — a ${NAME} as its name, never
// its value. A target that records its headers records them even when
// there are none (adding an account header is a change too); a digest
// recorded before headers were (no headers field) is not held to them.
func TestIdentityDigestsHoldTheConfiguredHeaders(t *testing.T) {
	base := provider.Target{Kind: "http", Method: "POST", Scheme: "https", Host: "api.example.com", URL: "/v1/charges",
		KeyHeader: "Idempotency-Key", Headers: map[string]string{"Stripe-Account": "acct_ONE", "Authorization": "Bearer ${STRIPE_KEY}"}}
	d := base.Digest()
	if strings.Contains(d, "acct_ONE") || strings.Contains(d, "STRIPE_KEY") || !strings.Contains(d, " headers=") {
		t.Fatalf("digest %q: want a headers field holding no value", d)
	}
	with := func(h map[string]string) string {
		x := base
		x.Headers = h
		return x.Digest()
	}
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    []string
	}{
		{"the same", map[string]string{"Authorization": "Bearer ${STRIPE_KEY}", "Stripe-Account": "acct_ONE"}, nil},
		{"names in another case, values padded", map[string]string{"authorization": "Bearer ${STRIPE_KEY}", "STRIPE-ACCOUNT": " acct_ONE "}, nil},
		{"another account", map[string]string{"Authorization": "Bearer ${STRIPE_KEY}", "Stripe-Account": "acct_TWO"}, []string{"headers"}},
		{"the account header gone", map[string]string{"Authorization": "Bearer ${STRIPE_KEY}"}, []string{"headers"}},
		{"another variable", map[string]string{"Authorization": "Bearer ${OTHER_KEY}", "Stripe-Account": "acct_ONE"}, []string{"headers"}},
		{"none", map[string]string{}, []string{"headers"}},
	} {
		if got := provider.IdentityChanges(d, with(c.headers)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: changes %q; want %q", c.name, got, c.want)
		}
	}
	none := with(map[string]string{})
	if !strings.Contains(none, " headers=") {
		t.Errorf("no headers: %q; want the field recorded all the same", none)
	}
	if got := provider.IdentityChanges(none, d); !reflect.DeepEqual(got, []string{"headers"}) {
		t.Errorf("an account header added: changes %q; want headers", got)
	}
	// A digest from before headers were recorded: the same place, as it
	// was; any other field still counts.
	old := with(nil)
	if strings.Contains(old, "headers") {
		t.Fatalf("a target that records no headers: %q", old)
	}
	if got := provider.IdentityChanges(old, d); got != nil {
		t.Errorf("recorded before headers were: changes %q; want none", got)
	}
	moved := base
	moved.Host = "api2.example.com"
	if got := provider.IdentityChanges(old, moved.Digest()); !reflect.DeepEqual(got, []string{"host"}) {
		t.Errorf("recorded before headers were, host moved: %q; want host", got)
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
