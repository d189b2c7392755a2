package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/retrysafe/retrysafe/store"
)

// On PostgreSQL the ledger's clock is the database server's: each process
// measures how far its own clock is from it and corrects by that, so
// leases and graces never depend on the host's clock. A host clock that is
// off still misdates this host's log and its reading of providers'
// Retry-After dates, and is worth fixing: serve's log and ops check say so
// when it is more than clockLimit off.
const clockLimit = time.Second

// clockPoll is how often serve looks at the ledger's clock: reading it
// starts a measurement when one is due (every 30 s), and a new one is
// judged by clockWatch.
const clockPoll = time.Second

// hostClockKey carries the host's clock through a command's context into
// the ledger it opens (store.Options.HostClock): tests skew it.
type hostClockKey struct{}

// withHostClock is ctx with a host clock for the ledgers opened under it.
func withHostClock(ctx context.Context, now func() time.Time) context.Context {
	return context.WithValue(ctx, hostClockKey{}, now)
}

// hostClock is ctx's host clock, nil for time.Now.
func hostClock(ctx context.Context) func() time.Time {
	now, _ := ctx.Value(hostClockKey{}).(func() time.Time)
	return now
}

// clockOffset is st's measured offset (the ledger's clock minus this
// host's) and when it was measured; not ok on a ledger whose clock is the
// host's (SQLite) or pinned.
func clockOffset(st store.Ledger) (offset time.Duration, at time.Time, ok bool) {
	cr, ok := st.(store.ClockReporter)
	if !ok {
		return 0, time.Time{}, false
	}
	return cr.ClockOffset()
}

// hostVersusDB says where this host's clock stands against the database
// server's, offset being the server's minus the host's: "1h0m0s ahead of",
// "3ms behind", "within 1ms of".
func hostVersusDB(offset time.Duration) string {
	d := offset.Abs()
	switch {
	case d < time.Millisecond:
		return "within 1ms of"
	case d < time.Second:
		d = d.Round(time.Millisecond)
	case d < time.Minute:
		d = d.Round(10 * time.Millisecond)
	default:
		d = d.Round(time.Second)
	}
	if offset < 0 {
		return d.String() + " ahead of"
	}
	return d.String() + " behind"
}

// clockLine is what a command tells a person of this host's clock, or ""
// when the ledger's clock is the host's; over: more than clockLimit off.
func clockLine(st store.Ledger) (line string, over bool) {
	offset, _, ok := clockOffset(st)
	if !ok {
		return "", false
	}
	where := "this host's clock is " + hostVersusDB(offset) + " the database server's"
	if offset.Abs() <= clockLimit {
		return "clock: " + where + " (leases and graces are judged by the database server's clock)", false
	}
	return "clock: " + where + ", more than 1 s: leases and graces are judged by the database server's clock, so they are right, " +
		"but this host's log times and its reading of providers' Retry-After dates are off by as much — set this host's clock right (NTP)", true
}

// clockWarning adds clockLine to a command's refusal on stderr when this
// host's clock is more than clockLimit off (within it, the refusal stays
// one line).
func clockWarning(stderr io.Writer, st store.Ledger) {
	if line, over := clockLine(st); over {
		fmt.Fprintln(stderr, show(line))
	}
}

// clockJSON is the clock in a command's --json: the ledger's clock (the
// database server's) minus this host's, in seconds, and the two clocks'
// times at the measurement.
type clockJSON struct {
	OffsetSeconds float64   `json:"offset_seconds"`
	DatabaseTime  time.Time `json:"database_time"`
	HostTime      time.Time `json:"host_time"`
	Over          bool      `json:"more_than_1s"`
}

// clockOf is st's clock for --json, nil when the ledger's clock is the
// host's.
func clockOf(st store.Ledger) *clockJSON {
	offset, at, ok := clockOffset(st)
	if !ok {
		return nil
	}
	return &clockJSON{OffsetSeconds: offset.Seconds(), DatabaseTime: at.Add(offset).UTC(), HostTime: at.UTC(), Over: offset.Abs() > clockLimit}
}

// clockNews is what clockWatch.see makes of a measurement.
type clockNews int

const (
	clockQuiet  clockNews = iota // nothing to say
	clockOff                     // warn: more than clockLimit off
	clockInStep                  // back within clockLimit after a warning
)

// clockWatch decides when serve's log speaks of the host's clock: a
// warning when it is more than clockLimit off (at open, or when it drifts
// out), again only when it moved more than clockLimit from the offset last
// warned of — a steady skew is said once — and one line when it is back
// within clockLimit.
type clockWatch struct {
	warned bool
	last   time.Duration // the offset last warned of
}

func (w *clockWatch) see(offset time.Duration) clockNews {
	switch {
	case !w.warned && offset.Abs() > clockLimit:
		w.warned, w.last = true, offset
		return clockOff
	case !w.warned || (offset-w.last).Abs() <= clockLimit:
		return clockQuiet
	case offset.Abs() > clockLimit:
		w.last = offset
		return clockOff
	default:
		w.warned = false
		return clockInStep
	}
}

// watchClock logs what clockWatch makes of st's clock: at once (the
// measurement at open), then of each new measurement until stop is
// called, which waits for the watch to end. A ledger whose clock is the
// host's has nothing to watch.
func watchClock(st store.Ledger, log *slog.Logger) (stop func()) {
	var w clockWatch
	var seen time.Time
	look := func() {
		offset, at, ok := clockOffset(st)
		if !ok || at.Equal(seen) {
			return
		}
		seen = at
		attrs := []any{"offset", offset.Round(time.Millisecond).String(), "host_clock", hostVersusDB(offset) + " the database server's",
			"database_time", at.Add(offset).UTC(), "host_time", at.UTC()}
		switch w.see(offset) {
		case clockOff:
			log.Warn("this host's clock is more than 1 s off the database server's; leases and graces are judged by the database server's clock, "+
				"but this host's log times and its reading of providers' Retry-After dates are off by as much: set this host's clock right (NTP)", attrs...)
		case clockInStep:
			log.Info("this host's clock is back within 1 s of the database server's", attrs...)
		}
	}
	look()
	if _, _, ok := clockOffset(st); !ok {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(clockPoll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				st.Now() // starts a measurement when one is due
				look()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// clockAttrs are the listening line's words of the clock: none when the
// ledger's clock is the host's.
func clockAttrs(st store.Ledger) []any {
	offset, _, ok := clockOffset(st)
	if !ok {
		return nil
	}
	return []any{"clock_offset", offset.Round(time.Millisecond).String()}
}
