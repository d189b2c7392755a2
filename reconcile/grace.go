package reconcile

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
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
func (s *Service) graceUntil(name string, waited time.Time, ops ...*model.Operation) time.Time {
	until := waited.Add(s.DispatchGrace(name))
	for _, op := range ops {
		if op != nil && op.ClaimApplyBy.After(until) {
			until = op.ClaimApplyBy
		}
	}
	return until
}

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
	sent, waited := lastRequest(d.Attempts, s.Lease, op, after, &d.Operation)
	if sent.IsZero() && waited.IsZero() {
		return "", false
	}
	until := s.graceUntil(op.Provider, waited, op, after, &d.Operation)
	if !since.Before(until) {
		return "", false
	}
	return fmt.Sprintf("a request sent at %s, waited for until %s, may still be applied by the provider; ask again after %s",
		sent.UTC().Format(time.RFC3339), waited.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339)), true
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
