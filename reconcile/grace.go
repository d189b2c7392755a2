package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// DefaultDispatchGrace is how long after a request's wait ended (its
// claim's lease end, or its answer) a provider may still apply it, for a
// provider whose config names no request timeout: within it, a lookup that
// finds nothing is "cannot tell". The client stops waiting at the lease
// end; the provider does not stop processing.
const DefaultDispatchGrace = 30 * time.Second

// RequestTimeouter is an optional interface of a Provider that knows how
// long one of its requests may take (the HTTP provider: its configured
// timeout): the grace after a dispatch (DispatchGrace) is that when it is
// longer than DefaultDispatchGrace.
type RequestTimeouter interface {
	RequestTimeout() time.Duration
}

// DispatchGrace is the grace after the latest request of an operation of
// provider name during which a lookup's "has nothing" is "cannot tell":
// Service.Grace when set, else DefaultDispatchGrace or the provider's
// request timeout where it names a longer one — and never less than the
// lease or the dispatch timeout.
func (s *Service) DispatchGrace(name string) time.Duration {
	if s.Grace != 0 {
		return max(s.Grace, 0)
	}
	g := DefaultDispatchGrace
	if prov, err := s.Providers.Get(name); err == nil {
		if rt, ok := prov.(RequestTimeouter); ok && rt.RequestTimeout() > g {
			g = rt.RequestTimeout()
		}
	}
	for _, d := range []time.Duration{s.Lease, s.DispatchTimeout} {
		if d > g {
			g = d
		}
	}
	return g
}

// graceUntil is when the grace after a request of provider name whose
// wait ended at waited ends: waited plus this config's DispatchGrace, or
// later where a claim of the operation (any of ops) recorded that its
// provider may still apply its request after that
// (model.Operation.ClaimApplyBy: the lease and the grace of the config
// that sent it — a provider timeout this config no longer names, a longer
// lease). A claim from before the ledger recorded it has the lease it
// recorded while in_progress (lastRequest) and this config's grace.
//
// byClaim says which anchor it is, for the words: false, the wait's end
// plus grace; true, a claim's apply-by, later than that.
func (s *Service) graceUntil(name string, waited time.Time, ops ...*model.Operation) (until time.Time, grace time.Duration, byClaim bool) {
	grace = s.DispatchGrace(name)
	until = waited.Add(grace)
	for _, op := range ops {
		if op != nil && op.ClaimApplyBy.After(until) {
			until, byClaim = op.ClaimApplyBy, true
		}
	}
	return until, grace, byClaim
}

