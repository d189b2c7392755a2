package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
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
	key  string // readKey(op), made before the caller queues
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

// replayCheckSQL is the compare-and-set that makes a cached or reader-pool
// read safe to answer, for n reads at once: a row (the read's number, the
// operation's last attempt number) for each read whose operation's row is
// exactly the one read.
func replayCheckSQL(n int) string {
	var b strings.Builder
	b.WriteString(`WITH r (i, id, tenant, op_key, fingerprint, state, version, receipt, expires_at) AS (VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?)")
	}
	b.WriteString(`)
	SELECT r.i, (SELECT COALESCE(MAX(seq), 0) FROM attempts WHERE operation_id = o.id)
	FROM r JOIN operations o ON o.id = r.id
	WHERE o.tenant = r.tenant AND o.op_key = r.op_key AND o.fingerprint = r.fingerprint AND o.state = r.state
		AND o.version = r.version AND o.receipt IS r.receipt AND o.expires_at IS r.expires_at`)
	return b.String()
}

// replayInsertSQL inserts n attempt rows (InsertAttempt's columns) in one
// statement: the per-statement work — binding, the CHECK constraints' IN
// lists, which SQLite builds into a temporary index once per statement —
// is shared by the rows.
func replayInsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO attempts (operation_id, seq, outcome, fingerprint,
	trace_id, worker_id, provider_ref, error, started_at, duration_us, finding, detail) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}

// replayChunks are the row counts of the insert statements (each prepared
// once): a batch is cut into as few of them as it takes.
var replayChunks = []int{32, 8, 1}

var replayInserts, replayChecks = func() (ins, checks map[int]string) {
	ins, checks = map[int]string{}, map[int]string{}
	for _, n := range replayChunks {
		ins[n], checks[n] = replayInsertSQL(n), replayCheckSQL(n)
	}
	return ins, checks
}()

// chunk is the largest statement size that fits n rows.
func chunk(n int) int {
	for _, c := range replayChunks {
		if c <= n {
			return c
		}
	}
	return 1
}

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
	r := &replayAppend{op: op, key: readKey(op), a: a, done: make(chan struct{})}
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
// tells every caller: each distinct operation read is checked once (and
// its last attempt number read), then the rows of those still as read are
// inserted, numbered on from there, a chunk of rows per statement.
func (s *Store) appendReplays(ctx context.Context, batch []*replayAppend) {
	err := s.withTx(ctx, true, func(t *Tx) error {
		// The distinct reads (see readKey), each checked once.
		idx := make(map[string]int, len(batch))
		var reads []*model.Operation
		for _, r := range batch {
			r.ok = false
			if _, ok := idx[r.key]; !ok {
				idx[r.key] = len(reads)
				reads = append(reads, r.op)
			}
		}
		// seqs[i] is read i's operation's last attempt number, -1 if it
		// moved on or is gone.
		seqs := make([]int, len(reads))
		for i := range seqs {
			seqs[i] = -1
		}
		args := make([]any, 0, 12*min(len(batch), replayChunks[0]))
		for done := 0; done < len(reads); {
			n := chunk(len(reads) - done)
			args = args[:0]
			for i, op := range reads[done : done+n] {
				args = append(args, done+i, op.ID, op.Tenant, op.Key, op.Fingerprint, string(op.State),
					op.Version, nullJSON(op.Receipt), nullMS(op.ExpiresAt))
			}
			rs, err := t.query(replayChecks[n], args...)
			if err != nil {
				return err
			}
			for rs.Next() {
				var i, seq int
				if err := rs.Scan(&i, &seq); err != nil {
					rs.Close()
					return err
				}
				seqs[i] = seq
			}
			if err := rs.Close(); err != nil {
				return err
			}
			if err := rs.Err(); err != nil {
				return err
			}
			done += n
		}
		next := make(map[int64]int, len(reads))
		for i, op := range reads {
			if seqs[i] >= 0 {
				next[op.ID] = seqs[i]
			}
		}
		rows := batch[:0:0]
		for _, r := range batch {
			if seqs[idx[r.key]] >= 0 {
				rows = append(rows, r)
			}
		}
		for len(rows) > 0 {
			n := chunk(len(rows))
			args = args[:0]
			for _, r := range rows[:n] {
				a, op := r.a, r.op
				next[op.ID]++
				a.Seq = next[op.ID]
				args = append(args, op.ID, a.Seq, string(a.Outcome), a.Fingerprint, nullStr(a.TraceID), nullStr(a.WorkerID),
					nullStr(a.ProviderRef), nullStr(a.Error), ms(t.now), a.Duration.Microseconds(),
					nullStr(string(a.Finding)), nullStr(a.Detail))
			}
			res, err := t.exec(replayInserts[n], args...)
			if err != nil {
				return err
			}
			last, err := res.LastInsertId()
			if err != nil {
				return err
			}
			// One statement under the write lock: the rows took the ids
			// after the largest, in order (INTEGER PRIMARY KEY, no gaps).
			for i, r := range rows[:n] {
				r.a.ID, r.a.OperationID, r.a.StartedAt, r.ok = last-int64(n-1-i), r.op.ID, t.now, true
			}
			rows = rows[n:]
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

// readKey names one read of an operation: every column the check compares.
func readKey(op *model.Operation) string {
	return strconv.FormatInt(op.ID, 10) + "\x00" + strconv.FormatInt(op.Version, 10) + "\x00" + op.Tenant + "\x00" + op.Key +
		"\x00" + op.Fingerprint + "\x00" + string(op.State) + "\x00" + strconv.FormatInt(ms(op.ExpiresAt), 10) + "\x00" + string(op.Receipt)
}
