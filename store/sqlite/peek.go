package sqlite

import (
	"context"
	"database/sql"
)

// seenQuery is Seen's one statement: an operation or a tombstone under the
// key, both found through their (tenant, op_key) keys.
const seenQuery = `SELECT EXISTS (SELECT 1 FROM operations WHERE tenant = ?1 AND op_key = ?2)
	OR EXISTS (SELECT 1 FROM tombstones WHERE tenant = ?1 AND op_key = ?2)`

// Seen reports whether tenant has an operation or a tombstone under key. It
// reads on the reader pool (never waiting for the writer) with a statement
// prepared once: it runs before every call (store.Peeker).
func (s *Store) Seen(ctx context.Context, tenant, key string) (bool, error) {
	st, err := s.seenStmt(ctx)
	if err != nil {
		return false, err
	}
	var seen bool
	if err := st.QueryRowContext(ctx, tenant, key).Scan(&seen); err != nil {
		return false, s.translate(err, "read operation")
	}
	return seen, nil
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