// graceWords says where until comes from, after "the client stopped
// waiting at W": this config's grace after W, or the claim's apply-by.
func graceWords(until time.Time, grace time.Duration, byClaim bool) string {
	if byClaim {
		return fmt.Sprintf("the claim that sent it recorded that the provider may apply it until %s (its lease end plus the grace of the config that sent it)", until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the provider does not stop processing, and may apply it for %v after that", grace)
}

// requestGrace is the one reading of the grace that lookups (withinGrace)
// and decisions (GraceFrom) share — the two must never disagree: the
// latest request's send time and wait end (lastRequest), and when its
// grace ends (graceUntil: never before a claim's recorded apply-by). Zero
// times: there is no request the provider never answered.
func (s *Service) requestGrace(provider string, attempts []model.Attempt, ops ...*model.Operation) RequestGrace {
	var g RequestGrace
	g.Sent, g.Waited = lastRequest(attempts, s.Lease, ops...)
	if g.Sent.IsZero() && g.Waited.IsZero() {
		return g
	}
	g.Until, g.grace, g.byClaim = s.graceUntil(provider, g.Waited, ops...)
	return g
}

// requestOutcomes are the outcomes of the attempts lastRequest reads —
// it skips every other one: what a batched read of many operations'
// requests (store.Ledger.RequestHistories) asks the ledger for.
var requestOutcomes = []model.Outcome{model.OutcomeDispatched, model.OutcomeRedispatched, model.OutcomeTimedOut, model.OutcomeLateResult}

// lastRequest is when op's latest request that the provider never
// answered definitely was sent, and when the client's wait for it ended
// at the latest, from the recorded attempts (and op's lease while
// in_progress): zero if there is none. A definite answer (applied,
// failed, not applied, busy) ends the provider's work on its request. The
// wait's end is the safer anchor for the grace: a request may leave as
// late as just before its claim's lease ends (a worker paused after its
// claim), and the provider may still be processing it after the client
// stopped waiting. A claim never answered (a worker gone, a sweep's
// lease_expired since) waited until its lease end: op's lease while it is
// in_progress, else its start plus lease (this service's; the claim's own
// lease and grace are in its ClaimApplyBy, which graceUntil counts).
func lastRequest(attempts []model.Attempt, lease time.Duration, ops ...*model.Operation) (sent, waited time.Time) {
	for _, a := range attempts {
		var end time.Time
		switch {
		case a.Outcome == model.OutcomeDispatched || a.Outcome == model.OutcomeRedispatched:
			end = a.StartedAt.Add(lease)
			for _, op := range ops {
				if op != nil && op.State == model.StateInProgress && op.LeaseUntil.After(end) {
					end = op.LeaseUntil
				}
			}
		case a.Outcome == model.OutcomeTimedOut,
			a.Outcome == model.OutcomeLateResult && a.ProviderRef == "" && strings.Contains(a.Error, "no definite answer"):
			end = a.StartedAt.Add(a.Duration)
		default:
			continue
		}
		if a.StartedAt.After(sent) {
			sent = a.StartedAt
		}
		if end.After(waited) {
			waited = end
		}
	}
	return sent, waited
}

// withinGrace reports whether a lookup begun at since is within the grace
// after op's latest request (its wait's end + DispatchGrace), and says so
// for the finding's words. A ledger that cannot list the attempts is
// within it: no evidence is safer than a wrong "has nothing".
func (s *Service) withinGrace(ctx context.Context, op, after *model.Operation, since time.Time) (string, bool) {
	if s.Grace < 0 {
		return "", false
	}
	d, err := s.Store.DetailByID(ctx, op.ID)
	if err != nil {
		if model.IsCode(err, model.CodeNotFound) {
			return "", false
		}
		return fmt.Sprintf("its requests could not be read (%v)", err), true
	}
	g := s.requestGrace(op.Provider, d.Attempts, op, after, &d.Operation)
	if g.Until.IsZero() || !since.Before(g.Until) {
		return "", false
	}
	return fmt.Sprintf("a request sent at %s, waited for until %s, may still be applied by the provider (%s); ask again after %s",
		g.Sent.UTC().Format(time.RFC3339), g.Waited.UTC().Format(time.RFC3339), graceWords(g.Until, g.grace, g.byClaim), g.Until.UTC().Format(time.RFC3339)), true
}

// errGrace is the "cannot tell" of a lookup that found nothing within the
// grace after the latest request (withinGrace's why).
func errGrace(why string) error {
	return fmt.Errorf("cannot tell: %s — the provider had nothing under the key yet, but the request may still be on its way or being processed; no evidence either way", why)
}

// GraceEnv names the environment variable that sets Service.Grace for a
// process (New): a duration ("45s"); "0" is no grace at all — only for a
// provider known to drop a request whose client stopped waiting, and for
// tests that mean a lookup after the grace. Anything else is ignored.
const GraceEnv = "RETRYSAFE_DISPATCH_GRACE"

func graceFromEnv() time.Duration {
	v := os.Getenv(GraceEnv)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil || d < 0:
		return 0
	case d == 0:
		return -1
	}
	return d
}

// RequestGrace is the grace after an operation's latest request that the
// provider never answered definitely: when it was sent, when the client's
// wait for it ended, and Until, when the provider can no longer be
// expected to apply it (requestGrace). Zero times: there is no such
// request, or the grace is off (Service.Grace < 0).
type RequestGrace struct {
	Sent, Waited, Until time.Time
	// opID and claimNo are the operation and claim it was read at: a
	// decision compares them in its own transaction (a new request
	// always comes with a new claim).
	opID, claimNo int64
	// grace is the grace after Waited; byClaim, that Until is a claim's
	// recorded apply-by, later than Waited plus grace (the words say
	// which).
	grace   time.Duration
	byClaim bool
}

// Within reports whether at is within the grace.
func (g RequestGrace) Within(at time.Time) bool { return !g.Until.IsZero() && at.Before(g.Until) }

// GraceFrom is the grace after op's latest request, from its recorded
// attempts (a detail's): the same reading of them a lookup makes
// (lastRequest, graceUntil: the claim's recorded apply-by counts). It
// reads nothing.
func (s *Service) GraceFrom(op model.Operation, attempts []model.Attempt) RequestGrace {
	if s.Grace < 0 {
		return RequestGrace{opID: op.ID, claimNo: op.ClaimNo}
	}
	g := s.requestGrace(op.Provider, attempts, &op)
	g.opID, g.claimNo = op.ID, op.ClaimNo
	return g
}

// GraceOf reads tenant/key's operation and its attempts and returns
// GraceFrom of them.
func (s *Service) GraceOf(ctx context.Context, tenant, key string) (RequestGrace, error) {
	d, err := s.Store.Detail(ctx, tenant, key)
	if err != nil {
		return RequestGrace{}, err
	}
	return s.GraceFrom(d.Operation, d.Attempts), nil
}

// GracesOf is GraceOf for many operations (a bulk decision's rows) in
// one batched read of their requests (store.Ledger.RequestHistories, a
// statement per chunk of keys, not a detail per operation): each found
// operation's GraceFrom, by key. A key with no operation has none.
func (s *Service) GracesOf(ctx context.Context, keys []store.OpKey) (map[store.OpKey]RequestGrace, error) {
	hs, err := s.Store.RequestHistories(ctx, keys, requestOutcomes)
	if err != nil {
		return nil, err
	}
	out := make(map[store.OpKey]RequestGrace, len(hs))
	for k, h := range hs {
		out[k] = s.GraceFrom(h.Operation, h.Attempts)
	}
	return out, nil
}

// GraceChecks is GraceCheck for many operations (a bulk review's marked
// rows, as on screen) at now, their requests read in one batched read
// (store.Ledger.RequestHistories): per operation, in order, the refusal
// the write would make of action on it, or nil — also for one no longer
// there (the write says so). It writes nothing; the write checks again,
// in its transaction.
func (s *Service) GraceChecks(ctx context.Context, action model.Action, ops []model.Operation, now time.Time) ([]error, error) {
	out := make([]error, len(ops))
	if len(ops) == 0 || !graceHolds(action) {
		return out, nil
	}
	keys := make([]store.OpKey, len(ops))
	for i, op := range ops {
		keys[i] = store.OpKey{Tenant: op.Tenant, Key: op.Key}
	}
	hs, err := s.Store.RequestHistories(ctx, keys, requestOutcomes)
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		if h, ok := hs[keys[i]]; ok {
			out[i] = s.GraceCheck(action, op, h.Attempts, now)
		}
	}
	return out, nil
}

