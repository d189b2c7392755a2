package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
)

// Target is where a provider sends one kind of its requests (its
// dispatches, or its lookups): what a ledger records with a claim, so that
// a process whose config points the provider elsewhere (another host,
// another URL) does not send the claim again there — where its key is not
// known — and a lookup that asks elsewhere does not answer "has nothing"
// for it. Empty fields say nothing.
type Target struct {
	Kind      string // "http", "sandbox"
	Method    string // GET, POST, …
	Scheme    string // http, https
	Host      string // host[:port], as configured
	URL       string // the URL template after the host (path and query), as configured
	KeyHeader string // a dispatch: the header that carries the downstream key
	// Headers are the headers the config writes, name to value as written
	// (a ${NAME} as its name, never its value): an account header
	// (Stripe-Account) is as much where a request goes as its host. Nil:
	// not recorded — a target without headers (the sandbox), or one from
	// before headers were recorded; an HTTP target records an empty map
	// when it has none (adding an account header is a change too).
	Headers map[string]string
}

// Identity is where a provider sends its dispatches and its lookups.
type Identity struct {
	Dispatch Target
	Lookup   *Target // nil: the provider has no lookup
}

// Identifier is an optional interface of a Provider that says where its
// requests go (the HTTP provider, the sandbox).
type Identifier interface {
	Identity() Identity
}

// The fields of a digest, in order, with the words that name them. A
// field added since digests were first recorded (later) is compared only
// when the recorded digest has it: a claim recorded before it was is held
// to the fields it recorded, not all held back at the upgrade.
var targetFields = []struct {
	key, words string
	later      bool
}{
	{"kind", "kind", false}, {"method", "method", false}, {"scheme", "scheme", false}, {"host", "host", false},
	{"url", "URL template", false}, {"key", "key header", false}, {"headers", "headers", true},
}

func (t Target) values() []string {
	return []string{strings.ToLower(t.Kind), strings.ToUpper(t.Method), strings.ToLower(t.Scheme),
		strings.ToLower(t.Host), t.URL, strings.ToLower(t.KeyHeader), headerText(t.Headers)}
}

// headerText is headers as one text to digest: each name in its canonical
// case, in order, with its value without surrounding spaces; "" for nil
// (not recorded), never "" for an empty map.
func headerText(h map[string]string) string {
	if h == nil {
		return ""
	}
	lines := make([]string, 0, len(h))
	for k, v := range h {
		lines = append(lines, http.CanonicalHeaderKey(strings.TrimSpace(k))+": "+strings.TrimSpace(v))
	}
	sort.Strings(lines)
	return "headers\n" + strings.Join(lines, "\n")
}

// Digest is t as the ledger records it: each field that says something as
// "name=" and a digest of its value (which may hold an API key written in
// the URL: it is never stored as it is), space-separated, in a fixed
// order — so that two digests tell which fields differ (IdentityChanges).
func (t Target) Digest() string {
	var b strings.Builder
	for i, v := range t.values() {
		if v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		h := sha256.Sum256([]byte(targetFields[i].key + "\x00" + v))
		b.WriteString(targetFields[i].key + "=" + hex.EncodeToString(h[:8]))
	}
	return b.String()
}

// unnamed is the Target of a provider that does not say where its requests
// go (not an Identifier: a Go program's own provider).
var unnamed = Target{Kind: "unnamed"}

// IdentityOf is the digests of where p sends its dispatches and its
// lookups (Target.Digest). A provider that does not say (not an
// Identifier) has one fixed dispatch digest — the same for every such
// provider, so its claims compare equal to each other's and differ from
// an HTTP or sandbox provider's — and no lookup digest; a provider without
// a lookup has none ("").
func IdentityOf(p Provider) (dispatch, lookup string) {
	id, ok := p.(Identifier)
	if !ok {
		return unnamed.Digest(), ""
	}
	i := id.Identity()
	dispatch = i.Dispatch.Digest()
	if dispatch == "" {
		dispatch = unnamed.Digest()
	}
	if i.Lookup != nil {
		lookup = i.Lookup.Digest()
	}
	return dispatch, lookup
}

// IdentityChanges names what differs between two digests of Target.Digest
// ("host", "URL template", …), in the fields' order; nil when they are
// the same. A digest it cannot read differs as a whole ("where it is
// sent"). Another kind of provider (a sandbox file then, an HTTP API now)
// is "kind" alone: the other fields of another kind say nothing more.
func IdentityChanges(recorded, current string) []string {
	if recorded == current {
		return nil
	}
	r, rok := digestFields(recorded)
	c, cok := digestFields(current)
	if !rok || !cok {
		return []string{"where it is sent"}
	}
	if r["kind"] != c["kind"] {
		return []string{"kind"}
	}
	var out []string
	for _, f := range targetFields {
		if _, recorded := r[f.key]; f.later && !recorded {
			delete(c, f.key) // not recorded then: not compared
			continue
		}
		if r[f.key] != c[f.key] {
			out = append(out, f.words)
		}
	}
	if out == nil && !sameFields(r, c) {
		out = []string{"where it is sent"} // a field this build does not know
	}
	return out
}

func sameFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func digestFields(d string) (map[string]string, bool) {
	m := map[string]string{}
	for _, kv := range strings.Fields(d) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, false
		}
		m[k] = v
	}
	return m, true
}
