package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	// pending are writes queued for the next round trip (see later).
	pending []queued
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
		t.later("SET LOCAL synchronous_commit = " + t.s.sync)
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
	if err = t.flush(); err != nil {
		return err
	}
	if err = ptx.Commit(ctx); err == nil {
		s.committed()
	}
	return err
}

// queued is a write whose result nobody waits for (a receipt update, the
// switch to a durable commit): it travels with the next statement in one
// round trip instead of costing one of its own. Its error, if any, is that
// next statement's (or the commit's): the transaction fails either way.
type queued struct {
	sql  string
	args []any
}

// later queues a write for the next round trip.
func (t *Tx) later(sql string, args ...any) {
	t.pending = append(t.pending, queued{sql, args})
}

// batch starts a batch with the queued writes in front.
func (t *Tx) batch() (*pgx.Batch, int) {
	b := &pgx.Batch{}
	for _, q := range t.pending {
		b.Queue(q.sql, q.args...)
	}
	n := len(t.pending)
	t.pending = nil
	return b, n
}

// sendQueued sends b and reads the results of its first n (queued)
// statements; the caller reads the rest and closes the results.
func (t *Tx) sendQueued(b *pgx.Batch, n int) (pgx.BatchResults, error) {
	br := t.tx.SendBatch(t.ctx, b)
	for i := 0; i < n; i++ {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	return br, nil
}

// flush sends the queued writes now (before a commit, or a statement that
// streams rows).
func (t *Tx) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	b, n := t.batch()
	br, err := t.sendQueued(b, n)
	if err != nil {
		return err
	}
	return br.Close()
}

// batchRow is a row read from a batch, which it closes once scanned.
type batchRow struct {
	br  pgx.BatchResults
	row pgx.Row
	err error
}

func (r batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (t *Tx) queryRow(sql string, args ...any) pgx.Row {
	if len(t.pending) == 0 {
		return t.tx.QueryRow(t.ctx, sql, args...)
	}
	b, n := t.batch()
	b.Queue(sql, args...)
	br, err := t.sendQueued(b, n)
	if err != nil {
		return batchRow{err: err}
	}
	return batchRow{br: br, row: br.QueryRow()}
}

func (t *Tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	if len(t.pending) == 0 {
		return t.tx.Exec(t.ctx, sql, args...)
	}
	b, n := t.batch()
	b.Queue(sql, args...)
	br, err := t.sendQueued(b, n)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t *Tx) query(sql string, args ...any) (pgx.Rows, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	return t.tx.Query(t.ctx, sql, args...)
}