// graceHolds reports whether the grace holds action at all: "not
// applied" and a new key (which may ask the provider first) are refused
// within it; "applied" sends nothing again.
func graceHolds(action model.Action) bool {
	return action == model.ActionMarkNotApplied || action == model.ActionAuthorizeKey
}

// ErrWithinGrace is what a decision refused within the grace after the
// operation's latest request is (errors.Is): a GraceRefusal.
var ErrWithinGrace = errors.New("within the grace after the latest request")

// GraceRefusal is the refusal of "not applied", or of a new key where the
// provider is asked first, while the operation's latest request may still
// be applied by the provider (its grace): the next call — or the new
// key's first — would send it a second time. Nothing is written.
// Decision.WithinGrace overrides it.
type GraceRefusal struct {
	Tenant, Key string
	Action      model.Action
	RequestGrace
}

func (e *GraceRefusal) Error() string {
	risk := "the next call with this key sends it a second time"
	if e.Action == model.ActionAuthorizeKey {
		risk = "the new key's first call makes the effect a second time"
	}
	return fmt.Sprintf("cannot %s %s/%s yet: its latest request was sent at %s and the provider may still apply it (the client stopped waiting at %s; %s) — if it lands, %s; decide after %s (UTC) — nothing was written. Only if you know the provider dropped it: --within-grace (the console: the typed override)",
		e.Action.Verb(), e.Tenant, e.Key, e.Sent.UTC().Format(time.RFC3339), e.Waited.UTC().Format(time.RFC3339), graceWords(e.Until, e.grace, e.byClaim), risk, e.Until.UTC().Format(time.RFC3339))
}

