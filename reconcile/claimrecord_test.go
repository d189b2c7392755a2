package reconcile_test

// A claim records, in the config of the process that made it, until when
// its provider may still apply its request and where its request and its
// lookup went (model.Operation.ClaimApplyBy, ClaimDispatchID,
// ClaimLookupID). A process with another config — a shorter provider
// timeout, another host or URL — neither trusts a lookup's "has nothing"
// the claim's own config would not have trusted yet, nor re-sends the
// claim elsewhere, nor takes "has nothing" from a lookup that asks
// elsewhere.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// api is an HTTP provider's server: POST /send takes a delivery under its
// Idempotency-Key (or, with hold, keeps the request until the client
// gives up, taking nothing); GET /lookup/{key} answers 200 for a key it
// holds, 404 for one it does not.
type api struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     map[string]int
	hold    bool
	release chan struct{} // closed at the test's end: held requests end
}

func newAPI(t *testing.T) *api {
	a := &api{got: map[string]int{}, release: make(chan struct{})}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		hold := a.hold
		a.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && hold:
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-a.release:
			}
		case r.Method == http.MethodPost:
			a.mu.Lock()
			a.got[r.Header.Get("Idempotency-Key")]++
			a.mu.Unlock()
			w.Write([]byte(`{"id":"msg_1"}`))
		default:
			key := strings.TrimPrefix(r.URL.Path, "/lookup/")
			a.mu.Lock()
			n := a.got[key]
			a.mu.Unlock()
			if n == 0 {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Write([]byte(`{"id":"msg_1"}`))
		}
	}))
	t.Cleanup(a.srv.Close)
	t.Cleanup(func() { close(a.release) }) // first
	return a
}

func (a *api) deliveries() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, v := range a.got {
		n += v
	}
	return n
}

