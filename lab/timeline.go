package lab

import (
	"container/heap"
	"errors"
	"iter"
	"math/rand/v2"
	"sync"
	"time"
)

// The demo's timeline. The ledger's rows are stamped by the transaction's
// clock (store.Options.Now), so the demo builds a morning's history by
// playing its plan on a clock of its own: real time moved into the past,
// jumped forward (never back) to each step's moment. Every operation is a
// coroutine that runs a step, then asks to resume some minutes later; the
// builder runs the due steps of all tenants in time order, so traffic
// interleaves as it would in a real ledger, a retry comes minutes after its
// first attempt, a decision some time after the unknown it settles. Leases
// and sweeps are judged on the same clock. Only the clock is played: every
// row is still written by a Service call, a sweep or a decision.

// demoClock is the build's clock: real time plus an offset that is never
// positive and only grows, so the clock runs at real speed between jumps,
// never goes back, and never reads later than real time.
type demoClock struct {
	mu     sync.Mutex
	offset time.Duration
}

// startAt sets the clock to t (never later than real time). It may move
// the clock back, so it is only for before anything is written.
func (c *demoClock) startAt(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = min(time.Until(t), 0)
}

// Now reads the clock.
func (c *demoClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// advanceTo moves the clock forward to t if it is behind, never past real
// time.
func (c *demoClock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := t.Sub(time.Now().Add(c.offset)); d > 0 {
		c.offset = min(c.offset+d, 0)
	}
}

// errStopped ends an operation's coroutine when the build gives up.
var errStopped = errors.New("demo: build stopped")

// opRun is one operation of the plan being played.
type opRun struct {
	b     *builder
	bt    batch
	at    time.Time // when its next step is due, on the plan (not the clock)
	first time.Time // when it began
	seq   int       // plan order: breaks ties
	err   error

	yield func(time.Time) bool
	next  func() (time.Time, bool)
	stop  func()
}

// after suspends the operation until d later on the plan — where other
// operations, of every tenant, take their turns — and resumes it with
// the clock there. Near the end of the timeline the wait is shortened so
// nothing lands after it.
func (r *opRun) after(d time.Duration) error {
	if limit := r.b.end.Sub(r.at) / 2; d > limit {
		d = max(limit, 0)
	}
	r.at = r.at.Add(d)
	if !r.yield(r.at) {
		return errStopped
	}
	return nil
}

// runQueue orders the runs by due time, then plan order.
type runQueue []*opRun

func (q runQueue) Len() int { return len(q) }
func (q runQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q runQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *runQueue) Push(x any)   { *q = append(*q, x.(*opRun)) }
func (q *runQueue) Pop() any {
	old := *q
	r := old[len(old)-1]
	*q = old[:len(old)-1]
	return r
}

// play runs every operation to its end, one step at a time in time order,
// with the clock moved to each step's moment. Only one step runs at a
// time, so the seeded randomness is drawn in the same order every build.
func (b *builder) play(runs []*opRun) (err error) {
	q := runQueue(append([]*opRun(nil), runs...))
	heap.Init(&q)
	defer func() {
		for _, r := range q {
			if r.stop != nil {
				r.stop()
			}
		}
	}()
	for q.Len() > 0 {
		r := heap.Pop(&q).(*opRun)
		b.clock.advanceTo(r.at)
		if r.next == nil {
			r.next, r.stop = iter.Pull(func(yield func(time.Time) bool) {
				r.yield = yield
				r.err = b.operation(r)
			})
		}
		at, more := r.next()
		if !more {
			if r.err != nil {
				return r.err
			}
			continue
		}
		r.at = at
		heap.Push(&q, r)
	}
	return nil
}

// between is a random duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// arrivals spreads n calls over [from, to], the first at from and the last
// at to: bursts of a few calls seconds apart (an agent working through a
// ticket queue), separated by quiet stretches of very different lengths.
func arrivals(rng *rand.Rand, n int, from, to time.Time) []time.Time {
	if n == 0 {
		return nil
	}
	type gap struct {
		d time.Duration
		w float64 // a quiet stretch's share of the time left over
	}
	gaps := make([]gap, 0, n) // the gap before each call; the first is none
	gaps = append(gaps, gap{})
	for len(gaps) < n {
		for k := 2 + rng.IntN(9); k > 1 && len(gaps) < n; k-- {
			gaps = append(gaps, gap{d: 2*time.Second + time.Duration(rng.ExpFloat64()*float64(35*time.Second))})
		}
		if len(gaps) < n {
			gaps = append(gaps, gap{w: 0.15 + rng.ExpFloat64()})
		}
	}
	var busy time.Duration
	var weight float64
	for _, g := range gaps {
		busy += g.d
		weight += g.w
	}
	quiet := max(to.Sub(from)-busy, 0)
	out := make([]time.Time, n)
	t := from
	for i, g := range gaps {
		if g.w > 0 {
			t = t.Add(time.Duration(float64(quiet) * g.w / weight))
		} else {
			t = t.Add(g.d)
		}
		out[i] = t
	}
	return out
}
