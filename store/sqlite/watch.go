package sqlite

import (
	"context"
	"database/sql"

	"github.com/retrysafe/retrysafe/store"
)

// Watcher notices writes by other connections and processes cheaply:
// PRAGMA data_version on one pinned connection changes exactly when another
// connection has committed, so polling it costs one tiny query, not a
// re-read of the ledger.
type Watcher struct {
	conn *sql.Conn
	last int64
	s    *Store // translates its errors
}

// Watch pins a reader connection for change detection.
func (s *Store) Watch(ctx context.Context) (store.Watcher, error) {
	c, err := s.r.Conn(ctx)
	if err != nil {
		return nil, s.translate(err, "watch")
	}
	w := &Watcher{conn: c, s: s}
	if err := c.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&w.last); err != nil {
		c.Close()
		return nil, s.translate(err, "watch")
	}
	return w, nil
}

// Changed reports whether any other connection committed since the last call.
// Writes through this store's own writer connection count too: it is a
// different connection from the pinned reader.
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return false, w.s.translate(err, "watch for changes")
	}
	changed := v != w.last
	w.last = v
	return changed, nil
}

// Close releases the pinned connection.
func (w *Watcher) Close() error { return w.conn.Close() }
