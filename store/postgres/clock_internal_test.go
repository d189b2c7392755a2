package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeHost is a host clock the test moves by hand.
type fakeHost struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeHost) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeHost) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

// The clock's offset rules, without a server: the shortest round trip's
// measurement wins; a refresh that fails, or one slower than
// clockWorstTrip, keeps the standing offset; a smaller offset never makes
// the ledger's time go back.
func TestTheDatabaseClocksOffsetRules(t *testing.T) {
	host := &fakeHost{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	server := time.Hour // the server's clock is an hour ahead of the host's
	trips := []time.Duration{40 * time.Millisecond, 2 * time.Millisecond, 9 * time.Millisecond}
	var fail error
	c := &dbClock{host: host.now}
	c.sample = func(context.Context) (time.Time, error) {
		if fail != nil {
			return time.Time{}, fail
		}
		trip := trips[0]
		if len(trips) > 1 {
			trips = trips[1:]
		}
		// The server reads its clock at the round trip's midpoint, but
		// answers ahead of it by a tenth of the trip (asymmetry).
		host.add(trip / 2)
		at := host.now().Add(server + trip/10)
		host.add(trip / 2)
		return at, nil
	}
	if err := c.measure(context.Background(), 3, false); err != nil {
		t.Fatal(err)
	}
	if got, want := time.Duration(c.offset.Load()), server+200*time.Microsecond; got != want {
		t.Errorf("offset %s; want the 2 ms round trip's, %s", got, want)
	}
	before := c.now()

	fail = errors.New("the server is gone")
	if err := c.measure(context.Background(), 1, true); err == nil {
		t.Error("a failed measurement says nothing went wrong")
	}
	if got := time.Duration(c.offset.Load()); got != server+200*time.Microsecond {
		t.Errorf("a failed refresh moved the offset to %s", got)
	}
	fail = nil

	trips = []time.Duration{time.Second}
	_ = c.measure(context.Background(), 1, true)
	if got := time.Duration(c.offset.Load()); got != server+200*time.Microsecond {
		t.Errorf("a 1 s round trip replaced the offset: %s", got)
	}

	// The server's clock is stepped back 3 s: the ledger's time waits for
	// the host to catch up instead of going back.
	server -= 3 * time.Second
	trips = []time.Duration{time.Millisecond}
	if err := c.measure(context.Background(), 1, true); err != nil {
		t.Fatal(err)
	}
	after := c.now()
	if after.Before(before) {
		t.Errorf("the ledger's time went back: %s after %s", after, before)
	}
	host.add(5 * time.Second)
	if got := c.now(); !got.After(after) {
		t.Errorf("the time stood still after the host moved on: %s", got)
	}
}

// What the clock reports is its latest measurement: the offset it reads
// by and the host time it was taken; a refresh that keeps the standing
// offset (a slow round trip) still says when it was tried.
func TestTheClockReportsItsLatestMeasurement(t *testing.T) {
	host := &fakeHost{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	server := -time.Hour // this host runs an hour ahead
	trip := 2 * time.Millisecond
	c := &dbClock{host: host.now}
	c.sample = func(context.Context) (time.Time, error) {
		host.add(trip / 2)
		at := host.now().Add(server)
		host.add(trip / 2)
		return at, nil
	}
	if _, _, ok := c.report(); ok {
		t.Error("an unmeasured clock reports an offset")
	}
	if err := c.measure(context.Background(), 3, false); err != nil {
		t.Fatal(err)
	}
	offset, at, ok := c.report()
	if !ok || offset != server || !at.Equal(host.now()) {
		t.Errorf("report %s at %s (%v); want %s at %s", offset, at, ok, server, host.now())
	}
	host.add(clockRefresh)
	server = -2 * time.Hour
	if err := c.measure(context.Background(), 1, true); err != nil {
		t.Fatal(err)
	}
	if offset, at, _ = c.report(); offset != server || !at.Equal(host.now()) {
		t.Errorf("after a refresh: %s at %s; want %s at %s", offset, at, server, host.now())
	}
	trip = time.Second
	host.add(clockRefresh)
	_ = c.measure(context.Background(), 1, true)
	if offset, at, _ = c.report(); offset != server || !at.Equal(host.now()) {
		t.Errorf("after a slow refresh: %s at %s; want the standing %s, tried at %s", offset, at, server, host.now())
	}
}
