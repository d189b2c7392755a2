package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Watcher notices commits through LISTEN/NOTIFY: every retrysafe process
// notifies the schema's channel after its write transactions commit, and
// PostgreSQL delivers it to every listener — on any host. A goroutine waits on a connection of its
// own; Changed only reads a flag, so an idle console sends no query at all.
//
// LISTEN/NOTIFY cannot tell that the schema was dropped, or replaced by
// another ledger (demo --fresh renames a new one into its place): no one
// notifies, and the old listening connection stays up. So the watcher also
// compares the ledger's catalog identity — the oid of its operations table,
// to_regclass, read from the catalog and no ledger table — with the one it
// saw when it started: on every notification (at most once a second), on
// every reconnect, and in a slow probe every probeEvery on the pool. A
// difference is reported by Changed on every later call, as SQLite's
// watcher reports a replaced file.
type Watcher struct {
	changed atomic.Bool
	cancel  context.CancelFunc
	done    chan struct{}
	s       *Store
	ident   uint32 // the operations table's oid when watching began

	mu      sync.Mutex
	lastErr error // set while the listening connection is down
	lost    error // set for good once the ledger was dropped or replaced
	checked time.Time
}

// probeEvery is how often an idle watcher checks the ledger is still the
// one it watches: one catalog lookup on the pool.
var probeEvery = 3 * time.Second

// identQuery is the ledger's catalog identity: NULL once its schema (or
// its operations table) is gone, another oid once another ledger took its
// place.
const identQuery = `SELECT to_regclass($1)::oid`

func (s *Store) identName() string { return quoteIdent(s.schema) + ".operations" }

// verify compares an identity read (oid NULL: gone) with the watched one
// and records a loss for good.
func (w *Watcher) verify(oid *uint32, err error) {
	if err != nil {
		return // an outage is the listening connection's to report
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checked = time.Now()
	if w.lost != nil {
		return
	}
	switch {
	case oid == nil:
		w.lost = model.Errorf(model.CodeInternal, "the ledger in schema %s was dropped while this process had it open: what it shows is what was there — restart retrysafe", w.s.schema)
	case *oid != w.ident:
		w.lost = model.Errorf(model.CodeInternal, "the ledger in schema %s was replaced (dropped and made again, as demo --fresh does) while this process had it open: what it shows is the old ledger — restart retrysafe", w.s.schema)
	}
}

// probe checks the ledger's identity every probeEvery until Close.
func (w *Watcher) probe(ctx context.Context) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var oid *uint32
		err := w.s.pool.QueryRow(qctx, identQuery, w.s.identName()).Scan(&oid)
		cancel()
		if ctx.Err() != nil {
			return
		}
		w.verify(oid, err)
	}
}

// checkOn checks the identity on the listening connection (idle, between
// notifications), at most once a second unless always.
func (w *Watcher) checkOn(ctx context.Context, conn *pgx.Conn, always bool) {
	w.mu.Lock()
	recent := time.Since(w.checked) < time.Second
	w.mu.Unlock()
	if recent && !always {
		return
	}
	var oid *uint32
	err := conn.QueryRow(ctx, identQuery, w.s.identName()).Scan(&oid)
	w.verify(oid, err)
}

// Watch connects a listening connection and starts waiting for
// notifications on it.
func (s *Store) Watch(ctx context.Context) (store.Watcher, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	var oid *uint32
	if err := conn.QueryRow(ctx, identQuery, s.identName()).Scan(&oid); err != nil || oid == nil {
		conn.Close(context.WithoutCancel(ctx))
		if err == nil {
			return nil, model.Errorf(model.CodeUnavailable, "schema %s holds no ledger", s.schema)
		}
		return nil, s.translate(err, "watch")
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel, done: make(chan struct{}), s: s, ident: *oid, checked: time.Now()}
	probed := make(chan struct{})
	go func() { defer close(probed); w.probe(wctx) }()
	go func() { w.run(wctx, s, conn); <-probed; close(w.done) }()
	return w, nil
}

func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	cc := s.cfg.ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, s.translate(err, "watch")
	}
	if _, err := conn.Exec(ctx, `LISTEN `+quoteIdent(channel(s.schema))); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, s.translate(err, "watch")
	}
	return conn, nil
}

// run waits for notifications until Close; a lost connection is replaced
// (with a pause between tries), and reported as a change once it is back,
// since notifications sent meanwhile were missed.
func (w *Watcher) run(ctx context.Context, s *Store, conn *pgx.Conn) {
	for {
		for {
			_, err := conn.WaitForNotification(ctx)
			if err != nil {
				conn.Close(context.Background())
				if ctx.Err() != nil {
					return
				}
				w.setErr(s.translate(err, "watch"))
				break
			}
			w.checkOn(ctx, conn, false)
			w.changed.Store(true)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			c, err := s.listen(ctx)
			if err != nil {
				w.setErr(err)
				continue
			}
			conn = c
			// Notifications were missed: the ledger may have been
			// replaced meanwhile. Known before the outage is cleared.
			w.checkOn(ctx, conn, true)
			w.setErr(nil)
			w.changed.Store(true)
			break
		}
	}
}

func (w *Watcher) setErr(err error) {
	w.mu.Lock()
	w.lastErr = err
	w.mu.Unlock()
}

// Changed reports whether any transaction committed a write to the ledger
// since the last call. While the listening connection is down it returns
// the error; once it is back it reports a change. Once the ledger was
// dropped or replaced it returns that on every call.
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	w.mu.Lock()
	err, lost := w.lastErr, w.lost
	w.mu.Unlock()
	if lost != nil {
		return false, lost
	}
	if err != nil {
		return false, model.Wrap(model.CodeUnavailable, err, "%v", err)
	}
	return w.changed.Swap(false), nil
}

// Close stops listening.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}
