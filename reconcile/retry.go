package reconcile

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// Policy is the one retry budget a runner owns: capped attempts inside an
// overall deadline, exponential backoff with full jitter, always the same key.
type Policy struct {
	MaxAttempts int
	Deadline    time.Duration
	BaseDelay   time.Duration
	MaxDelay    time.Duration
	// Jitter returns a number in [0,1); default math/rand/v2.
	Jitter func() float64
	// Sleep waits; default a timer that respects ctx. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultPolicy: 5 attempts within 30 s, 100 ms doubling to at most 5 s.
func DefaultPolicy() Policy {
	return Policy{MaxAttempts: 5, Deadline: 30 * time.Second, BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second}
}

// Backoff is the full-jitter delay before retry number n (n ≥ 1).
func (p Policy) Backoff(n int) time.Duration {
	// Double up to the cap, never past it: a plain shift wraps around 2^63
	// and can fall back below the cap.
	ceiling := p.BaseDelay
	for i := 1; i < n && ceiling < p.MaxDelay; i++ {
		ceiling *= 2
	}
	if ceiling > p.MaxDelay || ceiling <= 0 {
		ceiling = p.MaxDelay
	}
	j := p.Jitter
	if j == nil {
		j = rand.Float64
	}
	return time.Duration(j() * float64(ceiling))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// CallWithRetry calls req until it is no longer retryable, the attempts run
// out or the deadline passes (or would before the next wait ends). Each
// wait is the backoff, or the provider's Retry-After (Result.RetryAfter)
// where that is longer. It retries only in_progress and internal
// classes, with the same key every time; conflict, invalid, unknown,
// superseded, failed and expired go straight back to the caller. It returns
// the last result and the number of attempts made.
func (s *Service) CallWithRetry(ctx context.Context, req model.Request, opt CallOptions, p Policy) (Result, int, error) {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 1
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	if p.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Deadline)
		defer cancel()
	}
	var (
		res Result
		err error
	)
	for n := 1; ; n++ {
		res, err = s.Call(ctx, req, opt)
		if !res.Class.Retryable() || n >= p.MaxAttempts {
			return res, n, err
		}
		// A busy provider's Retry-After is the least wait: sooner, a
		// provider that ignores keys is sent a new request each time.
		wait := max(p.Backoff(n), res.RetryAfter)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The wait would outlast the budget: answer now, with it,
			// rather than sleep to the deadline and call nothing.
			return res, n, err
		}
		if sleep(ctx, wait) != nil {
			return res, n, err
		}
	}
}
