package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// The ledger's clock on PostgreSQL is the database server's: many hosts
// share one ledger, and each judges leases, graces and replay windows by
// the time it reads. On their own clocks a host running ahead could call
// another host's claim ended while that host still sends it (a sweep
// makes it unknown, and a person may then decide "not applied" early). So
// each process measures how far the server's clock_timestamp() is from
// its own (the midpoint of the query's round trip) and reads its own clock
// plus that offset: one query at open (the best of a few) and one every
// clockRefresh after, in the background — never a round trip per
// transaction. What is left is the round trip's half (well under a
// millisecond on a LAN) and the drift between two refreshes.
const (
	clockRefresh = 30 * time.Second
	// clockSamples is how many round trips the first measurement takes
	// (the one with the shortest round trip wins).
	clockSamples = 3
	// clockWorstTrip is the longest round trip whose measurement replaces
	// a standing offset: a slow one says less about the server's time.
	clockWorstTrip = 250 * time.Millisecond
)

// dbClock is the host's clock corrected by the database server's offset.
type dbClock struct {
	host   func() time.Time
	sample func(ctx context.Context) (time.Time, error) // the server's clock_timestamp()

	offset     atomic.Int64 // server minus host, ns
	measuredAt atomic.Int64 // host time of the last measurement, unix ns
	last       atomic.Int64 // the latest time handed out, unix ns: never goes back
	refreshing atomic.Bool
}

// measure takes n samples and keeps the offset of the shortest round trip;
// with keep, a measurement slower than clockWorstTrip leaves the standing
// offset alone.
func (c *dbClock) measure(ctx context.Context, n int, keep bool) error {
	best, bestTrip := int64(0), time.Duration(-1)
	var err error
	for i := 0; i < n; i++ {
		t0 := c.host()
		var db time.Time
		if db, err = c.sample(ctx); err != nil {
			continue
		}
		trip := c.host().Sub(t0)
		if trip < 0 {
			trip = 0
		}
		if bestTrip < 0 || trip < bestTrip {
			best, bestTrip = int64(db.Sub(t0.Add(trip/2))), trip
		}
	}
	if bestTrip < 0 {
		return err
	}
	at := c.host().UnixNano()
	if !keep || bestTrip <= clockWorstTrip {
		c.offset.Store(best)
	}
	// After the offset: a report that sees this time sees its offset.
	c.measuredAt.Store(at)
	return nil
}

// report is the latest measurement: the offset the clock reads by and the
// host's time it was taken (a refresh that kept the standing offset
// included); not ok before the first.
func (c *dbClock) report() (offset time.Duration, measuredAt time.Time, ok bool) {
	at := c.measuredAt.Load()
	if at == 0 {
		return 0, time.Time{}, false
	}
	return time.Duration(c.offset.Load()), time.Unix(0, at), true
}

// now is the ledger's time: the host's plus the server's offset, never
// before a time already handed out (a refreshed offset may be a little
// smaller than the last). A refresh that is due starts in the background.
func (c *dbClock) now() time.Time {
	h := c.host()
	if h.UnixNano()-c.measuredAt.Load() > int64(clockRefresh) && c.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer c.refreshing.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = c.measure(ctx, 1, true) // failing, the last offset stands
		}()
	}
	t := h.UnixNano() + c.offset.Load()
	for {
		last := c.last.Load()
		if t <= last {
			return time.Unix(0, last)
		}
		if c.last.CompareAndSwap(last, t) {
			return time.Unix(0, t)
		}
	}
}
