// Package testledger is the ledger the packages' tests run on: a real
// SQLite ledger file in t.TempDir() (never a mock of the store), the
// sandbox provider's file beside it, the service over both with the
// built-in tools, and a clock pinned to a fixed instant unless a test asks
// for the real one. Everything is closed when the test ends.
package testledger

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// Start is where a new Clock stands unless told otherwise.
var Start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// Clock is a fake time source shared by a store, its service and a test,
// moved by hand, in whole milliseconds so stored times compare exactly.
type Clock struct{ ms atomic.Int64 }

// NewClock is a clock standing at start.
func NewClock(start time.Time) *Clock {
	c := &Clock{}
	c.Set(start)
	return c
}

func (c *Clock) Now() time.Time          { return time.UnixMilli(c.ms.Load()).UTC() }
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *Clock) Set(t time.Time)         { c.ms.Store(t.UnixMilli()) }

// Ledger is one test's ledger file, sandbox provider and service.
type Ledger struct {
	t           testing.TB
	Dir         string
	Path        string // the ledger file
	ProviderDB  string // the sandbox provider's file
	Store       *sqlite.Store
	Sandbox     *sandbox.Sandbox
	Svc         *reconcile.Service
	Clock       *Clock           // nil when the ledger runs on now
	now         func() time.Time // the clock the store is given
	opened      *ledger.Ledger   // what ledger.OpenConfig opened (Close closes it)
	providers   provider.Registry
	durability  store.Durability
	noProviders bool
	id          string // the id a new ledger is given ("" = a random one)
}

// Option tunes New.
type Option func(*Ledger)

// WithClock pins the ledger to c (default: a new clock at Start).
func WithClock(c *Clock) Option { return func(l *Ledger) { l.Clock, l.now = c, c.Now } }

// WithNow runs the ledger on now, e.g. the real clock or one offset from
// it; Ledger.Clock is then nil.
func WithNow(now func() time.Time) Option { return func(l *Ledger) { l.Clock, l.now = nil, now } }

// Fast makes the ledger unsynchronised (store.Fast): for tests that write
// a great deal and never cut the power.
func Fast() Option { return func(l *Ledger) { l.durability = store.Fast } }

// Named names the ledger file (default ledger.db; the provider's file is
// NAME.provider.db beside it).
func Named(file string) Option {
	return func(l *Ledger) {
		l.Path = filepath.Join(l.Dir, file)
		l.ProviderDB = filepath.Join(l.Dir, trimDB(file)+".provider.db")
	}
}

// ProviderFile names the sandbox provider's file in the ledger's directory.
func ProviderFile(file string) Option {
	return func(l *Ledger) { l.ProviderDB = filepath.Join(l.Dir, file) }
}

// NoProviders opens no sandbox provider: the service has none.
func NoProviders() Option { return func(l *Ledger) { l.noProviders = true } }

// ID gives a new ledger the id id (32 lowercase hex digits) in place of a
// random one: the downstream keys of its operations, which name it, are
// then the same in every run (for tests that compare what shows them).
func ID(id string) Option { return func(l *Ledger) { l.id = id } }

// New creates and opens a ledger in a new t.TempDir(), closed at the end of
// the test.
func New(t testing.TB, opts ...Option) *Ledger {
	t.Helper()
	l := In(t, t.TempDir(), opts...)
	t.Cleanup(l.Close)
	return l
}

// In creates and opens a ledger in dir, which the caller closes: for a
// test that makes many (a property test's every run).
func In(t testing.TB, dir string, opts ...Option) *Ledger {
	t.Helper()
	l := &Ledger{t: t, Dir: dir, Path: filepath.Join(dir, "ledger.db"), ProviderDB: filepath.Join(dir, "ledger.provider.db")}
	WithClock(NewClock(Start))(l)
	for _, o := range opts {
		o(l)
	}
	if l.id != "" {
		l.setID()
	}
	l.Open()
	return l
}

// setID creates the ledger and gives it l.id.
func (l *Ledger) setID() {
	l.t.Helper()
	st, err := sqlite.Open(l.Path, l.Options())
	if err != nil {
		l.t.Fatal(err)
	}
	defer st.Close()
	err = st.WithTx(context.Background(), func(tx store.Tx) error {
		_, err := tx.Exec(`UPDATE ledger_meta SET ledger_id = ?`, l.id)
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// Options are the store options the ledger is opened with.
func (l *Ledger) Options() store.Options {
	return store.Options{Create: true, Durability: l.durability, Now: l.now}
}

// Open opens the ledger and its provider (again, after Close), as every
// retrysafe command does (ledger.OpenConfig with the built-in config,
// ready to dispatch): the sandbox file is tied to the ledger and recorded
// as its provider file, and the providers are the ones the product uses
// (they check and record how far the file went), so the CLI's lookups on
// this ledger trust the file exactly as they trust one a real call used.
// The service is a plain one over them (no declared lookup rates or
// authoritative providers), as the packages' tests expect.
func (l *Ledger) Open() {
	l.t.Helper()
	use := ledger.Dispatching
	if l.noProviders {
		use = ledger.NoProviders
	}
	lg, err := ledger.OpenConfig(context.Background(), l.Path, config.Default(), ledger.ConfigOptions{ProviderDB: l.ProviderDB, Use: use, Store: l.Options()})
	if err != nil {
		l.t.Fatal(err)
	}
	st, ok := lg.Store().(*sqlite.Store)
	if !ok {
		lg.Close()
		l.t.Fatalf("testledger: %s opened as %T, not a SQLite ledger", l.Path, lg.Store())
	}
	l.opened, l.Store, l.Sandbox = lg, st, lg.Sandbox()
	l.providers = provider.Registry{}
	if !l.noProviders {
		l.providers = lg.Service().Providers
	}
	l.Svc = reconcile.New(st, config.Default().Tools, l.providers)
}

// Close closes the ledger and its provider; closing twice is fine.
func (l *Ledger) Close() {
	if l.opened != nil {
		l.opened.Close()
		l.opened, l.Store, l.Sandbox = nil, nil, nil
	}
}

// Reopen drops every connection and opens new ones: what a new worker
// process, or a retry after a lost reply, sees.
func (l *Ledger) Reopen() {
	l.Close()
	l.Open()
}

// Second opens the same ledger again, on the same clock and providers:
// another process's view, for writes a reader must notice.
func (l *Ledger) Second(t testing.TB) *reconcile.Service {
	t.Helper()
	st, err := sqlite.Open(l.Path, store.Options{Now: l.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	providers := provider.Registry{}
	if l.Sandbox != nil {
		providers = l.providers
	}
	return reconcile.New(st, config.Default().Tools, providers)
}

func trimDB(file string) string {
	if ext := filepath.Ext(file); ext == ".db" {
		return file[:len(file)-len(ext)]
	}
	return file
}

// File creates a new, empty ledger named file in a new t.TempDir(), closes
// it and returns its path: for code under test that opens the ledger
// itself (the lab's runner, a re-executed command).
func File(t testing.TB, file string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), file)
	st, err := sqlite.Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
