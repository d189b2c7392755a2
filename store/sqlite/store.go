// Package sqlite is the ledger on one SQLite file (modernc.org/sqlite, pure
// Go), implementing the store interfaces: pragmas in the DSN, embedded
// numbered migrations, BEGIN IMMEDIATE for every transaction that may write,
// compare-and-set state changes, driver errors translated by SQLite result
// code, and group commit of concurrent transactions.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Store is an open ledger.
type Store struct {
	path string
	// unplaced: errors name the ledger without its path (Unplace).
	unplaced atomic.Bool
	w        *sql.DB // the writer pool: one connection, BEGIN IMMEDIATE
	r        *sql.DB // readers: query_only, many connections under WAL
	now      func() time.Time
	ro       bool
	// onMigrate is store.Options.OnMigrate.
	onMigrate func(from, to int)
	// frozen: read as an immutable file (see FrozenReporter); frozenAt is
	// the file as opened, to notice it changing (frozenWatcher).
	frozen   bool
	frozenAt os.FileInfo
	sync     string // FULL, or OFF for Fast bulk ledgers

	// The writer: one connection pinned for the store's life, taken in
	// turn through wsem, with its prepared statements by SQL text (parsing
	// dominated the cost of a replay before they were kept).
	wc    *sql.Conn
	wsem  chan struct{}
	stmts map[string]*sql.Stmt
	wsync string // the writer connection's synchronous level now ("" unknown)

	// Transactions waiting to share one commit (see groupCommit).
	qmu       sync.Mutex
	queue     []*pendingTx
	lastBatch int // size of the last group commit

	// onBatch, when set, hears the size of every committed batch (the
	// gateway's group-commit histogram).
	onBatch atomic.Pointer[func(size int)]

	// leaveWALAsked is store.Options.LeaveWAL; madeDurable is set once a
	// batch ran at synchronous=FULL (see leaveWAL).
	leaveWALAsked bool
	madeDurable   atomic.Bool

	// readOnWriter is store.Options.ReadOnWriter: Seen asks the writer's
	// connection, and a one-call process never opens a reader.
	readOnWriter bool

	// seen is Seen's statement on the reader pool, prepared on first use.
	// seenKeys are keys Seen found (a hint, see Seen).
	peekMu   sync.Mutex
	seen     *sql.Stmt
	seenKeys map[string]struct{}
	seenPrev map[string]struct{} // the generation before (see remember)

	// opc is the writer's cache of operations read in relaxed batches
	// (see opCache); only the writer, holding wsem, touches it.
	opc opCache
	// ids are the open write transaction's next ids (see writerIDs);
	// only the writer, holding wsem, touches them.
	ids writerIDs
	lid ledgerID // LedgerID's cache

	// files are the ledger's files as opened (see checkFiles).
	files linkedFiles

	// replay is store.Replayer's cache and queue (replay.go).
	replay replayState
}

// ObserveBatches makes fn hear the number of callers every group commit
// carried. fn runs on the writer's path: it must be quick (a histogram).
func (s *Store) ObserveBatches(fn func(size int)) { s.onBatch.Store(&fn) }

const sqliteHeader = "SQLite format 3\x00"

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int { return len(migrations()) }

// migrations are read from the binary once: every open asks for them twice
// (precheck's version check, then migrate), and nothing changes them.
var migrations = sync.OnceValue(func() []store.Migration { return store.Migrations(migrationFS, "migrations") })

