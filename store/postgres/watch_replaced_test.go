package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A console watching a PostgreSQL ledger never noticed the ledger replaced
// (demo --fresh from another shell: the schema dropped and another renamed
// into its place) or its schema dropped: LISTEN/NOTIFY stays quiet, so
// Changed kept saying "nothing changed" and the screen kept the old ledger
// as current. The watcher now compares the ledger's catalog identity with
// the one it opened (on every notification, on reconnect and in a slow
// probe) and reports the loss as an error on every later call, as SQLite's
// does for a replaced file.
func TestWatchReportsALedgerReplacedOrDropped(t *testing.T) {
	for _, how := range []string{"replaced", "dropped"} {
		t.Run(how, func(t *testing.T) {
			url := pgtest.URL(t)
			l, err := postgres.OpenLedger(url, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ctx := context.Background()
			w, err := l.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Changed(ctx); err != nil {
				t.Fatalf("before: %v", err)
			}
			switch how {
			case "replaced":
				other, err := postgres.WithSchema(url, postgres.SchemaOf(url)+"_new")
				if err != nil {
					t.Fatal(err)
				}
				l2, err := postgres.OpenLedger(other, store.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				l2.Close()
				if err := postgres.MoveSchema(ctx, url, postgres.SchemaOf(other), postgres.SchemaOf(url)); err != nil {
					t.Fatal(err)
				}
			case "dropped":
				if err := pgtest.Exec(t, url, `DROP SCHEMA `+postgres.SchemaOf(url)+` CASCADE`); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, err := w.Changed(ctx)
				if err != nil {
					if !strings.Contains(err.Error(), how) || !strings.Contains(err.Error(), "restart retrysafe") {
						t.Errorf("error %q; want it to say the ledger was %s and to restart", err, how)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the ledger was %s and the watcher still says all is well after 10s", how)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// It stays lost: the ledger this process opened is gone.
			time.Sleep(200 * time.Millisecond)
			if _, err := w.Changed(ctx); err == nil {
				t.Error("the loss was forgotten")
			}
		})
	}
}
