package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Tx is one write transaction (READ COMMITTED) on one pooled connection.
// Every operation it reads for writing is locked first — by an advisory
// lock on its (tenant, key) and a row lock — so transactions on one
// operation run one at a time, across processes and hosts, while those on
// different operations run side by side.
//
// The transaction's BEGIN is not a round trip of its own: it is queued and
// travels with the first statement, and COMMIT travels with the last
// queued writes. Writes whose results nobody waits for are queued (see
// later), and ids a write must return are drawn ahead (see GetOperation),
// so a new local call costs two round trips: the locked read (which also
// draws the operation's, the attempt's and the effect row's ids), then the
// effect row, the operation with its receipt, the attempt and the commit.
type Tx struct {
	s    *Store
	conn *pgxpool.Conn
	ctx  context.Context
	now  time.Time
	// relaxed transactions commit with synchronous_commit = off and may
	// only append attempt rows; see WithAttemptTx. The setting is sent
	// with the COMMIT, if the transaction is still relaxed then.
	relaxed bool
	// began: the BEGIN has been sent; there is a transaction to end.
	began bool
	// tomb is the tombstone GetOperation read ahead for a missing key.
	tomb *tombLookup
	// pending are writes queued for the next round trip (see later).
	pending []queued
	// Ids drawn ahead by GetOperation: the new operation's id when the key
	// was missing, and an id for the next attempt of the operation read.
	drawn drawnIDs
	// effectTable is the table a local call said its effect would go
	// into (ExpectLocalEffect), "" if none did; the next GetOperation
	// uses it up.
	effectTable model.LocalTable
}

// ExpectLocalEffect is store.EffectHinter: GetOperation then also draws
// the effect row's id when the key turns out new.
func (t *Tx) ExpectLocalEffect(table model.LocalTable) {
	if _, ok := effectSeq[table]; ok {
		t.effectTable = table
	}
}

// drawnIDs are sequence values GetOperation drew with its read, so that
// inserting the operation and its attempt returns nothing the caller must
// wait for: both writes are queued. An id drawn and not used is a gap in
// its sequence, as a rolled-back insert leaves.
type drawnIDs struct {
	tenant, key string // the key found missing (newOp is its id), if any
	newOp       int64
	opID        int64 // the operation the attempt id is for (0: none)
	attempt     int64
	// inserted: opID is the operation this transaction inserted with the
	// id drawn for it, so it has no attempt yet and its first is seq 1.
	inserted bool
	// effect is an id drawn for the new operation's local effect row in
	// effectTable (0: none).
	effect      int64
	effectTable model.LocalTable
}

const (
	beginSQL    = "BEGIN ISOLATION LEVEL READ COMMITTED"
	relaxSQL    = "SET LOCAL synchronous_commit = off"
	commitSQL   = "COMMIT"
	rollbackSQL = "ROLLBACK"
)

// Now is the time fixed for this transaction: every row it writes agrees.
func (t *Tx) Now() time.Time { return t.now }

// durableOnly is called before every write but an attempt row. PostgreSQL
// decides a commit's durability when it commits, and a relaxed
// transaction's SET LOCAL synchronous_commit = off goes just before its
// COMMIT: a relaxed transaction that writes more is durable by simply not
// sending it — the same promise as rerunning it durably
// (store.ErrNeedsDurable), without the wasted first run, its round trips,
// or a statement.
func (t *Tx) durableOnly() error {
	t.relaxed = false
	return nil
}

// WithTx runs fn in one durable write transaction and commits if fn returns
// nil. A serialization failure, deadlock or lock timeout is retried with
// backoff until ctx's deadline (then CodeBusy); fn may therefore run more
// than once and must not have effects outside the transaction. A lost
// connection is not retried: the commit's fate is unknown to this process,
// and the caller's retry with the same key finds out (CodeBusy: retry
// later).
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

func (s *Store) runTx(ctx context.Context, relaxed bool, fn func(store.Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	t := &Tx{s: s, conn: conn, ctx: ctx, now: s.now(), relaxed: relaxed && s.sync == "on"}
	// BEGIN goes with the first statement.
	t.later(beginSQL)
	defer func() {
		if v := recover(); v != nil {
			t.rollback()
			conn.Release()
			panic(v)
		}
		if err != nil {
			t.rollback()
		}
		// A connection left inside a transaction, or broken, is closed by
		// the pool rather than reused.
		conn.Release()
	}()
	if err = fn(t); err != nil {
		return err
	}
	if err = t.commit(); err == nil {
		s.committed()
	}
	return err
}

// commit sends the queued writes and COMMIT in one round trip.
func (t *Tx) commit() error {
	if !t.began && t.onlyBegin() {
		return nil // nothing was read or written
	}
	if t.relaxed {
		// Only attempt rows were written: a relaxed commit.
		t.later(relaxSQL)
	}
	b, n := t.batch()
	b.Queue(commitSQL)
	br, err := t.sendQueued(b, n)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() == rollbackSQL {
		// PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// onlyBegin reports whether the queue holds nothing but the BEGIN.
func (t *Tx) onlyBegin() bool {
	for _, q := range t.pending {
		if q.sql != beginSQL {
			return false
		}
	}
	return true
}

// rollback ends a transaction that failed. Rollback on a broken connection
// fails too: the connection is closed, and the server rolls back on its own
// when it goes.
func (t *Tx) rollback() {
	if !t.began {
		return
	}
	pc := t.conn.Conn().PgConn()
	if pc.IsClosed() || pc.TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 5*time.Second)
	defer cancel()
	if _, err := t.conn.Exec(ctx, rollbackSQL); err != nil {
		_ = t.conn.Conn().Close(ctx)
	}
}

// queued is a write whose result nobody waits for (a receipt update, the
// switch to a durable commit): it travels with the next statement in one
// round trip instead of costing one of its own. Its error, if any, is that
// next statement's (or the commit's): the transaction fails either way.
type queued struct {
	sql  string
	args []any
	// opID is set on the queued insert of a new operation (its receipt is
	// args[receiptArg], which SetReceipt may still replace).
	opID int64
}

// later queues a write for the next round trip.
func (t *Tx) later(sql string, args ...any) {
	t.pending = append(t.pending, queued{sql: sql, args: args})
}

// batch starts a batch with the queued writes in front.
func (t *Tx) batch() (*pgx.Batch, int) {
	b := &pgx.Batch{}
	for _, q := range t.pending {
		b.Queue(q.sql, q.args...)
	}
	n := len(t.pending)
	t.pending = nil
	t.began = true
	return b, n
}

// sendQueued sends b and reads the results of its first n (queued)
// statements; the caller reads the rest and closes the results.
func (t *Tx) sendQueued(b *pgx.Batch, n int) (pgx.BatchResults, error) {
	br := t.conn.SendBatch(t.ctx, b)
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
		return t.conn.QueryRow(t.ctx, sql, args...)
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
		return t.conn.Exec(t.ctx, sql, args...)
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
	return t.conn.Query(t.ctx, sql, args...)
}
