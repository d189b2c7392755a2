package reconcile_test

// A re-send of a claim whose earlier request got no definite answer (the
// reply was lost, the worker died) that comes back "nothing left" or "not
// taken" speaks of that re-send only: the earlier request's outcome is
// still unknown. Reviewer R4's repro: the provider's config says it
// honours keys (it does not really dedupe); A2's reply is lost and the
// claim released; a sweep from cron, where the provider's ${NAME} is
// unset, sends nothing — and the operation must not become not_applied,
// or a config where the provider ignores keys sends it a second time.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// answering is a provider that answers every dispatch with resp, sending
// nothing (an HTTP provider whose address refuses the connection answers
// "not sent"; a 503 is "busy"). forget, when set, makes its config stop
// saying it honours keys once a request was handed to it (a config
// reloaded while the request was out).
type answering struct {
	name    string
	honours atomic.Bool
	forget  bool
	resp    provider.Response
}

func newAnswering(name string, honours bool, resp provider.Response) *answering {
	p := &answering{name: name, resp: resp}
	p.honours.Store(honours)
	return p
}

func (p *answering) Name() string      { return p.name }
func (p *answering) HonoursKeys() bool { return p.honours.Load() }
func (p *answering) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	if p.forget {
		p.honours.Store(false)
	}
	return p.resp, nil
}
func (p *answering) Lookup(_ context.Context, key string) (provider.Evidence, error) {
	return provider.Evidence{Provider: p.name, DownstreamKey: key}, errors.New("cannot tell")
}

// withProvider is a service on l's ledger whose config has p as provider
// name (another process: a sweep from cron, a worker with another file).
func withProvider(l *ledger, name string, p provider.Provider) *reconcile.Service {
	reg := provider.Registry{}
	for k, v := range l.svc.Providers {
		reg[k] = v
	}
	reg[name] = p
	return reconcile.New(l.st, config.Default().Tools, reg)
}

var (
	notSentAnswer = provider.Response{Status: provider.NotApplied, Detail: "not sent: post http://127.0.0.1:1/send: dial tcp 127.0.0.1:1: connect: connection refused"}
	nothingAnswer = provider.Response{Status: provider.NotApplied, Detail: "HTTP 409: nothing was applied"}
	busyAnswer    = provider.Response{Status: provider.Busy, Detail: "HTTP 503"}
)

// lostReply makes A2 through a provider the config says honours keys but
// that does not dedupe (a second dispatch is a second delivery): the
// request is delivered, its reply lost, the claim released.
func lostReply(t *testing.T, l *ledger, key string) model.Request {
	t.Helper()
	req := notify("acme", key, "customer@example.com")
	worker := withProvider(l, "mail", saysHonours{l.sb.Provider("mail", false)})
	res, err := worker.Call(t.Context(), req, reconcile.CallOptions{Provider: "mail", Faults: provider.Faults{LoseReply: true}})
	if err != nil || res.Class != model.ClassInProgress || l.deliveries("acme", key) != 1 {
		t.Fatalf("A2: %+v %v, %d deliveries; want in_progress (released) and one delivery", res, err, l.deliveries("acme", key))
	}
	if op := l.op("acme", key); op.State != model.StateInProgress || op.LeaseOwner != "released" {
		t.Fatalf("A2 left %s (lease %q); want in_progress, released", op.State, op.LeaseOwner)
	}
	time.Sleep(5 * time.Millisecond) // the released lease is over
	return req
}

func TestAResendThatSendsNothingKeepsTheEarlierRequestsOutcomeOpen(t *testing.T) {
	for _, c := range []struct {
		name     string
		resp     provider.Response
		bySweep  bool
		sent     bool // the re-send left this process
		wantWhat string
	}{
		{"sweep, not sent", notSentAnswer, true, false, "connection refused"},
		{"sweep, nothing applied", nothingAnswer, true, true, ""},
		{"sweep, busy", busyAnswer, true, true, ""},
		{"call, not sent", notSentAnswer, false, false, ""},
		{"call, nothing applied", nothingAnswer, false, true, ""},
		{"call, busy", busyAnswer, false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			req := lostReply(t, l, "a2")
			resender := withProvider(l, "mail", newAnswering("mail", true, c.resp))
			if c.bySweep {
				rep, err := resender.Sweep(t.Context())
				wantRe, wantNot := 0, 1
				if c.sent {
					wantRe, wantNot = 1, 0
				}
				if err != nil || rep.Redispatched != wantRe || rep.NotSent != wantNot || rep.Unknown != 0 || !strings.Contains(rep.NotSentWhy, c.wantWhat) {
					t.Fatalf("sweep = %+v %v; want redispatched %d, not sent %d (%q)", rep, err, wantRe, wantNot, c.wantWhat)
				}
			} else {
				res, err := resender.Call(t.Context(), req, reconcile.CallOptions{})
				if err != nil || res.Class != model.ClassInProgress || !strings.Contains(res.Message, "earlier request") || !strings.Contains(res.Message, "still unknown") {
					t.Fatalf("re-send: %+v %v; want in_progress, saying the earlier request's outcome is still unknown", res, err)
				}
			}
			if op := l.op("acme", "a2"); op.State != model.StateInProgress || op.LeaseOwner != "released" {
				t.Fatalf("after the re-send: %s (lease %q); want in_progress, released — the earlier request's outcome is unknown", op.State, op.LeaseOwner)
			}
			// A config where the provider ignores keys must not send it again.
			time.Sleep(5 * time.Millisecond)
			res, err := withProvider(l, "mail", l.sb.Provider("mail", false)).Call(t.Context(), req, reconcile.CallOptions{})
			if err != nil || res.Class != model.ClassUnknown {
				t.Errorf("call from a config that ignores keys: %+v %v; want unknown", res, err)
			}
			if n := l.deliveries("acme", "a2"); n != 1 {
				t.Errorf("the provider holds %d deliveries; want 1", n)
			}
			if st := l.op("acme", "a2").State; st != model.StateUnknown {
				t.Errorf("state %s; want unknown", st)
			}
			l.audit()
		})
	}
}

