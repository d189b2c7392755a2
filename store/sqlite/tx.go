package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
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

// Exec runs an embedding program's statement in this (durable) transaction.
func (t *Tx) Exec(query string, args ...any) (sql.Result, error) {
	if err := t.durableOnly(); err != nil {
		return nil, err
	}
	return t.exec(query, args...)
}

func (t *Tx) durableOnly() error {
	if t.relaxed {
		return store.ErrNeedsDurable
	}
	return nil
}

// WithTx runs fn in one durable write transaction (synchronous=FULL) and
// commits if fn returns nil. A busy database is waited out (SQLite's busy
// timeout, then retries with backoff) until ctx's deadline; fn may therefore
// run more than once and must not have effects outside the transaction.
func (s *Store) WithTx(ctx context.Context, fn func(store.Tx) error) error {
	return s.withTx(ctx, false, func(t *Tx) error { return fn(t) })
}

// WithAttemptTx runs fn first in a relaxed transaction — committed with
// synchronous=NORMAL, which in WAL mode survives a crash of the process but
// may lose the commit to a power cut until the next durable commit — and,
// the moment fn tries to write anything but an attempt row, rolls back and
// runs fn again durably. Replays, conflicts and refusals, which only record
// an attempt, are thereby cheap; every effect, operation change and decision
// is still fsynced before it is acknowledged.
func (s *Store) WithAttemptTx(ctx context.Context, fn func(store.Tx) error) error {
	run := func(t *Tx) error { return fn(t) }
	err := s.withTx(ctx, true, run)
	if errors.Is(err, store.ErrNeedsDurable) {
		return s.withTx(ctx, false, run)
	}
	return err
}

