package reconcile

import (
	"context"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Triage asks the providers about every operation a person would otherwise
// have to look up one by one — every unknown operation, and every
// in-progress one whose lease has ended — and records each finding. It
// decides nothing: findings are evidence for a person.

// Triage defaults (documented in the README).
const (
	DefaultTriageConcurrency = 8
	DefaultTriageRate        = 100.0 // lookups per second, per provider
)

// TriageOptions select and pace a triage run.
type TriageOptions struct {
	Tenant   string // "" = every tenant
	Provider string // "" = every provider
	// Concurrency is how many lookups run at once (default 8).
	Concurrency int
	// Rate, if > 0, is the most lookups per second sent to any one
	// provider, overriding every provider's own (a command line's
	// --rate). 0: each provider's configured rate (Service.LookupRates),
	// else DefaultTriageRate. See Service.LookupRate.
	Rate float64
	// By is who runs it, recorded with each finding ("triage by alice").
	By string
	// Progress, if set, hears each operation as its finding arrives, one
	// call at a time. It must be quick: the next lookup's result waits.
	Progress func(TriageEvent)
}

// TriageEvent is one operation's finding during a run.
type TriageEvent struct {
	Op     model.Operation
	Looked Looked
	Err    error // the finding could not be recorded
	Done   int   // operations finished so far, this one included
	Total  int
}

// TriageTally counts one provider's findings in a run.
type TriageTally struct {
	Provider   string `json:"provider"`
	Checked    int    `json:"checked"`
	HasIt      int    `json:"has_it"`
	HasNothing int    `json:"has_nothing"`
	CannotTell int    `json:"cannot_tell"`
	// HasOther: the provider holds a different request under the key
	// (model.FindingHasOther): no evidence either way, for a person.
	HasOther int           `json:"has_other"`
	Errors   int           `json:"errors"`         // findings the ledger could not record
	Rate     float64       `json:"rate,omitempty"` // the pace kept with the provider, lookups a second (not in Totals)
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// TriageReport is a run's outcome.
type TriageReport struct {
	Candidates int           `json:"candidates"` // unknown + in progress past its lease, with a provider
	Checked    int           `json:"checked"`
	Providers  []TriageTally `json:"providers"` // by name
	Recorded   bool          `json:"recorded"`  // false in a read-only ledger: shown, not recorded
	Cancelled  bool          `json:"cancelled"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Totals sums every provider's tally.
func (r TriageReport) Totals() TriageTally {
	t := TriageTally{Provider: "all", Elapsed: r.Elapsed}
	for _, p := range r.Providers {
		t.Checked += p.Checked
		t.HasIt += p.HasIt
		t.HasNothing += p.HasNothing
		t.CannotTell += p.CannotTell
		t.HasOther += p.HasOther
		t.Errors += p.Errors
	}
	return t
}

// TriageCandidates lists what a triage run asks about: unknown operations
// and in-progress ones whose lease ended, that have a provider, newest
// first, in opt's tenant and provider.
func (s *Service) TriageCandidates(ctx context.Context, opt TriageOptions) ([]model.Operation, error) {
	var out []model.Operation
	now := s.Store.Now()
	for _, st := range []model.State{model.StateUnknown, model.StateInProgress} {
		q := store.ListQuery{Tenant: opt.Tenant, State: st, Limit: 1000}
		for {
			page, err := s.Store.List(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, op := range page {
				if op.Provider == "" || op.DownstreamKey == "" || (opt.Provider != "" && op.Provider != opt.Provider) {
					continue
				}
				if st == model.StateInProgress && !op.LeaseUntil.Before(now) {
					continue
				}
				// The receipt is not needed to ask (keeps a big run small);
				// the arguments are: a provider that reports what it holds
				// under the key compares them (provider.Query).
				op.Receipt = nil
				out = append(out, op)
			}
			if len(page) < q.Limit {
				break
			}
			q.BeforeID = page[len(page)-1].ID
		}
	}
	return out, nil
}

// Triage runs one triage: it lists the candidates, asks their providers
// with at most opt.Concurrency lookups at once and opt.Rate per second per
// provider, and records each finding. Cancelling ctx stops it between
// lookups; what was recorded stays. The error is for a run that could not
// start (the candidates could not be listed); findings that could not be
// recorded are counted as errors.
func (s *Service) Triage(ctx context.Context, opt TriageOptions) (TriageReport, error) {
	start := time.Now()
	if opt.Concurrency <= 0 {
		opt.Concurrency = DefaultTriageConcurrency
	}
	if opt.Tenant != "" {
		if err := model.ValidateIdentity(opt.Tenant, "-"); err != nil {
			return TriageReport{}, err
		}
	}
	ops, err := s.TriageCandidates(ctx, opt)
	if err != nil {
		return TriageReport{}, err
	}
	// Providers is a list even when there is nothing to ask: [] in JSON.
	rep := TriageReport{Candidates: len(ops), Recorded: !s.Store.ReadOnly(), Providers: []TriageTally{}}
	limiters := s.lookupLimiters(ops, opt.Rate)
	tallies := map[string]*TriageTally{}
	provStart := map[string]time.Time{}
	for p, l := range limiters {
		tallies[p] = &TriageTally{Provider: p, Rate: float64(l.Limit())}
	}
	s.lookEach(ctx, ops, opt.Concurrency, limiters, opt.By,
		func(op model.Operation) {
			if _, ok := provStart[op.Provider]; !ok {
				provStart[op.Provider] = time.Now()
			}
		},
		func(_ int, op model.Operation, l Looked, err error) {
			if ctx.Err() != nil {
				return // stopped mid-lookup: no finding
			}
			t := tallies[op.Provider]
			t.Checked++
			rep.Checked++
			if err != nil {
				t.Errors++
			} else {
				switch l.Finding.Kind {
				case model.FindingHasIt:
					t.HasIt++
				case model.FindingHasNothing:
					t.HasNothing++
				case model.FindingHasOther:
					t.HasOther++
				default:
					t.CannotTell++
				}
			}
			t.Elapsed = time.Since(provStart[op.Provider])
			if opt.Progress != nil {
				opt.Progress(TriageEvent{Op: op, Looked: l, Err: err, Done: rep.Checked, Total: len(ops)})
			}
		})
	rep.Cancelled = ctx.Err() != nil
	for _, t := range tallies {
		rep.Providers = append(rep.Providers, *t)
	}
	sort.Slice(rep.Providers, func(i, j int) bool { return rep.Providers[i].Provider < rep.Providers[j].Provider })
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// LookupRate is the most lookups a second triage (and LookFirst) sends
// provider: override if > 0 (a command line's --rate, for every
// provider), else the provider's configured rate (LookupRates, from its
// config entry's [providers.lookup] rate), else DefaultTriageRate.
func (s *Service) LookupRate(provider string, override float64) float64 {
	if override > 0 {
		return override
	}
	if r := s.LookupRates[provider]; r > 0 {
		return r
	}
	return DefaultTriageRate
}

// lookupLimiters returns a limiter for each provider of ops, at
// LookupRate(provider, override). A burst of one: the provider sees an
// even pace, never a spike.
func (s *Service) lookupLimiters(ops []model.Operation, override float64) map[string]*rate.Limiter {
	out := map[string]*rate.Limiter{}
	for _, op := range ops {
		if out[op.Provider] == nil {
			out[op.Provider] = rate.NewLimiter(rate.Limit(s.LookupRate(op.Provider, override)), 1)
		}
	}
	return out
}

// lookEach asks the provider of every op (Look, recorded as by), at most n
// at once, each provider paced by its limiter; a cancelled ctx stops it
// between lookups. started hears each lookup as it begins and done each
// answer with the op's index in ops — one call at a time, so they may share
// state without a lock of their own.
func (s *Service) lookEach(ctx context.Context, ops []model.Operation, n int, limiters map[string]*rate.Limiter, by string,
	started func(op model.Operation), done func(i int, op model.Operation, l Looked, err error)) {
	var mu sync.Mutex // serialises started and done
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(n, max(len(ops), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				op := ops[i]
				if err := limiters[op.Provider].Wait(ctx); err != nil {
					continue // cancelled
				}
				if started != nil {
					mu.Lock()
					started(op)
					mu.Unlock()
				}
				l, err := s.Look(ctx, &op, by)
				mu.Lock()
				done(i, op, l, err)
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range ops {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
}