// A config that stopped saying the provider honours keys while the re-send
// was out cannot keep the claim open to send again: the operation is
// unknown, never not_applied.
func TestAResendAnsweredNothingLeftWhereKeysAreNoLongerHonouredIsUnknown(t *testing.T) {
	for _, resp := range []provider.Response{notSentAnswer, nothingAnswer, busyAnswer} {
		t.Run(resp.Detail, func(t *testing.T) {
			l := newLedger(t)
			req := lostReply(t, l, "a2")
			p := newAnswering("mail", true, resp)
			p.forget = true
			res, err := withProvider(l, "mail", p).Call(t.Context(), req, reconcile.CallOptions{})
			if err != nil || res.Class != model.ClassUnknown || res.State != model.StateUnknown || !strings.Contains(res.Message, "still unknown") {
				t.Fatalf("re-send: %+v %v; want unknown, saying the earlier request's outcome is still unknown", res, err)
			}
			l.audit()
		})
	}
}

// Only where no earlier request may have reached the provider does
// "nothing left" mean not applied: a first request answered so is.
func TestAFirstRequestAnsweredNothingAppliedIsNotApplied(t *testing.T) {
	l := newLedger(t)
	p := newAnswering("mail", false, nothingAnswer)
	res, err := withProvider(l, "mail", p).Call(t.Context(), notify("acme", "first", "c@example.com"), reconcile.CallOptions{Provider: "mail"})
	if err != nil || res.State != model.StateNotApplied || res.Class != model.ClassInProgress {
		t.Fatalf("first request: %+v %v; want not_applied", res, err)
	}
	// From not_applied, a re-send answered the same way stays not_applied:
	// every earlier request was answered.
	res, err = withProvider(l, "mail", p).Call(t.Context(), notify("acme", "first", "c@example.com"), reconcile.CallOptions{})
	if err != nil || res.State != model.StateNotApplied {
		t.Fatalf("second request: %+v %v; want not_applied", res, err)
	}
}

