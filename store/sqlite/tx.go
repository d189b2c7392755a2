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
	// ops is the writer's operation cache when this transaction may use
	// it (a relaxed batch, checked at its start), else nil.
	ops *opCache
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
	// It may insert operations or effect rows: the ids counted in Go
	// (writerIDs) are read again.
	t.tx.s.ids = writerIDs{}
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
	backoff := busyBackoffFirst
	for {
		err := s.groupCommit(ctx, relaxed, fn)
		if errors.Is(err, errBatchLost) {
			if ctx.Err() == nil {
				continue
			}
			// Rolled back with its batch, and no time left to run again:
			// nothing of it was written, like a busy ledger at the deadline.
			return model.Wrap(model.CodeBusy, err, "%s: the transaction was rolled back with another caller's and the deadline passed before it could run again; nothing was written", s.ledger())
		}
		if err == nil || !isBusy(err) {
			return err
		}
		if ctx.Err() != nil {
			return model.Wrap(model.CodeBusy, err, "%s stayed locked by another writer until the deadline", s.ledger())
		}
		select {
		case <-ctx.Done():
			return model.Wrap(model.CodeBusy, err, "%s stayed locked by another writer until the deadline", s.ledger())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, busyBackoffMax)
	}
}

// pendingTx is a transaction waiting to share a commit with others.
type pendingTx struct {
	ctx     context.Context
	fn      func(*Tx) error
	relaxed bool
	done    chan txResult // buffered: the leader never blocks on it
}

// txResult is what a group-committed transaction hands back to its caller: its
// own fn's error, or the panic of its fn, re-raised in the caller.
type txResult struct {
	err      error
	panicked bool
	value    any
}

// errBatchLost tells a caller that its fn ran in a group-committed transaction
// that another fn's failure aborted: nothing of it committed, and WithTx
// runs it again.
var errBatchLost = errors.New("store: the group-committed transaction was aborted by another caller's failure")

// The group commit's numbers.
const (
	// maxBatch bounds how many callers one commit carries, and so the wait
	// of the last of them.
	maxBatch = 64
	// joinYields is how many times a new leader yields for callers about
	// to queue (their previous result just delivered) before it commits.
	joinYields = 4
	// busyBackoffFirst and busyBackoffMax bound the pause between retries
	// of a transaction another process's lock refused.
	busyBackoffFirst = time.Millisecond
	busyBackoffMax   = 50 * time.Millisecond
)

