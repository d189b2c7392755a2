package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// seenQuery is Seen's one statement: an operation or a tombstone under the
// key, both found through their (tenant, op_key) keys.
const seenQuery = `SELECT EXISTS (SELECT 1 FROM operations WHERE tenant = ?1 AND op_key = ?2)
	OR EXISTS (SELECT 1 FROM tombstones WHERE tenant = ?1 AND op_key = ?2)`

// Seen reports whether tenant has an operation or a tombstone under key. It
// reads on the reader pool (never waiting for the writer) with a statement
// prepared once: it runs before every call (store.Peeker). Keys found are
// remembered (up to maxSeen, then it starts over): a key once seen stays
// seen — an operation becomes a tombstone — until its tombstone is
// forgotten, and a stale "seen" only costs that call its cheap first try.
func (s *Store) Seen(ctx context.Context, tenant, key string) (bool, error) {
	id := tenant + "\x00" + key
	if s.knows(id) {
		return true, nil
	}
	var seen bool
	if s.readOnWriter {
		var err error
		if seen, err = s.seenOnWriter(ctx, tenant, key); err != nil {
			return false, err
		}
	} else {
		st, err := s.seenStmt(ctx)
		if err != nil {
			return false, err
		}
		if err := st.QueryRowContext(ctx, tenant, key).Scan(&seen); err != nil {
			return false, s.translate(err, "read operation")
		}
	}
	if seen {
		s.remember(id)
	}
	return seen, nil
}

// maxSeen bounds the keys remembered in one generation (see remember).
const maxSeen = 1 << 16

// knows reports whether the key (opCacheKey) is remembered in use.
func (s *Store) knows(id string) bool {
	s.peekMu.Lock()
	_, known := s.seenKeys[id]
	if !known {
		_, known = s.seenPrev[id]
	}
	s.peekMu.Unlock()
	return known
}

// remember notes a key in use: Seen found it, or this process created its
// operation. Past maxSeen keys the set starts a new generation and keeps the
// one before, so a key is forgotten only after at least maxSeen others.
func (s *Store) remember(id string) {
	s.peekMu.Lock()
	if len(s.seenKeys) >= maxSeen {
		s.seenPrev, s.seenKeys = s.seenKeys, nil
	}
	if s.seenKeys == nil {
		s.seenKeys = make(map[string]struct{}, 1024)
	}
	s.seenKeys[id] = struct{}{}
	s.peekMu.Unlock()
}

// Recalls is store.Recaller: a key Seen found, whose operation this process
// created (CreateLocal), or that the replay cache holds, is in use; any
// other is taken for new, with no read. A store opened ReadOnWriter (one
// call per process, its memory empty) cannot tell: it reads (Seen).
func (s *Store) Recalls(tenant, key string) (used, ok bool) {
	if s.readOnWriter {
		return false, false
	}
	id := opCacheKey(tenant, key)
	if s.knows(id) {
		return true, true
	}
	rs := &s.replay
	rs.mu.Lock()
	_, cached := rs.ops[id]
	rs.mu.Unlock()
	return cached, true
}

func (s *Store) seenStmt(ctx context.Context) (*sql.Stmt, error) {
	s.peekMu.Lock()
	defer s.peekMu.Unlock()
	if s.seen == nil {
		st, err := s.r.PrepareContext(ctx, seenQuery)
		if err != nil {
			return nil, s.translate(err, "read operation")
		}
		s.seen = st
	}
	return s.seen, nil
}

// seenOnWriter is Seen's query on the writer's connection, taken in turn
// (store.Options.ReadOnWriter), with the writer's prepared statements.
func (s *Store) seenOnWriter(ctx context.Context, tenant, key string) (bool, error) {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return false, s.translate(ctx.Err(), "read operation")
	}
	defer func() { <-s.wsem }()
	c := &connTx{s: s, ctx: ctx}
	var seen bool
	if err := c.QueryRowContext(ctx, seenQuery, tenant, key).Scan(&seen); err != nil {
		return false, s.translate(err, "read operation")
	}
	return seen, nil
}

// Tombstone reads tenant's live tombstone under key on the reader pool
// (store.Reader), as Tx.GetTombstone does in a transaction.
func (s *Store) Tombstone(ctx context.Context, tenant, key string) (*model.Tombstone, error) {
	var ts model.Tombstone
	var exp, forget int64
	err := s.r.QueryRowContext(ctx, `SELECT tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at
		FROM tombstones WHERE tenant = ? AND op_key = ? AND forget_at > ?`, tenant, key, ms(s.now())).
		Scan(&ts.Tenant, &ts.Key, &ts.Tool, &ts.Fingerprint, &ts.FinalState, &exp, &forget)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no tombstone")
	}
	if err != nil {
		return nil, s.translate(err, "read tombstone")
	}
	ts.ExpiredAt, ts.ForgetAt = time.UnixMilli(exp).UTC(), time.UnixMilli(forget).UTC()
	return &ts, nil
}