// unsetSecret is an HTTP provider whose dispatch reads $MAILER_TOKEN,
// unset in this process, sending to srv.
func unsetSecret(t *testing.T, url string, env map[string]string) provider.Provider {
	t.Helper()
	p, err := httpapi.New(httpapi.Config{Name: "mail", HonoursKeys: true, Timeout: 5 * time.Second,
		Dispatch: httpapi.Endpoint{Method: "POST", URL: url + "/send", Headers: map[string]string{"Authorization": "Bearer ${MAILER_TOKEN}"}},
		Env:      func(n string) (string, bool) { v, ok := env[n]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	// The claim (lostReply) was made through a sandbox in a wrapper that
	// names no place (provider.Identifier): this one names none either, so
	// the re-send goes where the claim's request went (claimrecord_test.go
	// covers a place that changed); it keeps CanDispatch.
	return struct {
		provider.Provider
		provider.Checker
	}{p, p}
}

// A process that cannot dispatch to the provider at all (its ${NAME}
// unset: a sweep from cron, serve under systemd) is refused before it
// claims anything: a call writes nothing, a sweep leaves the claim as it
// is and reports it not sent.
func TestAProviderThatCannotDispatchHereIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	l := newLedger(t)
	req := lostReply(t, l, "a2")
	before := l.snapshot()
	unset := withProvider(l, "mail", unsetSecret(t, srv.URL, nil))

	rep, err := unset.Sweep(t.Context())
	if err != nil || rep.Redispatched != 0 || rep.Unknown != 0 || rep.NotSent != 1 || !strings.Contains(rep.NotSentWhy, "$MAILER_TOKEN") {
		t.Fatalf("sweep = %+v %v; want nothing re-sent, one not sent for $MAILER_TOKEN", rep, err)
	}
	// The process's configuration, not the request: class internal
	// (retry later, the same key), ErrCannotDispatch for the gateway's
	// 503 /problems/misconfigured.
	res, err := unset.Call(t.Context(), req, reconcile.CallOptions{})
	if !errors.Is(err, reconcile.ErrCannotDispatch) || res.Class != model.ClassInternal || !strings.Contains(res.Message, "$MAILER_TOKEN") || !strings.Contains(res.Message, "nothing was sent or written") {
		t.Fatalf("call = %+v %v; want refused, naming $MAILER_TOKEN", res, err)
	}
	res, err = unset.Call(t.Context(), notify("acme", "new", "c@example.com"), reconcile.CallOptions{Provider: "mail"})
	if !errors.Is(err, reconcile.ErrCannotDispatch) || res.Class != model.ClassInternal {
		t.Fatalf("new key = %+v %v; want refused", res, err)
	}
	if after := l.snapshot(); after != before || hits.Load() != 0 {
		t.Fatalf("a refused sweep or call wrote to the ledger (%d requests sent):\nbefore %s\nafter  %s", hits.Load(), before, after)
	}

	// With the secret set, the same sweep sends it under the same key.
	set := withProvider(l, "mail", unsetSecret(t, srv.URL, map[string]string{"MAILER_TOKEN": "s3cret"}))
	rep, err = set.Sweep(t.Context())
	if err != nil || rep.Redispatched != 1 || rep.NotSent != 0 || hits.Load() != 1 {
		t.Fatalf("sweep with the secret = %+v %v (%d requests); want one re-dispatch", rep, err, hits.Load())
	}
	if st := l.op("acme", "a2").State; st != model.StateApplied {
		t.Errorf("state %s; want applied", st)
	}
}

// A sweep's report stays what it was where everything was sent: no
// not_sent field.
func TestASweepReportWithNothingHeldBackHasNoNotSentField(t *testing.T) {
	l := newLedger(t)
	lostReply(t, l, "a2")
	rep, err := withProvider(l, "mail", saysHonours{l.sb.Provider("mail", true)}).Sweep(t.Context())
	if err != nil || rep.Redispatched != 1 || rep.NotSent != 0 {
		t.Fatalf("sweep = %+v %v; want one re-dispatch", rep, err)
	}
	b, err := json.Marshal(rep)
	if err != nil || strings.Contains(string(b), "not_sent") {
		t.Errorf("report %s %v; want no not_sent field", b, err)
	}
}

// The same for a claim whose worker died after its claim (its request may
// have left): the sweep's re-send answered "nothing applied" leaves it in
// progress.
func TestASweepsResendOfADeadWorkersClaimAnsweredNothingAppliedStaysInProgress(t *testing.T) {
	l := newLedger(t)
	worker := withProvider(l, "mail", saysHonours{l.sb.Provider("mail", false)})
	if err := l.st.WithTx(t.Context(), func(tx store.Tx) error {
		p, err := config.Default().Tools.Prepare(notify("acme", "dead", "c@example.com"))
		if err != nil {
			return err
		}
		_, err = worker.ClaimTx(tx, p, "mail", 0, l.st.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	rep, err := withProvider(l, "mail", newAnswering("mail", true, nothingAnswer)).Sweep(t.Context())
	if err != nil || rep.Redispatched != 1 || rep.Unknown != 0 {
		t.Fatalf("sweep = %+v %v; want one re-dispatch", rep, err)
	}
	if op := l.op("acme", "dead"); op.State != model.StateInProgress || op.LeaseOwner != "released" {
		t.Fatalf("after the sweep: %s (lease %q); want in_progress, released", op.State, op.LeaseOwner)
	}
	l.audit()
}

// A released claim (its request went unanswered, recorded as such) that a
// sweep may not re-send says it was released after that request, not that
// its lease ended "with no result recorded".
func TestAReleasedClaimMadeUnknownSaysItWasReleasedNotThatNothingWasRecorded(t *testing.T) {
	l := newLedger(t)
	lostReply(t, l, "a2")
	rep, err := withProvider(l, "mail", newAnswering("mail", false, nothingAnswer)).Sweep(t.Context())
	if err != nil || rep.Unknown != 1 {
		t.Fatalf("sweep = %+v %v; want the claim made unknown", rep, err)
	}
	d := l.detail("acme", "a2")
	last := d.Attempts[len(d.Attempts)-1]
	if last.Outcome != model.OutcomeLeaseExpired || strings.Contains(last.Error, "no result recorded") ||
		!strings.Contains(last.Error, "claim released") || !strings.Contains(last.Error, "no definite answer") {
		t.Errorf("last attempt %s %q; want it to say the claim was released after a request with no definite answer", last.Outcome, last.Error)
	}
}
