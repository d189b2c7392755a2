package reconcile_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// accountAPI takes deliveries per account (its Stripe-Account header):
// an idempotency key is the account's, so the same key under another
// account is another charge. GET /lookup/{key} answers for the account
// asked.
type accountAPI struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]int // "account key"
}

func newAccountAPI(t *testing.T) *accountAPI {
	a := &accountAPI{got: map[string]int{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct := r.Header.Get("Stripe-Account")
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.Method == http.MethodPost {
			io.Copy(io.Discard, r.Body)
			a.got[acct+" "+r.Header.Get("Idempotency-Key")]++
			w.Write([]byte(`{"id":"ch_1"}`))
			return
		}
		if a.got[acct+" "+strings.TrimPrefix(r.URL.Path, "/lookup/")] == 0 {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"id":"ch_1"}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// deliveries lists the accounts that took a delivery, once per delivery.
func (a *accountAPI) deliveries() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, n := range a.got {
		acct, _, _ := strings.Cut(k, " ")
		for range n {
			out = append(out, acct)
		}
	}
	return out
}

// payments is provider "mailer" of one config, on the account its
// dispatch and lookup headers name.
func payments(t *testing.T, base, dispatchAcct, lookupAcct string) *httpapi.Provider {
	t.Helper()
	p, err := httpapi.New(httpapi.Config{Name: "mailer", HonoursKeys: true,
		Dispatch: httpapi.Endpoint{URL: base + "/send", RefPointer: "/id", Headers: map[string]string{"Stripe-Account": dispatchAcct}},
		Lookup:   &httpapi.Endpoint{URL: base + "/lookup/{downstream_key}", Headers: map[string]string{"Stripe-Account": lookupAcct}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// R11 H3: a header written in the config is part of where a claim's
// request went. A claim sent under Stripe-Account acct_ONE is not re-sent
// under its key by a config that says acct_TWO (the key is acct_ONE's:
// there it would be a second charge): held back, unknown, naming the
// headers; the claim's own config re-sends it. A lookup on another
// account cannot say "has nothing". A claim recorded before the headers
// were (the previous build's digest) is not held back for them: the
// upgrade does not make every claim in flight unknown.
func TestAClaimIsNotResentUnderAnotherAccountHeader(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		a := newAccountAPI(t)
		one := payments(t, a.srv.URL, "acct_ONE", "acct_ONE")
		worker := configWith(l, one)
		for _, key := range []string{"acct", "retry", "same", "old"} {
			claimFor(t, l, worker, key, time.Second)
		}
		// "old" as the previous build recorded it: no headers.
		id := one.Identity()
		id.Dispatch.Headers, id.Lookup.Headers = nil, nil
		ctx := context.Background()
		if err := l.st.WithTx(ctx, func(tx store.Tx) error {
			// A digest is hex, names, = and spaces: a literal as it is.
			_, err := tx.Exec(`UPDATE operations SET claim_dispatch_id = '` + id.Dispatch.Digest() + `', claim_lookup_id = '` + id.Lookup.Digest() + `' WHERE op_key = 'old'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Second)

		two := configWith(l, payments(t, a.srv.URL, "acct_TWO", "acct_TWO"))
		rep, err := two.SweepKeys(ctx, "acme", []string{"acct"})
		if err != nil || rep.Redispatched != 0 || rep.Unknown != 1 || rep.NotResent != 1 ||
			!strings.Contains(rep.NotResentWhy, "provider mailer sends elsewhere in this config than where the claim was sent (its headers changed since)") {
			t.Fatalf("sweep from a config on another account = %+v %v; want it held back, naming the headers", rep, err)
		}
		res, err := two.Call(ctx, notify("acme", "retry", "ops@example.com"), reconcile.CallOptions{Provider: "mailer"})
		if err != nil || res.Class != model.ClassUnknown || !strings.Contains(res.Message, "its headers changed since") {
			t.Fatalf("retry from a config on another account = %+v %v; want unknown, not re-sent", res, err)
		}
		if got := a.deliveries(); len(got) != 0 {
			t.Fatalf("deliveries %v; want none", got)
		}
		looker := configWith(l, payments(t, a.srv.URL, "acct_ONE", "acct_TWO"))
		looker.Grace = -1
		_, looked, err := looker.CheckAndRecord(ctx, "acme", "acct", "ops check by bob")
		if err != nil || looked.Finding.Kind != model.FindingCannotTell || !strings.Contains(looked.Finding.Detail, "(its headers changed since the request was sent)") {
			t.Fatalf("a lookup on another account: %+v %v; want cannot tell, naming the headers", looked.Finding, err)
		}

		rep, err = worker.SweepKeys(ctx, "acme", []string{"same", "old"})
		if err != nil || rep.Redispatched != 2 || rep.NotResent != 0 {
			t.Fatalf("sweep from the claims' own config (one recorded before headers were) = %+v %v; want both re-sent", rep, err)
		}
		if got := a.deliveries(); strings.Join(got, ",") != "acct_ONE,acct_ONE" {
			t.Errorf("deliveries %v; want two, both on acct_ONE", got)
		}
		for key, want := range map[string]model.State{"acct": model.StateUnknown, "retry": model.StateUnknown, "same": model.StateApplied, "old": model.StateApplied} {
			if op := l.op("acme", key); op.State != want {
				t.Errorf("%s: %s; want %s", key, op.State, want)
			}
		}
		if d, _ := provider.IdentityOf(one); l.op("acme", "same").ClaimDispatchID != d || !strings.Contains(d, "headers=") {
			t.Errorf("the re-claim recorded %q; want %q, with its headers", l.op("acme", "same").ClaimDispatchID, d)
		}
	})
}
