package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Tx is one write transaction (READ COMMITTED) on one pooled connection.
// Every operation it reads for writing is locked first — by an advisory
// lock on its (tenant, key) and a row lock — so transactions on one
// operation run one at a time, across processes and hosts, while those on
// different operations run side by side.
type Tx struct {
	s   *Store
	tx  pgx.Tx
	ctx context.Context
	now time.Time
	// relaxed transactions commit with synchronous_commit = off and may
	// only append attempt rows; see WithAttemptTx.
	relaxed bool
	// tomb is the tombstone GetOperation read ahead for a missing key.
	tomb *tombLookup
}

// Now is the time fixed for this transaction: every row it writes agrees.
func (t *Tx) Now() time.Time { return t.now }

// durableOnly is called before every write but an attempt row. PostgreSQL
// decides a commit's durability when it commits, so a relaxed transaction
// that writes more is made durable on the spot — the same promise as
// rerunning it durably (store.ErrNeedsDurable), without the wasted first
// run and its round trips.
func (t *Tx) durableOnly() error {
	if t.relaxed {
		if _, err := t.tx.Exec(t.ctx, "SET LOCAL synchronous_commit = "+t.s.sync); err != nil {
			return err
		}
		t.relaxed = false
	}
	return nil
}

// WithTx runs fn in one durable write transaction and commits if fn returns
// nil. A serialization failure, deadlock or lock timeout is retried with
// backoff until ctx's deadline (then CodeBusy); fn may therefore run more
// than once and must not have effects outside the transaction. A lost
// connection is not retried: the commit's fate is unknown to this process,
// and the caller's retry with the same key finds out (CodeUnavailable).
func (s *Store) WithTx(ctx context.Context, fn func(store.Tx) error) error {
	return s.withTx(ctx, false, fn)
}

// WithAttemptTx runs fn with synchronous_commit = off — the commit survives
// a crash of this process and of the server's processes, and may be lost
// only to a crash of the server's machine before its WAL writer flushes (a
// fraction of a second) — and, the moment fn writes anything but an
// attempt row, switches the same transaction back to a durable commit.
// Replays, conflicts and refusals, which only record an attempt, then do
// not wait for a WAL flush; every effect, state change and decision does.
func (s *Store) WithAttemptTx(ctx context.Context, fn func(store.Tx) error) error {
	err := s.withTx(ctx, true, fn)
	if errors.Is(err, store.ErrNeedsDurable) {
		return s.withTx(ctx, false, fn)
	}
	return err
}

func (s *Store) withTx(ctx context.Context, relaxed bool, fn func(store.Tx) error) error {
	if s.ro {
		return model.Errorf(model.CodeInvalid, "ledger is open read-only")
	}
	backoff := time.Millisecond
	for {
		err := s.runTx(ctx, relaxed, fn)
		if err == nil || !retryable(err) {
			if errors.Is(err, store.ErrNeedsDurable) {
				return err
			}
			return s.translate(err, "")
		}
		if ctx.Err() != nil {
			return s.translate(err, "")
		}
		select {
		case <-ctx.Done():
			return s.translate(err, "")
		case <-time.After(backoff):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

// beginRelaxed starts a transaction and relaxes its commit in one round
// trip (a query without arguments goes by the simple protocol).
const beginRelaxed = "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL synchronous_commit = off"

func (s *Store) runTx(ctx context.Context, relaxed bool, fn func(store.Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	if relaxed && s.sync == "on" {
		opts.BeginQuery = beginRelaxed
	}
	ptx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			_ = ptx.Rollback(context.WithoutCancel(ctx))
			panic(v)
		}
		if err != nil {
			// Rollback on a broken connection fails too; the server rolls
			// back on its own when the connection goes.
			_ = ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	t := &Tx{s: s, tx: ptx, ctx: ctx, now: s.now(), relaxed: relaxed && s.sync == "on"}
	if err = fn(t); err != nil {
		return err
	}
	if err = ptx.Commit(ctx); err == nil {
		s.committed()
	}
	return err
}
