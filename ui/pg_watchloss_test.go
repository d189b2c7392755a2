package ui

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// failingLedger is a ledger whose reads and watcher can be made to fail
// as a PostgreSQL ledger's do when its schema is dropped or the server is
// down.
type failingLedger struct {
	store.Ledger
	mu       sync.Mutex
	readErr  error
	watchErr error
}

func (f *failingLedger) set(read, watch error) {
	f.mu.Lock()
	f.readErr, f.watchErr = read, watch
	f.mu.Unlock()
}

func (f *failingLedger) errs() (error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readErr, f.watchErr
}

func (f *failingLedger) Counts(ctx context.Context, tenant string) (store.Counts, error) {
	if r, _ := f.errs(); r != nil {
		return store.Counts{}, r
	}
	return f.Ledger.Counts(ctx, tenant)
}

func (f *failingLedger) List(ctx context.Context, q store.ListQuery) ([]model.Operation, error) {
	if r, _ := f.errs(); r != nil {
		return nil, r
	}
	return f.Ledger.List(ctx, q)
}

func (f *failingLedger) Watch(ctx context.Context) (store.Watcher, error) {
	w, err := f.Ledger.Watch(ctx)
	if err != nil {
		return nil, err
	}
	return &failingWatcher{Watcher: w, f: f}, nil
}

type failingWatcher struct {
	store.Watcher
	f *failingLedger
}

func (w *failingWatcher) Changed(ctx context.Context) (bool, error) {
	if _, e := w.f.errs(); e != nil {
		return false, e
	}
	return w.Watcher.Changed(ctx)
}

// A PostgreSQL ledger's schema dropped under the console: the watcher says
// so (the banner, the header's "live refresh failing"); then r, whose
// reads fail with the server's raw "relation does not exist", left the
// header with only "⚠ cannot read ledger" — the unknown alarm gone — and
// the raw SQLSTATE in the status line. The alarms stay (they are never
// cut) and the banner says what happened.
func TestConsoleKeepsItsAlarmsAndTheBannerWhenTheLedgerIsDropped(t *testing.T) {
	l := fixture(t)
	f := &failingLedger{Ledger: l.st}
	cfg := config(l)
	cfg.Store = f
	h := open(t, cfg, 160, 30)
	h.tick()
	h.contains("refreshed 09:", "UNKNOWN")
	lost := model.Errorf(model.CodeInternal, "the ledger in schema t_x was dropped while this process had it open: what it shows is what was there — restart retrysafe")
	f.set(errors.New(`ERROR: relation "operations" does not exist (SQLSTATE 42P01)`), lost)
	l.clock.Advance(60e9)
	h.tick()
	h.contains("live refresh failing", "was dropped", "UNKNOWN")
	h.keys("r")
	h.contains("cannot read ledger", "UNKNOWN", "was dropped")
	h.lacks("SQLSTATE", "refreshed 09:")
}

// After an outage ends the watcher recovers and the header says
// "refreshed" again: the banner that said live refresh was failing must
// not stay until Esc, contradicting it.
func TestConsoleClearsTheRefreshFailingBannerWhenTheWatcherRecovers(t *testing.T) {
	l := fixture(t)
	f := &failingLedger{Ledger: l.st}
	cfg := config(l)
	cfg.Store = f
	h := open(t, cfg, 160, 30)
	h.tick()
	f.set(nil, model.Errorf(model.CodeUnavailable, "the ledger's server is unreachable: connection refused (an outage)"))
	l.clock.Advance(60e9)
	h.tick()
	h.contains("Live refresh failing", "outage")
	f.set(nil, nil)
	l.clock.Advance(60e9)
	h.tick()
	h.contains("refreshed 09:")
	h.lacks("Live refresh failing", "outage")
}
