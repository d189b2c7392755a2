package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A connection that drops in the middle of a statement (the driver reads
// an unexpected EOF) is an outage — busy, retry the same key later — not
// an internal error; the handle's next calls work on a fresh connection.
func TestAConnectionLostMidStatementIsBusy(t *testing.T) {
	direct := pgtest.URL(t)
	p, u := pgtest.NewProxy(t, direct)
	l, err := postgres.OpenLedger(u, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { time.Sleep(300 * time.Millisecond); p.Cut() }()
	err = l.WithTx(ctx, func(tx store.Tx) error {
		_, err := tx.Exec("SELECT pg_sleep(3)")
		return err
	})
	if !model.IsCode(err, model.CodeBusy) || !strings.Contains(err.Error(), "unavailable (an outage)") {
		t.Fatalf("a connection lost mid-statement: %v (code %q); want busy, an outage", err, model.CodeOf(err))
	}
	if err := l.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("after")) }); err != nil {
		t.Fatalf("a call after the drop: %v", err)
	}
}

// An outage's error says what happened, not where: the driver's words
// (failed to connect to user=… database=…: HOST …) stay in the wrapped
// cause, out of the message a gateway hands its clients; unplaced, the
// message does not name the ledger's URL either.
func TestAnOutageMessageNamesNoUserDatabaseOrHost(t *testing.T) {
	direct := pgtest.URL(t)
	p, u := pgtest.NewProxy(t, direct)
	st, err := postgres.Open(u, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.Stop()
	_, err = st.Counts(ctx, "")
	if !model.IsCode(err, model.CodeBusy) {
		t.Fatalf("counts in an outage: %v (code %q); want busy", err, model.CodeOf(err))
	}
	host := p.Addr()
	for _, leak := range []string{"user=", "database=", "failed to connect", ".s.PGSQL"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the outage's message names %q: %s", leak, err)
		}
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("the driver's error is not kept as the cause (for the operator's log): %#v", err)
	}
	st.Unplace()
	_, err = st.Counts(ctx, "")
	if got := err.Error(); !strings.HasPrefix(got, "the ledger") || strings.Contains(got, host) || strings.Contains(got, "postgres://") {
		t.Errorf("unplaced, an outage says %q; want it to start with the ledger and name no URL", got)
	}
}
