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
type Watcher struct {
	changed atomic.Bool
	cancel  context.CancelFunc
	done    chan struct{}

	mu      sync.Mutex
	lastErr error // set while the listening connection is down
}

// Watch connects a listening connection and starts waiting for
// notifications on it.
func (s *Store) Watch(ctx context.Context) (store.Watcher, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel, done: make(chan struct{})}
	go w.run(wctx, s, conn)
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
	defer close(w.done)
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
// the error; once it is back it reports a change.
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	w.mu.Lock()
	err := w.lastErr
	w.mu.Unlock()
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