func (s *Store) withTx(ctx context.Context, relaxed bool, fn func(*Tx) error) error {
	if s.ro {
		return model.Errorf(model.CodeInvalid, "ledger is open read-only")
	}
	backoff := time.Millisecond
	for {
		err := s.combined(ctx, relaxed, fn)
		if errors.Is(err, errBatchLost) && ctx.Err() == nil {
			continue
		}
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

// pendingTx is a transaction waiting to be combined with others.
type pendingTx struct {
	ctx     context.Context
	fn      func(*Tx) error
	relaxed bool
	done    chan txResult // buffered: the leader never blocks on it
}

// txResult is what a combined transaction hands back to its caller: its
// own fn's error, or the panic of its fn, re-raised in the caller.
type txResult struct {
	err      error
	panicked bool
	value    any
}

// errBatchLost tells a caller that its fn ran in a combined transaction
// that another fn's failure aborted: nothing of it committed, and WithTx
// runs it again.
var errBatchLost = errors.New("store: the combined transaction was aborted by another caller's failure")

// maxBatch bounds how many callers one commit carries, and so the wait of
// the last of them.
const maxBatch = 64

// combined runs fn together with whatever other fns are waiting, in one
// transaction with a savepoint each (group commit): the caller that gets
// the writer runs the queue, and every caller gets its own fn's result —
// after the commit, so an acknowledgment still follows the fsync that made
// it durable. The commit is durable (synchronous=FULL) if any fn in it is;
// only a batch of relaxed fns commits without the fsync. A replay then costs
// a fraction of a commit, and concurrent new operations share their fsync
// instead of queueing for one each.
func (s *Store) combined(ctx context.Context, relaxed bool, fn func(*Tx) error) error {
	p := &pendingTx{ctx: ctx, fn: fn, relaxed: relaxed, done: make(chan txResult, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, p)
	s.qmu.Unlock()
	for {
		select {
		case r := <-p.done:
			return r.unwrap()
		case s.wsem <- struct{}{}:
			// Let callers that are about to queue (their previous result
			// just delivered) join this commit instead of waiting a whole
			// one: a few yields, only while the queue is shorter than the
			// last batch was.
			for i := 0; i < 4; i++ {
				s.qmu.Lock()
				short := len(s.queue) < s.lastBatch
				s.qmu.Unlock()
				if !short {
					break
				}
				runtime.Gosched()
			}
			s.qmu.Lock()
			n := min(len(s.queue), maxBatch)
			s.lastBatch = n
			batch := append([]*pendingTx(nil), s.queue[:n]...)
			s.queue = append(s.queue[:0:0], s.queue[n:]...)
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
			return (<-p.done).unwrap()
		}
	}
}

func (r txResult) unwrap() error {
	if r.panicked {
		panic(r.value)
	}
	return r.err
}

// runBatch runs queued transactions as one, holding the writer.
func (s *Store) runBatch(batch []*pendingTx) {
	bg := context.Background()
	c := &connTx{s: s, ctx: bg}
	fail := func(err error) {
		for _, p := range batch {
			p.done <- txResult{err: err}
		}
	}
	sync := s.sync
	if sync == "FULL" {
		sync = "NORMAL"
		for _, p := range batch {
			if !p.relaxed {
				sync = "FULL"
				break
			}
		}
	}
	// The safety level is per connection and cannot change inside a
	// transaction, so it is set before every one: a relaxed batch can never
	// leave the connection relaxed for the next, durable one.
	if sync != s.wsync {
		if _, err := c.ExecContext(bg, "PRAGMA synchronous = "+sync); err != nil {
			s.wsync = ""
			fail(s.translate(err, "set synchronous"))
			return
		}
		s.wsync = sync
	}
	// In a commit that is durable anyway, a relaxed fn may write what it
	// likes: it gets the fsync it would otherwise have gone back for.
	durable := sync == s.sync
	// Waiting for another process's write lock ends when SQLite's busy
	// timeout does, or when no caller in the batch is waiting any more.
	beginCtx, cancel := context.WithCancel(bg)
	defer cancel()
	var waiting atomic.Int64
	waiting.Store(int64(len(batch)))
	for _, p := range batch {
		stop := context.AfterFunc(p.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	if _, err := c.ExecContext(beginCtx, "BEGIN IMMEDIATE"); err != nil {
		if beginCtx.Err() != nil {
			err = context.DeadlineExceeded
		}
		fail(s.translate(err, "begin"))
		return
	}
	results := make([]txResult, len(batch))
	if len(batch) == 1 {
		// Alone: no savepoint needed, a failure rolls the transaction back.
		results[0] = s.runOne(batch[0], durable)
		if results[0].err != nil || results[0].panicked {
			_, _ = c.ExecContext(bg, "ROLLBACK")
			batch[0].done <- results[0]
			return
		}
	} else {
		for i, p := range batch {
			var lost bool
			results[i], lost = s.runSavepoint(c, p, durable)
			if lost {
				// SQLite rolled the whole transaction back under this fn
				// (a full disk, an I/O error): the fns before it did not
				// commit and the ones after it must not run in autocommit.
				_, _ = c.ExecContext(bg, "ROLLBACK")
				for j, q := range batch {
					if j != i {
						q.done <- txResult{err: errBatchLost}
					}
				}
				p.done <- results[i]
				return
			}
		}
	}
	if _, err := c.ExecContext(bg, "COMMIT"); err != nil {
		_, _ = c.ExecContext(bg, "ROLLBACK")
		err = s.translate(err, "commit")
		for i, p := range batch {
			if results[i].err == nil && !results[i].panicked {
				results[i] = txResult{err: err}
			}
			p.done <- results[i]
		}
		return
	}
	if fn := s.onBatch.Load(); fn != nil {
		(*fn)(len(batch))
	}
	for i, p := range batch {
		p.done <- results[i]
	}
}

// runOne runs one caller's fn on the open transaction.
func (s *Store) runOne(p *pendingTx, durable bool) (r txResult) {
	if err := p.ctx.Err(); err != nil {
		return txResult{err: s.translate(err, "begin")}
	}
	defer func() {
		if v := recover(); v != nil {
			r = txResult{panicked: true, value: v}
		}
	}()
	// The statements ignore the caller's cancellation once its fn runs: an
	// interrupted statement could abort the others' transaction too. A fn
	// is a handful of statements; the deadline was checked just above.
	ctx := context.WithoutCancel(p.ctx)
	t := &Tx{tx: &connTx{s: s, ctx: ctx}, ctx: ctx, now: s.now(), relaxed: p.relaxed && !durable}
	if err := p.fn(t); err != nil {
		if errors.Is(err, store.ErrNeedsDurable) {
			return txResult{err: err}
		}
		return txResult{err: s.translate(err, "")}
	}
	return txResult{}
}

// runSavepoint runs one caller's fn inside a savepoint of the batch; lost
// reports that the batch's transaction did not survive it.
func (s *Store) runSavepoint(c *connTx, p *pendingTx, durable bool) (r txResult, lost bool) {
	bg := context.Background()
	if _, err := c.ExecContext(bg, "SAVEPOINT attempt"); err != nil {
		return txResult{err: s.translate(err, "savepoint")}, true
	}
	r = s.runOne(p, durable)
	if r.err != nil || r.panicked {
		if _, err := c.ExecContext(bg, "ROLLBACK TO attempt"); err != nil {
			return r, true
		}
	}
	if _, err := c.ExecContext(bg, "RELEASE attempt"); err != nil {
		return r, true
	}
	return r, false
}