// Is makes a GraceRefusal ErrWithinGrace.
func (e *GraceRefusal) Is(target error) bool { return target == ErrWithinGrace }

// graceTx refuses action on op (as read in the decision's transaction)
// while g — read before the transaction — says its latest request is
// within the grace at the transaction's time. g must be of op's claim: a
// claim since (a new request) is a change the operator has not seen,
// refused as stale. nil: nothing to refuse.
func graceTx(tx store.Tx, d Decision, action model.Action, op *model.Operation, g *RequestGrace) error {
	if d.WithinGrace || !asksFirst(action, *op) {
		return nil
	}
	if g == nil {
		// Read before the transaction, the row was not there (a batched
		// read that missed it, a row made since): fail closed.
		return model.Errorf(model.CodeStale, "%s/%s was not there when the decision's grace was read: it was made or changed since — nothing was written; look again",
			d.Tenant, d.Key)
	}
	if g.opID != op.ID || g.claimNo != op.ClaimNo {
		return model.Errorf(model.CodeStale, "%s/%s was claimed again while the decision was being made (claim %d): its request may be on its way — nothing was written; look again",
			d.Tenant, d.Key, op.ClaimNo)
	}
	if !g.Within(tx.Now()) {
		return nil
	}
	return graceRefusal(d.Tenant, d.Key, action, *g)
}

func graceRefusal(tenant, key string, action model.Action, g RequestGrace) error {
	return &model.Error{Code: model.CodeIllegal, Err: &GraceRefusal{Tenant: tenant, Key: key, Action: action, RequestGrace: g}}
}

// GraceCheck is the grace rule of a decision ahead of its write, for a
// review, a dry run or a command to say before anything is asked or
// written: the refusal the write would make of action on op (with its
// recorded attempts) at now, or nil. It reads nothing; the write checks
// again, in its transaction.
func (s *Service) GraceCheck(action model.Action, op model.Operation, attempts []model.Attempt, now time.Time) error {
	if !asksFirst(action, op) || !AllowedAt(op, action, now) {
		return nil
	}
	g := s.GraceFrom(op, attempts)
	if !g.Within(now) {
		return nil
	}
	return graceRefusal(op.Tenant, op.Key, action, g)
}

// graceFor is the grace a decision of action on tenant/key is checked
// against in its transaction (graceTx), read before it; nil when action
// is not held by it, the decision overrides it, or the operation is not
// there (the transaction says so).
func (s *Service) graceFor(ctx context.Context, d Decision, action model.Action) (*RequestGrace, error) {
	if d.WithinGrace || !graceHolds(action) {
		return nil, nil
	}
	g, err := s.GraceOf(ctx, d.Tenant, d.Key)
	if model.IsCode(err, model.CodeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// gracesFor is graceFor for each of targets (a chunk of a bulk decision
// d), read in one batched read (GracesOf): in targets' order, nil where
// graceFor's is.
func (s *Service) gracesFor(ctx context.Context, d Decision, action model.Action, targets []Target) ([]*RequestGrace, error) {
	out := make([]*RequestGrace, len(targets))
	if d.WithinGrace || !graceHolds(action) {
		return out, nil
	}
	keys := make([]store.OpKey, len(targets))
	for i, t := range targets {
		keys[i] = store.OpKey{Tenant: t.Tenant, Key: t.Key}
	}
	graces, err := s.GracesOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		if g, ok := graces[k]; ok {
			out[i] = &g
		}
	}
	return out, nil
}
