package sqlite

import (
	"context"
	"database/sql"
	"os"

	"github.com/retrysafe/retrysafe/store"
)

// Watcher notices writes by other connections and processes cheaply:
// PRAGMA data_version on one pinned connection changes exactly when another
// connection has committed, so polling it costs one tiny query, not a
// re-read of the ledger.
type Watcher struct {
	conn *sql.Conn
	last int64
	s    *Store      // translates its errors
	file os.FileInfo // the ledger file as opened (nil: could not stat it)
	wal  os.FileInfo // its write-ahead log as opened (nil: none then)
}

// Watch pins a reader connection for change detection.
func (s *Store) Watch(ctx context.Context) (store.Watcher, error) {
	c, err := s.r.Conn(ctx)
	if err != nil {
		return nil, s.translate(err, "watch")
	}
	w := &Watcher{conn: c, s: s, file: s.openedFile(), wal: s.openedWAL()}
	if err := c.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&w.last); err != nil {
		c.Close()
		return nil, s.translate(err, "watch")
	}
	return w, nil
}

// Changed reports whether any other connection committed since the last call.
// Writes through this store's own writer connection count too: it is a
// different connection from the pinned reader.
//
// The ledger file removed or replaced under the store (a restore from a
// copy, a new file moved into place) is an error on every later call: the
// pinned connection still reads the old file, which nobody writes any more,
// so "nothing changed" would keep calling a screen current that no longer
// is the ledger. A writable store also refuses every later write from
// then on, before anything is committed into the old file. So does a
// write-ahead log removed or replaced (the other processes' commits go
// into a new one this connection never reads); the writer's next commit
// copies its own into the ledger file (checkFiles).
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	if err := w.s.nameMoved(w.file); err != nil {
		return false, err
	}
	if err := w.s.walMoved(w.wal); err != nil {
		return false, err
	}
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
