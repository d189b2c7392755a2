package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"retrysafe/model"
)

// Tx is one write transaction (BEGIN IMMEDIATE) on the pinned writer
// connection.
type Tx struct {
	tx  *connTx
	ctx context.Context
	now time.Time
	// relaxed transactions commit without an fsync and may only append
	// attempt rows; see WithAttemptTx.
	relaxed bool
}

// connTx runs statements of a transaction that the store began itself on
// its pinned connection, reusing prepared statements. database/sql's own Tx
// cannot reuse statements prepared on a Conn, and re-parsing every
// statement cost more than the rest of a replay together.
type connTx struct {
	s   *Store
	ctx context.Context
}

func (c *connTx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if ps, ok := c.s.stmts[q]; ok {
		return ps, nil
	}
	ps, err := c.s.wc.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.s.stmts == nil {
		c.s.stmts = map[string]*sql.Stmt{}
	}
	c.s.stmts[q] = ps
	return ps, nil
}

func (c *connTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ps, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return ps.ExecContext(ctx, args...)
}

func (c *connTx) Exec(q string, args ...any) (sql.Result, error) {
	return c.ExecContext(c.ctx, q, args...)
}

func (c *connTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ps, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return ps.QueryContext(ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (c *connTx) QueryRowContext(ctx context.Context, q string, args ...any) scanner {
	ps, err := c.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return ps.QueryRowContext(ctx, args...)
}

func (t *Tx) exec(q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(t.ctx, q, args...)
}

func (t *Tx) query(q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(t.ctx, q, args...)
}

func (t *Tx) queryRow(q string, args ...any) scanner { return t.tx.QueryRowContext(t.ctx, q, args...) }

// Now is the time fixed for this transaction: every row it writes agrees.
func (t *Tx) Now() time.Time { return t.now }

// errNeedsDurable is how a relaxed transaction learns it must not go on: fn
// tried to change an operation, an effect or a decision.
var errNeedsDurable = errors.New("store: this transaction changes more than attempts; it must be durable")

func (t *Tx) durableOnly() error {
	if t.relaxed {
		return errNeedsDurable
	}
	return nil
}

// WithTx runs fn in one durable write transaction (synchronous=FULL) and
// commits if fn returns nil. A busy database is waited out (SQLite's busy
// timeout, then retries with backoff) until ctx's deadline; fn may therefore
// run more than once and must not have effects outside the transaction.
func (s *Store) WithTx(ctx context.Context, fn func(*Tx) error) error {
	return s.withTx(ctx, false, fn)
}

// WithAttemptTx runs fn first in a relaxed transaction — committed with
// synchronous=NORMAL, which in WAL mode survives a crash of the process but
// may lose the commit to a power cut until the next durable commit — and,
// the moment fn tries to write anything but an attempt row, rolls back and
// runs fn again durably. Replays, conflicts and refusals, which only record
// an attempt, are thereby cheap; every effect, operation change and decision
// is still fsynced before it is acknowledged.
func (s *Store) WithAttemptTx(ctx context.Context, fn func(*Tx) error) error {
	err := s.withTx(ctx, true, fn)
	if errors.Is(err, errNeedsDurable) {
		return s.withTx(ctx, false, fn)
	}
	return err
}

func (s *Store) withTx(ctx context.Context, relaxed bool, fn func(*Tx) error) error {
	if s.ro {
		return model.Errorf(model.CodeInvalid, "ledger is open read-only")
	}
	try := s.tryTx
	if relaxed {
		try = s.combined
	}
	backoff := time.Millisecond
	for {
		err := try(ctx, relaxed, fn)
		if err == nil || !isBusy(err) {
			return err
		}
		if ctx.Err() != nil {
			return model.Wrap(model.CodeBusy, err, "ledger %s stayed locked by another writer until the deadline", s.path)
		}
		select {
		case <-ctx.Done():
			return model.Wrap(model.CodeBusy, err, "ledger %s stayed locked by another writer until the deadline", s.path)
		case <-time.After(backoff):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

func (s *Store) tryTx(ctx context.Context, relaxed bool, fn func(*Tx) error) (err error) {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return s.translate(ctx.Err(), "begin")
	}
	defer func() { <-s.wsem }()
	// The safety level is per connection and cannot change inside a
	// transaction, so it is set before every one: a relaxed transaction can
	// never leave the connection relaxed for the next, durable one.
	sync := s.sync
	if relaxed && sync == "FULL" {
		sync = "NORMAL"
	}
	c := &connTx{s: s, ctx: ctx}
	if _, err := c.ExecContext(ctx, "PRAGMA synchronous = "+sync); err != nil {
		return s.translate(err, "set synchronous")
	}
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return s.translate(err, "begin")
	}
	// Rollback must run even when ctx is what failed.
	rollback := func() { _, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }
	t := &Tx{tx: c, ctx: ctx, now: s.now(), relaxed: relaxed}
	defer func() {
		if p := recover(); p != nil {
			rollback()
			panic(p)
		}
	}()
	if err = fn(t); err != nil {
		rollback()
		if errors.Is(err, errNeedsDurable) {
			return err
		}
		return s.translate(err, "")
	}
	if _, err = c.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		rollback()
		return s.translate(err, "commit")
	}
	return nil
}

// pendingTx is a relaxed transaction waiting to be combined with others.
type pendingTx struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error // buffered: the leader never blocks on it
}

// combined runs a relaxed fn together with whatever other relaxed fns are
// waiting, in one transaction with a savepoint each (group commit): the
// caller that gets the writer runs the whole queue, and every caller gets
// its own fn's result. A replay then costs a fraction of a commit instead
// of a whole one. Durable transactions are never combined: each is its own
// fsynced commit, acknowledged only after it.
func (s *Store) combined(ctx context.Context, _ bool, fn func(*Tx) error) error {
	p := &pendingTx{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, p)
	s.qmu.Unlock()
	for {
		select {
		case err := <-p.done:
			return err
		case s.wsem <- struct{}{}:
			s.qmu.Lock()
			batch := s.queue
			s.queue = nil
			s.qmu.Unlock()
			if len(batch) > 0 {
				s.runBatch(batch)
			}
			<-s.wsem
		case <-ctx.Done():
			// Still queued? Take it out; otherwise a leader has it and
			// its result is on the way.
			s.qmu.Lock()
			for i, q := range s.queue {
				if q == p {
					s.queue = append(s.queue[:i], s.queue[i+1:]...)
					s.qmu.Unlock()
					return s.translate(ctx.Err(), "begin")
				}
			}
			s.qmu.Unlock()
			return <-p.done
		}
	}
}

// runBatch runs queued relaxed transactions as one, holding the writer.
func (s *Store) runBatch(batch []*pendingTx) {
	bg := context.Background()
	c := &connTx{s: s, ctx: bg}
	fail := func(err error) {
		for _, p := range batch {
			p.done <- err
		}
	}
	sync := s.sync
	if sync == "FULL" {
		sync = "NORMAL"
	}
	if _, err := c.ExecContext(bg, "PRAGMA synchronous = "+sync); err != nil {
		fail(s.translate(err, "set synchronous"))
		return
	}
	if _, err := c.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		fail(s.translate(err, "begin"))
		return
	}
	results := make([]error, len(batch))
	for i, p := range batch {
		results[i] = s.runSavepoint(c, p)
	}
	if _, err := c.ExecContext(bg, "COMMIT"); err != nil {
		_, _ = c.ExecContext(bg, "ROLLBACK")
		fail(s.translate(err, "commit"))
		return
	}
	for i, p := range batch {
		p.done <- results[i]
	}
}

func (s *Store) runSavepoint(c *connTx, p *pendingTx) (err error) {
	bg := context.Background()
	if err := p.ctx.Err(); err != nil {
		return s.translate(err, "begin")
	}
	if _, err := c.ExecContext(bg, "SAVEPOINT attempt"); err != nil {
		return s.translate(err, "savepoint")
	}
	undo := func() {
		_, _ = c.ExecContext(bg, "ROLLBACK TO attempt")
		_, _ = c.ExecContext(bg, "RELEASE attempt")
	}
	defer func() {
		if r := recover(); r != nil {
			undo()
			err = fmt.Errorf("store: transaction panicked: %v", r)
		}
	}()
	t := &Tx{tx: &connTx{s: s, ctx: p.ctx}, ctx: p.ctx, now: s.now(), relaxed: true}
	if err := p.fn(t); err != nil {
		undo()
		if errors.Is(err, errNeedsDurable) {
			return err
		}
		return s.translate(err, "")
	}
	if _, err := c.ExecContext(bg, "RELEASE attempt"); err != nil {
		undo()
		return s.translate(err, "release savepoint")
	}
	return nil
}