func dsn(path string, o options, reader bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	// Savepoint (statement) journals in memory: every caller of a group
	// commit runs in a savepoint of its own, and with temporary files they
	// spilled to disk (pwrite per page) past 64 KiB.
	q.Add("_pragma", "temp_store(2)")
	if !o.ReadOnly {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	if o.Durability == store.Fast {
		q.Add("_pragma", "synchronous(OFF)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
	}
	if reader {
		q.Add("_pragma", "query_only(1)")
		q.Set("_txlock", "deferred")
	} else {
		q.Set("_txlock", "immediate")
	}
	// Every pooled connection opens an existing file: mode=rw, never
	// SQLite's default read-write-create. A connection the pool opens after
	// the ledger was removed (a console left open) then fails, instead of
	// making an empty database under the ledger's name that every later
	// command refuses as "not a retrysafe ledger". Only a new file is
	// created (create, Baseline), and by its own open.
	switch {
	case o.ReadOnly:
		q.Set("mode", "ro")
	case o.newFile:
		q.Set("mode", "rwc")
	default:
		q.Set("mode", "rw")
	}
	if o.immutable {
		q.Set("immutable", "1")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens (and, with Options.Create, creates) the ledger at path and
// brings its schema up to date. It refuses — with one clear line, touching
// nothing — a missing directory, a file that is not SQLite, a ledger written
// by a newer retrysafe, and a path it cannot read or write.
func Open(path string, opts store.Options) (*Store, error) {
	return openWaiting(path, options{Options: opts})
}

// openWaiting is open, waiting out other openers within the busy timeout.
func openWaiting(path string, o options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	// Processes opening a brand-new ledger together race to switch it to
	// WAL and to migrate it; SQLite answers some of those steps "locked"
	// at once instead of waiting (changing the journal mode takes no busy
	// handler). That is another opener at work, not an error: wait it out
	// within the busy timeout.
	deadline := time.Now().Add(o.BusyTimeout)
	pause := 2 * time.Millisecond
	for {
		s, err := open(path, o)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			if isBusy(err) {
				err = model.Wrap(model.CodeBusy, err, "ledger %s stayed locked by another process for %v while opening", path, o.BusyTimeout)
			}
			return s, err
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// OpenFrozen opens the ledger at path read-only as a snapshot, as Open
// does with store.Options.ReadOnly for a ledger in a directory this process
// may not write: the file is read as immutable (see Store.Frozen), and it
// must have no write-ahead log content. For tests of what shows such a
// ledger, and tools that want one fixed view of a file nobody writes.
func OpenFrozen(path string, opts store.Options) (*Store, error) {
	if !walEmpty(path) {
		return nil, model.Errorf(model.CodeUnavailable, "cannot read %s as a snapshot: %s holds commits not yet in it", path, filepath.Base(path)+"-wal")
	}
	opts.ReadOnly, opts.Create = true, false
	return openWaiting(path, options{Options: opts, immutable: true})
}

// options are Open's, plus what only this driver decides for itself.
type options struct {
	store.Options
	immutable bool // read-only ledger in a directory we cannot write
	newFile   bool // the connection may create the file (Baseline's own)
}

func open(path string, o options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if path == "" {
		return nil, model.Errorf(model.CodeInvalid, "no ledger path given")
	}
	if err := precheck(path, o); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, o, false))
	if err != nil {
		return nil, model.Wrap(model.CodeInternal, err, "open %s: %v", path, err)
	}
	// One writer connection: in-process writers queue in Go (cheap hand-off)
	// instead of sleeping in SQLite's busy handler.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", dsn(path, o, true))
	if err != nil {
		w.Close()
		return nil, model.Wrap(model.CodeInternal, err, "open %s: %v", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	if o.immutable {
		// An immutable file is never checked for changes: each connection
		// keeps the pages it read for its whole life and reads the others
		// from the file as it is then. Several connections showed one
		// screen counts from one moment and rows from another; one
		// connection, kept for the store's life, is one view.
		r.SetMaxOpenConns(1)
		r.SetMaxIdleConns(1)
		r.SetConnMaxLifetime(0)
		r.SetConnMaxIdleTime(0)
	}
	s := &Store{path: path, w: w, r: r, now: o.Now, ro: o.ReadOnly, sync: "FULL", leaveWALAsked: o.LeaveWAL,
		readOnWriter: o.ReadOnWriter, frozen: o.immutable, onMigrate: o.OnMigrate}
	if o.immutable {
		s.frozenAt, _ = os.Stat(path)
	}
	if o.Durability == store.Fast {
		s.sync = "OFF"
	}
	s.wc, err = w.Conn(context.Background())
	if err != nil {
		err = s.translate(err, "open")
	} else {
		s.wsem = make(chan struct{}, 1)
		err = s.migrate(context.Background())
	}
	if err != nil {
		s.Close()
		if o.ReadOnly && !o.immutable && isReadOnlyDir(err) && walEmpty(path) {
			// Reading a WAL ledger needs its -shm index, which SQLite cannot
			// create in a directory this process may not write. With no WAL
			// content the main file is the whole ledger: read it as an
			// immutable file instead (what --read-only is for).
			o.immutable = true
			return open(path, o)
		}
		return nil, err
	}
	if !o.ReadOnly {
		s.watchFiles()
	}
	return s, nil
}

// isReadOnlyDir reports SQLite's "cannot create the -wal/-shm here".
func isReadOnlyDir(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_READONLY_DIRECTORY || se.Code()&0xff == sqlite3.SQLITE_CANTOPEN)
}

// walEmpty reports whether path has no write-ahead log content.
func walEmpty(path string) bool {
	st, err := os.Stat(path + "-wal")
	return errors.Is(err, os.ErrNotExist) || (err == nil && st.Size() == 0)
}

// applicationID marks a retrysafe ledger in its SQLite header ("RSLG"; set
// by migration 6): Open tells its own files from other programs' by it.
const applicationID = 0x52534C47

// legacyVersions are the schema versions of ledgers made before they
// marked themselves: such a file is recognised by its tables instead.
const legacyVersions = 5

// precheck looks at the file before SQLite does, so a wrong path is refused
// without being created, converted to WAL or otherwise modified: no pragma
// that writes runs before the header says this is a ledger (or an empty
// file, or none at all).
func precheck(path string, o options) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return model.Errorf(model.CodeUnavailable, "cannot open ledger %s: directory %s does not exist", path, dir)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !o.Create || o.ReadOnly {
			return model.Errorf(model.CodeNotFound, "no ledger at %s (create one with `retrysafe call` or `retrysafe demo`)", path)
		}
		return create(path, o)
	case err != nil:
		return model.Wrap(model.CodeUnavailable, err, "cannot open ledger %s: %v", path, unwrapPathErr(err))
	case st.IsDir():
		return model.Errorf(model.CodeUnavailable, "cannot open ledger %s: it is a directory", path)
	case !st.Mode().IsRegular():
		// /dev/null reads as an empty file, a FIFO blocks: neither is a
		// ledger, and SQLite must not be pointed at them.
		return model.Errorf(model.CodeUnsupported, "%s is not a regular file (%s); a ledger is a file", path, st.Mode().Type())
	}
	flag := os.O_RDWR
	if o.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) && !o.ReadOnly {
			return model.Wrap(model.CodeUnavailable, err, "cannot open ledger %s for writing: permission denied (use --read-only to look without changing it)", path)
		}
		return model.Wrap(model.CodeUnavailable, err, "cannot open ledger %s: %v", path, unwrapPathErr(err))
	}
	defer f.Close()
	head := make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	if n == 0 {
		return nil // an empty file someone made for the ledger: SQLite makes it one
	}
	if n < 100 || !bytes.Equal(head[:16], []byte(sqliteHeader)) {
		return model.Errorf(model.CodeUnsupported, "%s is not a SQLite database (not a retrysafe ledger); refusing to touch it", path)
	}
	uv := int(binary.BigEndian.Uint32(head[60:64])) // user_version
	app := binary.BigEndian.Uint32(head[68:72])     // application_id
	switch {
	case app == applicationID:
		if uv > SchemaVersion() {
			return model.Errorf(model.CodeUnsupported, "ledger %s has schema version %d; this retrysafe knows up to %d — upgrade retrysafe", path, uv, SchemaVersion())
		}
		return nil
	case app != 0:
		return model.Errorf(model.CodeUnsupported, "%s is another application's SQLite database (application_id %#x), not a retrysafe ledger; refusing to touch it", path, app)
	case uv >= 1 && uv <= legacyVersions && hasLedgerTables(path):
		return nil // a ledger from before the mark; migration 4 marks it
	}
	return model.Errorf(model.CodeUnsupported, "%s is a SQLite database but not a retrysafe ledger (no retrysafe mark, schema version %d); refusing to touch it", path, uv)
}

// hasLedgerTables reports whether the file holds the ledger's tables,
// reading it as an immutable file: no lock, no -wal or -shm, nothing
// written. A file whose writer was killed during a checkpoint is whole only
// with its -wal (alone it reads "malformed": its header already counts
// pages not yet written): such a file is read again with its log,
// read-only (SQLite may make the -shm index beside the -wal, never
// changes the file).
func hasLedgerTables(path string) bool {
	n, err := countLedgerTables(path, "mode=ro&immutable=1")
	if err != nil {
		if st, serr := os.Stat(path + "-wal"); serr != nil || st.Size() == 0 {
			return false
		}
		n, err = countLedgerTables(path, "mode=ro")
	}
	return err == nil && n == 5
}

func countLedgerTables(path, params string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('operations', 'attempts', 'decisions', 'tombstones', 'state_counts')`).Scan(&n)
	return n, err
}

// create makes a new ledger at path as one step: it is built beside it under
// a name of its own — schema, mark and all — and linked into place. No
// process ever sees a half-made ledger, and of several processes creating
// the same ledger at once one wins the link and the others open the
// winner's (a link never replaces a file, where a rename would).
func create(path string, o options) error {
	// A log without its database names none: SQLite would replay a removed
	// ledger's pages into the new one (its operations, under a new
	// identity). It may hold that ledger's latest commits: left alone.
	for _, suffix := range []string{"-wal", "-journal"} {
		// (A ledger another process has just created has its log too.)
		if st, err := os.Stat(path + suffix); err == nil && st.Size() > 0 && !exists(path) {
			return model.Errorf(model.CodeUnsupported, "cannot create ledger %s: %s%s is there without it — the log of a ledger removed without it, which may hold that ledger's latest commits and would be read into a new one; put the ledger file back, or move %s%s (and %s-shm) away to start a new ledger", path, path, suffix, path, suffix, path)
		}
	}
	tmp := fmt.Sprintf("%s.new-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + suffix)
		}
	}()
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot create ledger %s: %v", path, unwrapPathErr(err))
	}
	f.Close()
	co := o
	co.Create, co.ReadOnly, co.LeaveWAL, co.ReadOnWriter = false, false, false, false
	s, err := open(tmp, co)
	if err != nil {
		return err
	}
	// Closing checkpoints the WAL into the file: what is linked is whole.
	if err := s.Close(); err != nil {
		return model.Wrap(model.CodeInternal, err, "cannot create ledger %s: %v", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return model.Wrap(model.CodeUnavailable, err, "cannot create ledger %s: %v", path, unwrapPathErr(err))
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *Store) migrate(ctx context.Context) error {
	var current int
	// On the writer's connection, already open: a reader connection would
	// cost a call its own open and schema parse for one number.
	if err := s.wc.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return s.translate(err, "read schema version")
	}
	all := migrations()
	if current > len(all) {
		return model.Errorf(model.CodeUnsupported, "%s has schema version %d; this retrysafe knows up to %d — upgrade retrysafe", s.ledger(), current, len(all))
	}
	if current == len(all) {
		return nil
	}
	if s.ro {
		return model.Errorf(model.CodeUnsupported, "%s has schema version %d and needs migrating to %d before this retrysafe can read it: run `retrysafe migrate` once with the same --db (nothing was read or changed)", s.ledger(), current, len(all))
	}
	from := current
	err := s.withTx(ctx, false, func(tx *Tx) error {
		// Re-read under the write lock: another process may have migrated.
		if err := tx.tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
			return err
		}
		from = current
		for _, m := range all[current:] {
			if _, err := tx.tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && from < len(all) && s.onMigrate != nil {
		s.onMigrate(from, len(all))
	}
	return err
}

// Path is the ledger file.
func (s *Store) Path() string { return s.path }

// Frozen reports whether the ledger is read as a snapshot of its file as
// opened (store.FrozenReporter): read-only, in a directory this process may
// not write, so SQLite reads it as immutable and sees no later commit.
func (s *Store) Frozen() bool { return s.frozen }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.ro }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Close closes both pools, the readers first: the last connection to
// close is the writer's, and it checkpoints the WAL into the file — unless
// store.Options.LeaveWAL lets it leave a small log for the next writer.
func (s *Store) Close() error {
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	s.stmts = nil
	s.peekMu.Lock()
	if s.seen != nil {
		errs = append(errs, s.seen.Close())
		s.seen = nil
	}
	s.peekMu.Unlock()
	s.replay.mu.Lock()
	if s.replay.peek != nil {
		errs = append(errs, s.replay.peek.Close())
		s.replay.peek = nil
	}
	s.replay.mu.Unlock()
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.wc != nil {
		if s.leaveWAL() {
			_ = noCheckpointOnClose(s.wc) // failing that, Close checkpoints
		}
		errs = append(errs, s.wc.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// codeText names a SQLite result code, extended codes included (the
// driver's table names few of those).
func codeText(code int) string {
	if t, ok := sqlite.ErrorCodeString[code]; ok {
		return t // "words (SQLITE_NAME)"
	}
	return fmt.Sprintf("%s, extended code %d", sqlite.ErrorCodeString[code&0xff], code)
}

// isBusy reports whether err is SQLite's "locked by another connection",
// primary or extended code.
func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// translate maps driver errors to model errors by SQLite result code; model
// errors and busy errors (retried by WithTx) pass through unchanged.
func (s *Store) translate(err error, what string) error {
	if err == nil {
		return nil
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return model.Wrap(model.CodeBusy, err, "%s: %v before the transaction finished", s.ledger(), err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	prefix := s.file()
	if what != "" {
		prefix += ": " + what
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return err // WithTx retries these inside the deadline
	case sqlite3.SQLITE_CONSTRAINT:
		return model.Wrap(model.CodeConflict, err, "%s: constraint violated (%s)", prefix, codeText(se.Code()))
	case sqlite3.SQLITE_NOTADB:
		return model.Wrap(model.CodeUnsupported, err, "%s is not a SQLite database (not a retrysafe ledger)", s.file())
	case sqlite3.SQLITE_CORRUPT:
		return model.Wrap(model.CodeUnsupported, err, "%s is damaged (database disk image is malformed)", s.file())
	case sqlite3.SQLITE_READONLY:
		return model.Wrap(model.CodeUnavailable, err, "%s is read-only here: %s", s.file(), codeText(se.Code()))
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return model.Wrap(model.CodeUnavailable, err, "cannot open %s: %s; can this user write it and its directory? (SQLite keeps %s and %s beside it)", s.file(), codeText(se.Code()), s.beside("-wal"), s.beside("-shm"))
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_NOLFS:
		// The machine, not the request or the configuration: internal,
		// so a runner retries the same key later rather than giving up on
		// a valid request.
		return model.Wrap(model.CodeInternal, err, "%s: storage error (%s): disk full or failing?", prefix, codeText(se.Code()))
	}
	return model.Wrap(model.CodeInternal, err, "%s: %v", prefix, err)
}

// The SQLite store and its transactions keep the ledger contract.
var (
	_ store.Ledger = (*Store)(nil)
	_ store.Tx     = (*Tx)(nil)
)

// OpenLedger is Open returning the store interface, for wiring that picks
// a driver by the ledger's location (lab.OpenFunc, the command line).
func OpenLedger(path string, o store.Options) (store.Ledger, error) {
	s, err := Open(path, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}