// mailer is provider "mailer" of one config: dispatches to base+path,
// lookups at lookupBase+/lookup/{downstream_key}.
func mailer(t *testing.T, base, path, lookupBase string, timeout time.Duration, honours bool) provider.Provider {
	t.Helper()
	p, err := httpapi.New(httpapi.Config{Name: "mailer", Timeout: timeout, HonoursKeys: honours,
		Dispatch: httpapi.Endpoint{URL: base + path, RefPointer: "/id"},
		Lookup:   &httpapi.Endpoint{URL: lookupBase + "/lookup/{downstream_key}"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func configWith(l *ledger, p provider.Provider) *reconcile.Service {
	return reconcile.New(l.st, config.Default().Tools, provider.Registry{"mailer": p})
}

// claimFor makes acme/key's claim through svc's "mailer" with a lease of
// lease, sending nothing (a worker that stopped after its claim).
func claimFor(t *testing.T, l *ledger, svc *reconcile.Service, key string, lease time.Duration) {
	t.Helper()
	if err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		p, err := config.Default().Tools.Prepare(notify("acme", key, "ops@example.com"))
		if err != nil {
			return err
		}
		_, err = svc.ClaimTx(tx, p, "mailer", lease, l.st.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// R4's repro of D2: a call through a config whose provider timeout is
// 90 s times out (the reply is delayed past the call's own timeout) and is
// unknown; 31 s later an operator's config says the provider times out
// after 5 s. Its grace (30 s after the request) is over, but the claim's
// config gave the provider until the lease end plus 90 s: a lookup that
// finds nothing before then is "cannot tell", not "has nothing" — which
// would let a person mark it not applied and the next call send it again
// while the first request may still land. After that time it is a
// finding. A claim from before the ledger recorded it (NULL) keeps the
// looking config's grace.
func TestTheGraceAfterARequestIsTheClaimsConfigsWhenLonger(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		a := newAPI(t)
		a.hold = true
		worker := configWith(l, mailer(t, a.srv.URL, "/send", a.srv.URL, 90*time.Second, false))
		ctx := context.Background()
		for _, key := range []string{"k", "old"} {
			// The caller stops waiting long before the provider's 90 s.
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			res, err := worker.Call(cctx, notify("acme", key, "ops@example.com"), reconcile.CallOptions{Provider: "mailer"})
			cancel()
			if err != nil || res.Op == nil || res.Op.State != model.StateUnknown {
				t.Fatalf("set-up %s: %+v %v; want unknown", key, res, err)
			}
		}
		want := clk.Now().Add(reconcile.DefaultLease + 90*time.Second).Truncate(time.Millisecond)
		if got := l.op("acme", "k").ClaimApplyBy; !got.Equal(want) {
			t.Fatalf("the claim recorded apply-by %v; want its lease end plus the 90 s timeout, %v", got, want)
		}
		if err := l.st.WithTx(ctx, func(tx store.Tx) error {
			_, err := tx.Exec(`UPDATE operations SET claim_apply_by = NULL WHERE op_key = 'old'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		operator := configWith(l, mailer(t, a.srv.URL, "/send", a.srv.URL, 5*time.Second, false))
		clk.Advance(31 * time.Second)
		_, looked, err := operator.CheckAndRecord(ctx, "acme", "k", "ops resolve --check by bob")
		if err != nil || looked.Finding.Kind != model.FindingCannotTell || !looked.InFlight ||
			!strings.Contains(looked.Err.Error(), "ask again after "+want.UTC().Format(time.RFC3339)) {
			t.Fatalf("lookup 31 s on, under a 5 s config: %+v in_flight=%v err=%v %v; want cannot tell until %v",
				looked.Finding, looked.InFlight, looked.Err, err, want)
		}
		// A decision's grace is the lookup's: "not applied" on a ticket is
		// refused until the same time (R6 D1: it used the deciding
		// config's grace alone, and the next call sent it again).
		d := decision(l.op("acme", "k"))
		d.WithinGrace, d.Evidence = false, "INC-3: the provider dropped it"
		var refusal *reconcile.GraceRefusal
		if _, err := operator.MarkNotApplied(ctx, d); !errors.As(err, &refusal) || !refusal.Until.Equal(want) {
			t.Fatalf("not applied 31 s on, under a 5 s config: %v; want refused within the grace until %v", err, want)
		}
		if g, err := operator.GraceOf(ctx, "acme", "k"); err != nil || !g.Until.Equal(want) {
			t.Errorf("GraceOf (the console's and --dry-run's): until %v %v; want %v", g.Until, err, want)
		}
		if _, looked, err := operator.CheckAndRecord(ctx, "acme", "old", "ops resolve --check by bob"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Errorf("a claim without the record, 31 s on: %+v %v; want has nothing, as before", looked.Finding, err)
		}
		clk.Advance(want.Sub(clk.Now()) + time.Second)
		if _, looked, err := operator.CheckAndRecord(ctx, "acme", "k", "ops resolve --check by bob"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Errorf("lookup after the claim's grace: %+v %v; want has nothing", looked.Finding, err)
		}
	})
}

// A later claim keeps the later time: a re-claim through a config with a
// shorter grace does not shorten what an earlier request may still do.
func TestAClaimKeepsTheLaterApplyByOfAnEarlierOne(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	a := newAPI(t)
	slow := configWith(l, mailer(t, a.srv.URL, "/send", a.srv.URL, 5*time.Minute, true))
	claimFor(t, l, slow, "k", time.Second)
	first := l.op("acme", "k").ClaimApplyBy
	if want := clk.Now().Add(time.Second + 5*time.Minute).Truncate(time.Millisecond); !first.Equal(want) {
		t.Fatalf("apply-by %v; want %v", first, want)
	}
	clk.Advance(2 * time.Second)
	fast := configWith(l, mailer(t, a.srv.URL, "/send", a.srv.URL, 5*time.Second, true))
	rep, err := fast.Sweep(context.Background())
	if err != nil || rep.Redispatched != 1 {
		t.Fatalf("sweep = %+v %v; want the claim re-sent", rep, err)
	}
	if got := l.op("acme", "k").ClaimApplyBy; !got.Equal(first) {
		t.Errorf("after a re-claim under a 5 s config: apply-by %v; want the earlier, later %v", got, first)
	}
}

// R4's D3: a claim whose provider honours keys is re-sent under its key
// only where the claim's request went. A sweep or retry from a config
// that points the provider at another host (or another URL) holds it
// back — unknown, with the reason naming what changed — and sends
// nothing there; the same config re-sends it as before. A claim from
// before the ledger recorded where it went is not re-sent either.
func TestAClaimIsResentOnlyWhereItsRequestWent(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		first, other := newAPI(t), newAPI(t)
		worker := configWith(l, mailer(t, first.srv.URL, "/send", first.srv.URL, 0, true))
		for _, key := range []string{"host", "path", "retry", "same", "old"} {
			claimFor(t, l, worker, key, time.Second)
		}
		if err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
			_, err := tx.Exec(`UPDATE operations SET claim_dispatch_id = NULL WHERE op_key = 'old'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Second)
		ctx := context.Background()

		moved := configWith(l, mailer(t, other.srv.URL, "/send", other.srv.URL, 0, true))
		rep, err := moved.SweepKeys(ctx, "acme", []string{"host"})
		if err != nil || rep.Redispatched != 0 || rep.Unknown != 1 || rep.NotResent != 1 ||
			!strings.Contains(rep.NotResentWhy, "provider mailer sends elsewhere in this config than where the claim was sent (its host changed since)") {
			t.Fatalf("sweep from a config on another host = %+v %v; want it held back, naming the host", rep, err)
		}
		repath := configWith(l, mailer(t, first.srv.URL, "/v2/send", first.srv.URL, 0, true))
		rep, err = repath.SweepKeys(ctx, "acme", []string{"path"})
		if err != nil || rep.NotResent != 1 || !strings.Contains(rep.NotResentWhy, "(its URL template changed since)") {
			t.Fatalf("sweep from a config with another URL = %+v %v; want it held back, naming the URL", rep, err)
		}
		res, err := moved.Call(ctx, notify("acme", "retry", "ops@example.com"), reconcile.CallOptions{Provider: "mailer"})
		if err != nil || res.Class != model.ClassUnknown || res.Outcome != model.OutcomeLeaseExpired || !strings.Contains(res.Message, "its host changed since") {
			t.Fatalf("retry from a config on another host = %+v %v; want unknown, not re-sent, with the reason", res, err)
		}
		rep, err = moved.SweepKeys(ctx, "acme", []string{"old"})
		if err != nil || rep.NotResent != 1 || !strings.Contains(rep.NotResentWhy, "older than schema 13") {
			t.Fatalf("sweep of a claim without the record = %+v %v; want it held back", rep, err)
		}
		if n := other.deliveries(); n != 0 {
			t.Errorf("the other host took %d deliveries; want none", n)
		}
		for _, key := range []string{"host", "path", "retry", "old"} {
			if op := l.op("acme", key); op.State != model.StateUnknown {
				t.Errorf("%s: %s; want unknown", key, op.State)
			}
		}
		rep, err = worker.SweepKeys(ctx, "acme", []string{"same"})
		if err != nil || rep.Redispatched != 1 || rep.NotResent != 0 {
			t.Fatalf("sweep from the claim's own config = %+v %v; want it re-sent", rep, err)
		}
		if op := l.op("acme", "same"); op.State != model.StateApplied || first.deliveries() != 1 {
			t.Errorf("after the re-send: %s, %d deliveries; want applied, one", op.State, first.deliveries())
		}
	})
}

// A lookup that asks elsewhere than the one recorded with the claim (its
// host or URL changed) cannot say "has nothing" about the request: that
// API would not know it. Found there is still evidence; the lookup the
// claim recorded answers as before, and so does any lookup of a claim
// from before the record (NULL).
func TestALookupThatAsksElsewhereCannotSayHasNothing(t *testing.T) {
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		clk := newClock()
		l := mk(clk)
		first, other := newAPI(t), newAPI(t)
		worker := configWith(l, mailer(t, first.srv.URL, "/send", first.srv.URL, 0, false))
		for _, key := range []string{"k", "old"} {
			claimFor(t, l, worker, key, time.Second)
		}
		ctx := context.Background()
		if err := l.st.WithTx(ctx, func(tx store.Tx) error {
			_, err := tx.Exec(`UPDATE operations SET claim_lookup_id = NULL WHERE op_key = 'old'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Second)
		if _, err := worker.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		looker := func(lookupBase string) *reconcile.Service {
			s := configWith(l, mailer(t, first.srv.URL, "/send", lookupBase, 0, false))
			s.Grace = -1 // after the grace: only the lookup's own word counts
			return s
		}
		moved := looker(other.srv.URL)
		_, looked, err := moved.CheckAndRecord(ctx, "acme", "k", "ops check by bob")
		if err != nil || looked.Finding.Kind != model.FindingCannotTell ||
			!strings.Contains(looked.Finding.Detail, "provider mailer's lookup in this config is not the one recorded with the claim (its host changed since the request was sent)") {
			t.Fatalf("a lookup on another host: %+v %v; want cannot tell, naming the host", looked.Finding, err)
		}
		if _, _, err := moved.Check(ctx, "acme", "k"); err == nil || !strings.Contains(err.Error(), "cannot tell") {
			t.Errorf("Check on another host: %v; want cannot tell", err)
		}
		if _, looked, err := moved.CheckAndRecord(ctx, "acme", "old", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Errorf("a claim without the record, on another host: %+v %v; want has nothing, as before", looked.Finding, err)
		}
		if _, looked, err := looker(first.srv.URL).CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasNothing {
			t.Errorf("the recorded lookup: %+v %v; want has nothing", looked.Finding, err)
		}
		id, err := l.st.LedgerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other.mu.Lock()
		other.got[reconcile.DownstreamKey(id, "acme", "k")] = 1
		other.mu.Unlock()
		if _, looked, err := moved.CheckAndRecord(ctx, "acme", "k", "ops check by bob"); err != nil || looked.Finding.Kind != model.FindingHasIt {
			t.Errorf("found on another host: %+v %v; want has it", looked.Finding, err)
		}
	})
}
