package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/retrysafe/retrysafe/model"
)

// replayState is the read side of store.Replayer: a cache of final
// operations read for replays, and the queue of replay attempts waiting to
// share one transaction.
//
// The cache is never trusted to answer on its own: AppendReplay writes the
// attempt row only if the operation's row still holds exactly what the
// cached copy says (id, tenant, key, fingerprint, state, version, receipt,
// expiry), checked in the write transaction itself. Every change to an
// operation bumps its version (UpdateOperation), compaction deletes the row,
// and a row re-created under a forgotten key has another receipt — so a
// decision, a sweep or a late result in this or any other process turns
// the check false, the entry is dropped, and the caller takes the full path.
type replayState struct {
	mu   sync.Mutex
	ops  map[string]*model.Operation
	peek *sql.Stmt // on the reader pool, prepared on first use

	// The appends waiting for a transaction, and the one caller running
	// them (sem held).
	qmu   sync.Mutex
	queue []*replayAppend
	sem   chan struct{}
	once  sync.Once
}

// maxReplayOps bounds the cache; past it, it starts over.
const maxReplayOps = 1 << 14

type replayAppend struct {
	op   *model.Operation
	a    *model.Attempt
	ok   bool
	err  error
	done chan struct{}
}

// ReplayPeek reads tenant's operation under key on the reader pool, or
// from the cache of applied and failed operations read before (see
// replayState: AppendReplay checks what it answers). It never waits for
// the writer.
func (s *Store) ReplayPeek(ctx context.Context, tenant, key string) (*model.Operation, error) {
	id := opCacheKey(tenant, key)
	rs := &s.replay
	rs.mu.Lock()
	if op, ok := rs.ops[id]; ok {
		rs.mu.Unlock()
		cp := *op
		return &cp, nil
	}
	st := rs.peek
	rs.mu.Unlock()
	if st == nil {
		var err error
		if st, err = s.r.PrepareContext(ctx, `SELECT `+opColumns+` FROM operations WHERE tenant = ? AND op_key = ?`); err != nil {
			return nil, s.translate(err, "read operation")
		}
		rs.mu.Lock()
		if rs.peek == nil {
			rs.peek = st
		} else {
			st.Close()
			st = rs.peek
		}
		rs.mu.Unlock()
	}
	op, err := scanOperation(st.QueryRowContext(ctx, tenant, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", key, tenant)
	}
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	if op.State == model.StateApplied || op.State == model.StateFailed {
		cp := *op
		rs.mu.Lock()
		if rs.ops == nil || len(rs.ops) >= maxReplayOps {
			rs.ops = make(map[string]*model.Operation, 256)
		}
		rs.ops[id] = &cp
		rs.mu.Unlock()
	}
	return op, nil
}

// forget drops tenant's cached operation under key if it is still op.
func (rs *replayState) forget(op *model.Operation) {
	id := opCacheKey(op.Tenant, op.Key)
	rs.mu.Lock()
	if c, ok := rs.ops[id]; ok && c.ID == op.ID && c.Version == op.Version {
		delete(rs.ops, id)
	}
	rs.mu.Unlock()
}

// replayAppendSQL appends an attempt to an operation only if its row is
// exactly the one read: the compare-and-set that makes a cached or
// reader-pool read safe to answer. seq is numbered in SQL as InsertAttempt
// numbers it.
const replayAppendSQL = `INSERT OR IGNORE INTO attempts (operation_id, seq, outcome, fingerprint,
	trace_id, worker_id, provider_ref, error, started_at, duration_us, finding, detail)
	VALUES ((SELECT id FROM operations WHERE id = ?1 AND tenant = ?2 AND op_key = ?3 AND fingerprint = ?4
			AND state = ?5 AND version = ?6 AND receipt IS ?7 AND expires_at IS ?8),
		(SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE operation_id = ?1),
		?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)`

// AppendReplay records a replay's attempt if op is unchanged (see
// store.Replayer). Callers that arrive while a transaction of appends runs
// queue, and the next of them runs them all in one relaxed transaction —
// one statement each, no savepoints: a statement that fails rolls back
// only itself, and then the whole transaction is rolled back and every
// caller told (nothing of theirs was written; they take the full path).
func (s *Store) AppendReplay(ctx context.Context, op *model.Operation, a *model.Attempt) (bool, error) {
	if !a.Outcome.Valid() {
		return false, model.Errorf(model.CodeInvalid, "unknown attempt outcome %q", a.Outcome)
	}
	if a.Outcome == model.OutcomeLookup || a.Finding != "" {
		return false, model.Errorf(model.CodeInvalid, "a replay's attempt cannot be a lookup (outcome %q, finding %q)", a.Outcome, a.Finding)
	}
	rs := &s.replay
	rs.once.Do(func() { rs.sem = make(chan struct{}, 1) })
	r := &replayAppend{op: op, a: a, done: make(chan struct{})}
	rs.qmu.Lock()
	rs.queue = append(rs.queue, r)
	rs.qmu.Unlock()
	for {
		select {
		case <-r.done:
			if !r.ok {
				rs.forget(op)
			}
			return r.ok, r.err
		case rs.sem <- struct{}{}:
			rs.qmu.Lock()
			batch := rs.queue
			rs.queue = nil
			rs.qmu.Unlock()
			if len(batch) > 0 {
				s.appendReplays(ctx, batch)
			}
			<-rs.sem
		case <-ctx.Done():
			rs.qmu.Lock()
			for i, q := range rs.queue {
				if q == r {
					rs.queue = append(rs.queue[:i:i], rs.queue[i+1:]...)
					rs.qmu.Unlock()
					return false, s.translate(ctx.Err(), "begin")
				}
			}
			rs.qmu.Unlock()
			<-r.done
			return r.ok, r.err
		}
	}
}

// appendReplays runs a batch of appends in one relaxed transaction and
// tells every caller.
func (s *Store) appendReplays(ctx context.Context, batch []*replayAppend) {
	err := s.withTx(ctx, true, func(t *Tx) error {
		for _, r := range batch {
			r.ok = false
			a, op := r.a, r.op
			res, err := t.exec(replayAppendSQL,
				op.ID, op.Tenant, op.Key, op.Fingerprint, string(op.State),
				op.Version, nullJSON(op.Receipt), nullMS(op.ExpiresAt),
				string(a.Outcome), a.Fingerprint, nullStr(a.TraceID), nullStr(a.WorkerID),
				nullStr(a.ProviderRef), nullStr(a.Error), ms(t.now), a.Duration.Microseconds(),
				nullStr(string(a.Finding)), nullStr(a.Detail))
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 1 {
				if a.ID, err = res.LastInsertId(); err != nil {
					return err
				}
				a.OperationID, a.StartedAt, r.ok = op.ID, t.now, true
			}
		}
		return nil
	})
	for _, r := range batch {
		if err != nil {
			r.ok, r.err = false, err
		}
		close(r.done)
	}
}
