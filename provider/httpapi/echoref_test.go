package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// R11 M1: an API that echoes the credentials it was sent where the
// reference is read (201 {"id": "<the Authorization value>"}) does not get
// them stored: a reference is kept with the operation, its attempt and
// its receipt, replayed and shown everywhere. One that holds a secret
// (whole, inside it, or escaped as the API's encoder writes it) is not
// taken — not masked either: a masked reference would name another record
// to a lookup by {provider_ref}. The call is applied without one, the
// detail says why; a lookup finds the effect without one.
func TestAReferenceThatHoldsASecretIsNotTaken(t *testing.T) {
	const token = "SeCrEt+TokEn/0123456789"
	const literal = "acct_literal_0123456789"
	for _, c := range []struct {
		name, id string
		taken    bool
	}{
		{"the Authorization value", "Bearer " + token, false},
		{"the token alone", token, false},
		{"the token inside", "ch_" + token + "_1", false},
		{"the token URL-escaped", "SeCrEt%2BTokEn%2F0123456789", false},
		{"a literal header value", literal, false},
		{"an ordinary reference", "ch_1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusCreated)
				json.NewEncoder(w).Encode(map[string]string{"id": c.id})
			}))
			defer srv.Close()
			env := func(k string) (string, bool) { return token, k == "PAY_TOKEN" }
			h := map[string]string{"Authorization": "Bearer ${PAY_TOKEN}", "X-Account": literal}
			p, err := httpapi.New(httpapi.Config{Name: "pay", Timeout: time.Second, Env: env,
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", RefPointer: "/id", Headers: h},
				Lookup:   &httpapi.Endpoint{URL: srv.URL + "/send/{downstream_key}", RefPointer: "/id", Headers: h}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			ev, lerr := p.Lookup(context.Background(), "k")
			if err != nil || resp.Status != provider.Applied || lerr != nil || !ev.Found {
				t.Fatalf("dispatch %+v %v, lookup %+v %v; want applied and found", resp, err, ev, lerr)
			}
			if c.taken {
				if resp.Ref != c.id || ev.Ref != c.id {
					t.Errorf("references %q %q; want %q", resp.Ref, ev.Ref, c.id)
				}
				return
			}
			for what, s := range map[string]string{"dispatch ref": resp.Ref, "dispatch detail": resp.Detail, "lookup ref": ev.Ref, "lookup detail": ev.Detail} {
				if strings.Contains(s, "0123456789") || strings.Contains(s, "SeCrEt") {
					t.Errorf("%s %q holds the secret", what, s)
				}
			}
			if resp.Ref != "" || ev.Ref != "" || !strings.Contains(resp.Detail, "/id in the response holds a value this provider sends as a secret") {
				t.Errorf("dispatch %q %q, lookup %q %q; want no reference, saying why", resp.Ref, resp.Detail, ev.Ref, ev.Detail)
			}
		})
	}
}

// R11 L1: a body cut at max_response_bytes (or broken off) may end in the
// middle of a secret it echoes: the part before the cut is masked too,
// as written or cut inside an escape.
func TestASecretCutByTheSizeCapIsMasked(t *testing.T) {
	const token = "SeCrEt+TokEn-0123456789"
	for _, c := range []struct {
		name, body string
		max        int64
		want       string
	}{
		{"cut in the token", "Authorization=Bearer " + token + " refused", 30, "Authorization=Bearer ***"},
		{"cut after its first character", "Authorization=Bearer " + token + " refused", 22, "Authorization=Bearer ***"},
		{"cut in an escape", `{"echo":"SeCrEt\u002BTokEn-0123456789"}`, 19, `{"echo":"***`},
		{"cut after an escape", `{"echo":"SeCrEt\u002BTokEn-0123456789"}`, 22, `{"echo":"***`},
		{"cut in a literal header value", "key sk_live_literal_0123456789 refused", 20, "key ***"},
		{"cut in an escaped mojibake", `{"e":"caf\u00c3\u00a9-0123456789"}`, 19, `{"e":"***`},
		{"cut in a surrogate pair", `{"e":"caf\ud83d\ude00-0123456789"}`, 17, `{"e":"***`},
		{"cut in a character of the secret", "token café-0123456789 refused", 10, "token ***"},
		{"cut in a character of the text", "token ouvré", 11, "token ouvr"},
		{"not cut", "Authorization=Bearer " + token + " refused", 100, "Authorization=Bearer *** refused"},
		{"cut after the token", "Authorization=Bearer " + token + " refused", 48, "Authorization=Bearer *** ref"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			env := func(k string) (string, bool) {
				switch k {
				case "PAY_TOKEN":
					return token, true
				case "CAFE":
					return "café-0123456789", true
				case "SMILE":
					return "caf😀-0123456789", true
				}
				return "", false
			}
			p, err := httpapi.New(httpapi.Config{Name: "pay", Timeout: time.Second, Env: env, MaxResponseBytes: c.max,
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/send", Headers: map[string]string{"Authorization": "Bearer ${PAY_TOKEN}",
					"X-Key": "sk_live_literal_0123456789", "X-Cafe": "${CAFE}", "X-Smile": "${SMILE}"}}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			if err != nil || resp.Status != provider.Rejected {
				t.Fatalf("%+v %v; want failed", resp, err)
			}
			if want := "HTTP 400: " + c.want; resp.Detail != want {
				t.Errorf("detail %q; want %q", resp.Detail, want)
			}
		})
	}
}