// groupCommit runs fn together with whatever other fns are waiting, in one
// transaction with a savepoint each (group commit): the caller that gets
// the writer runs the queue, and every caller gets its own fn's result —
// after the commit, so an acknowledgment still follows the fsync that made
// it durable. The commit is durable (synchronous=FULL) if any fn in it is;
// only a batch of relaxed fns commits without the fsync. A replay then costs
// a fraction of a commit, and concurrent new operations share their fsync
// instead of queueing for one each.
func (s *Store) groupCommit(ctx context.Context, relaxed bool, fn func(*Tx) error) error {
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
			for i := 0; i < joinYields; i++ {
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

// runBatch runs queued transactions as one, holding the writer: the
// connection's safety level for this batch, BEGIN IMMEDIATE, each fn (in a
// savepoint of its own when there are several), COMMIT, and every caller's
// own result — after the commit.
func (s *Store) runBatch(batch []*pendingTx) {
	c := &connTx{s: s, ctx: context.Background()}
	err := s.filesLost()
	var durable bool
	if err == nil {
		durable, err = s.setSynchronous(c, batch)
	}
	if err == nil {
		err = s.begin(c, batch)
	}
	if err != nil {
		for _, p := range batch {
			p.done <- txResult{err: err}
		}
		return
	}
	// The operation cache serves relaxed batches only: a batch that may
	// write anything else empties it first.
	if durable {
		s.opc.reset()
	} else {
		s.checkOpCache(c)
	}
	results, ok := s.runFns(c, batch, durable)
	if !ok {
		s.opc.reset()
		return // rolled back; every caller has its answer
	}
	s.commit(c, batch, results)
}

// setSynchronous sets the writer connection's safety level for a batch:
// FULL if any fn in it is durable, NORMAL if all are relaxed. The level is
// per connection and cannot change inside a transaction, so it is set
// before every one: a relaxed batch can never leave the connection relaxed
// for the next, durable one. durable says whether the commit will be: in a
// commit that is durable anyway, a relaxed fn may write what it likes (it
// gets the fsync it would otherwise have gone back for).
func (s *Store) setSynchronous(c *connTx, batch []*pendingTx) (durable bool, err error) {
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
	if sync == "FULL" {
		s.madeDurable.Store(true)
	}
	if sync != s.wsync {
		if _, err := c.ExecContext(c.ctx, "PRAGMA synchronous = "+sync); err != nil {
			s.wsync = ""
			return false, s.translate(err, "set synchronous")
		}
		s.wsync = sync
	}
	return sync == s.sync, nil
}

// begin opens the batch's write transaction. Waiting for another process's
// write lock ends when SQLite's busy timeout does, or when no caller in the
// batch is waiting any more.
func (s *Store) begin(c *connTx, batch []*pendingTx) error {
	beginCtx, cancel := context.WithCancel(c.ctx)
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
	s.ids = writerIDs{} // learned anew in every transaction
	if beginCtx.Err() != nil {
		// Every caller has given up already: don't start what no one waits for.
		return s.translate(context.DeadlineExceeded, "begin")
	}
	if _, err := c.ExecContext(beginCtx, "BEGIN IMMEDIATE"); err != nil {
		if beginCtx.Err() != nil {
			err = context.DeadlineExceeded
		}
		// A cancellation that races the statement can report failure for
		// a BEGIN that took the write lock: end whatever is open, or the
		// writer holds the lock for good (every other process waits on
		// it, and each later BEGIN here fails "within a transaction").
		_, _ = c.ExecContext(context.Background(), "ROLLBACK")
		return s.translate(err, "begin")
	}
	return nil
}

// runFns runs every fn of the batch in the open transaction. ok false means
// the transaction was rolled back and every caller already has its result:
// a lone fn failed, or SQLite rolled the whole transaction back under one
// of several (a full disk, an I/O error) — then the fns before it did not
// commit either (errBatchLost: WithTx runs them again) and the ones after it
// must not run in autocommit.
func (s *Store) runFns(c *connTx, batch []*pendingTx, durable bool) (results []txResult, ok bool) {
	results = make([]txResult, len(batch))
	if len(batch) == 1 {
		// Alone: no savepoint needed, a failure rolls the transaction back.
		results[0] = s.runOne(batch[0], durable)
		if results[0].err != nil || results[0].panicked {
			_, _ = c.ExecContext(c.ctx, "ROLLBACK")
			batch[0].done <- results[0]
			return nil, false
		}
		return results, true
	}
	// Most batches fail nowhere: their fns run one after another with no
	// savepoint around each, which spares every fn the savepoint's statements
	// and SQLite the copy of every page the fn touches into the savepoint's
	// journal (about 20 pages of 4 KiB for a new operation). If one
	// fails (or panics), its failure must not undo the others' work: the
	// whole transaction is rolled back and the batch runs again, each fn in
	// a savepoint of its own (a fn may run more than once; see WithTx).
	if all, ok := s.runUnguarded(batch, durable); ok {
		return all, true
	}
	_, _ = c.ExecContext(c.ctx, "ROLLBACK")
	if err := s.begin(c, batch); err != nil {
		for _, p := range batch {
			p.done <- txResult{err: err}
		}
		return nil, false
	}
	if !durable {
		// The write lock was let go: another connection may have written.
		s.checkOpCache(c)
	}
	for i, p := range batch {
		var lost bool
		results[i], lost = s.runSavepoint(c, p, durable)
		if lost {
			_, _ = c.ExecContext(c.ctx, "ROLLBACK")
			for j, q := range batch {
				if j != i {
					q.done <- txResult{err: errBatchLost}
				}
			}
			p.done <- results[i]
			return nil, false
		}
	}
	return results, true
}

// runUnguarded runs every fn of the batch in the open transaction, with no
// savepoints; ok false means one failed or panicked, and the transaction
// must be rolled back (nothing is handed to any caller yet).
func (s *Store) runUnguarded(batch []*pendingTx, durable bool) (results []txResult, ok bool) {
	results = make([]txResult, len(batch))
	for i, p := range batch {
		results[i] = s.runOne(p, durable)
		if results[i].err != nil || results[i].panicked {
			return nil, false
		}
	}
	return results, true
}

// commit commits the batch and hands every caller its result; a failed
// COMMIT is every successful fn's failure (nothing of theirs was written).
func (s *Store) commit(c *connTx, batch []*pendingTx, results []txResult) {
	if _, err := c.ExecContext(c.ctx, "COMMIT"); err != nil {
		_, _ = c.ExecContext(c.ctx, "ROLLBACK")
		s.opc.reset()
		err = s.translate(err, "commit")
		for i := range results {
			if results[i].err == nil && !results[i].panicked {
				results[i] = txResult{err: err}
			}
		}
	} else if err := s.checkFiles(c); err != nil {
		for i := range results {
			if results[i].err == nil && !results[i].panicked {
				results[i] = txResult{err: err}
			}
		}
	} else if fn := s.onBatch.Load(); fn != nil {
		(*fn)(len(batch)) // committed batches only
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
	if t.relaxed && s.opc.valid {
		t.ops = &s.opc
	}
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
