package sqlite

import (
	"context"
	"database/sql"
	"os"

	"github.com/retrysafe/retrysafe/model"
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
	if s.frozen {
		// data_version never moves on an immutable file, and pinning the
		// one reader connection would leave none for the reads.
		return &frozenWatcher{s: s}, nil
	}
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

// frozenWatcher watches a ledger read as an immutable file (Store.Frozen):
// nothing it reads ever changes, so it reports no change — and an error,
// from the first sign on, once the file on disk is no longer what was
// opened: replaced, rewritten (a checkpoint), or with commits waiting in a
// write-ahead log that this store never reads.
type frozenWatcher struct {
	s *Store
}

func (w *frozenWatcher) Changed(context.Context) (bool, error) {
	s := w.s
	if err := s.nameMoved(s.frozenAt); err != nil {
		return false, err
	}
	fi, err := os.Stat(s.path)
	if err != nil || s.frozenAt == nil || !walEmpty(s.path) ||
		fi.Size() != s.frozenAt.Size() || !fi.ModTime().Equal(s.frozenAt.ModTime()) {
		return false, model.Errorf(model.CodeUnavailable, "%s changed on disk since it was opened: this read-only view is a snapshot of the file as it was then (its directory is not writable here, so commits by others are not followed) — reopen to see the ledger as it is now", s.file())
	}
	return false, nil
}

func (w *frozenWatcher) Close() error { return nil }
