package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// The ledger's clock on PostgreSQL is the database's, whatever the host's
// clock says: hosts sharing a ledger judge leases, graces and replay
// windows by one clock, so a host whose clock runs ahead cannot call
// another host's claim ended while it is still at work.
func TestTheLedgerClockIsTheDatabasesWhateverTheHostsSays(t *testing.T) {
	url := pgtest.URL(t)
	first, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	for _, skew := range []time.Duration{0, time.Hour, -time.Hour, 37 * time.Second, -90 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			s, err := postgres.OpenWithHostClock(url, store.Options{}, func() time.Time { return time.Now().Add(skew) })
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			var db time.Time
			if err := postgres.QueryRow(ctx, s, "SELECT clock_timestamp()", &db); err != nil {
				t.Fatal(err)
			}
			near := func(what string, got time.Time) {
				t.Helper()
				if d := got.Sub(db); d < -2*time.Second || d > 2*time.Second {
					t.Errorf("host clock %+v: %s %s, the database's %s (%s apart)", skew, what, got, db, d)
				}
			}
			near("Now", s.Now())
			if err := s.WithTx(ctx, func(tx store.Tx) error { near("a transaction's Now", tx.Now()); return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Two hosts an hour apart read the same time from the ledger.
func TestTwoHostsAnHourApartAgreeOnTheLedgersTime(t *testing.T) {
	url := pgtest.URL(t)
	a, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.OpenWithHostClock(url, store.Options{}, func() time.Time { return time.Now().Add(time.Hour) })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if d := b.Now().Sub(a.Now()); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("the hosts' ledgers are %s apart; want the same clock", d)
	}
}

// A clock pinned by the caller (tests, the lab, the demo) is the ledger's,
// not the database's.
func TestAPinnedClockStaysPinned(t *testing.T) {
	pinned := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := postgres.Open(pgtest.URL(t), store.Options{Create: true, Now: func() time.Time { return pinned }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Now(); !got.Equal(pinned) {
		t.Errorf("Now %s; want the pinned %s", got, pinned)
	}
}

// A host whose clock is off the database server's says by how much: the
// offset (the server's clock minus this host's) as last measured, and
// when, on this host's clock. A pinned clock is no measurement.
func TestTheClockOffsetIsReported(t *testing.T) {
	url := pgtest.URL(t)
	first, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	for _, skew := range []time.Duration{0, time.Hour, -90 * time.Minute, 1500 * time.Millisecond} {
		t.Run(skew.String(), func(t *testing.T) {
			host := func() time.Time { return time.Now().Add(skew) }
			s, err := postgres.Open(url, store.Options{HostClock: host})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, ok := any(s).(store.ClockReporter)
			if !ok {
				t.Fatal("the PostgreSQL store is no store.ClockReporter")
			}
			offset, at, ok := r.ClockOffset()
			if !ok {
				t.Fatal("no offset measured")
			}
			// The server runs in this machine: its clock is time.Now's.
			if d := offset + skew; d < -100*time.Millisecond || d > 100*time.Millisecond {
				t.Errorf("offset %s with the host %s ahead; want %s", offset, skew, -skew)
			}
			if d := host().Sub(at); d < 0 || d > 10*time.Second {
				t.Errorf("measured at %s on the host's clock, which reads %s", at, host())
			}
		})
	}
	pinned, err := postgres.Open(url, store.Options{Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.Close()
	if offset, _, ok := pinned.ClockOffset(); ok {
		t.Errorf("a pinned clock reports an offset, %s", offset)
	}
}
