// Package postgres is the ledger on PostgreSQL (github.com/jackc/pgx/v5,
// pgxpool), implementing the store interfaces for workers on many hosts:
// embedded numbered migrations applied under an advisory lock, one write
// transaction at a time per operation key (an advisory lock on the key and
// a row lock on the operation), compare-and-set state changes, driver
// errors translated by SQLSTATE, change notification through LISTEN/NOTIFY,
// and counts kept by triggers.
//
// A ledger lives in one schema of one database: the first entry of the
// URL's search_path (default public). Several ledgers can share a database
// in different schemas; the lab and the tests use that for a fresh ledger
// each.
package postgres

import (
	"context"
	"crypto/md5"
	"embed"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Store is an open ledger in one schema of a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool
	cfg    *pgxpool.Config
	schema string
	where  string // the URL without its password, for people
	// unplaced: errors name the ledger without where it lives (Unplace).
	unplaced atomic.Bool
	now      func() time.Time
	clock    *dbClock // the database server's clock; nil when Options.Now pinned one
	ro       bool
	// onMigrate is store.Options.OnMigrate.
	onMigrate func(from, to int)
	sync      string // synchronous_commit of durable transactions: on, or off for Fast

	// Commits wake the notifier, which tells the schema's LISTEN/NOTIFY
	// channel once per wake-up (many commits, one notification).
	notify     chan struct{}
	stopNotify chan struct{}
	notifyDone chan struct{}
	closeOnce  sync.Once

	// foldGap is foldGap (tests stretch it to see unfolded deltas).
	foldGap time.Duration

	// LedgerID's cache: the ledger's identity never changes once made.
	lidMu sync.Mutex
	lid   string
}

// IsURL reports whether where names a PostgreSQL ledger rather than a file.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int { return len(migrations()) }

func migrations() []store.Migration { return store.Migrations(migrationFS, "migrations") }

// Redact returns the URL without its password (in the user part or the
// query) or its client key's passphrase (sslpassword), for messages and
// Path.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		// sslpassword: the client key's passphrase (pgx).
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// SchemaOf is the schema a URL's ledger lives in: the first entry of its
// search_path, else public.
func SchemaOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "public"
	}
	sp := u.Query().Get("search_path")
	first := strings.TrimSpace(strings.SplitN(sp, ",", 2)[0])
	first = strings.Trim(first, `"`)
	if first == "" || first == "$user" {
		return "public"
	}
	return first
}

// WithSchema returns raw with its search_path set to schema.
func WithSchema(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", model.Errorf(model.CodeInvalid, "cannot parse PostgreSQL URL %s", Redact(raw))
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// quoteIdent quotes a name for SQL.
func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

// channel is the LISTEN/NOTIFY channel of a schema's ledger (the triggers
// of migration 1 compute the same name).
func channel(schema string) string {
	sum := md5.Sum([]byte(schema))
	return "retrysafe_" + hex.EncodeToString(sum[:])[:16]
}

// Open connects to the ledger at a postgres:// URL and brings its schema up
// to date (creating the schema with Options.Create). It refuses — with one
// clear line, touching nothing — a schema written by a newer retrysafe, a
// schema holding another program's tables, and a ledger that does not exist
// without Create.
//
// Unless the caller pinned Options.Now, the ledger's clock is the database
// server's (dbClock), measured against Options.HostClock (time.Now).
func Open(raw string, o store.Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	var clock *dbClock
	if o.Now == nil {
		host := o.HostClock
		if host == nil {
			host = time.Now
		}
		clock = &dbClock{host: host}
		o.Now = clock.now
	}
	if !IsURL(raw) {
		return nil, model.Errorf(model.CodeInvalid, "%q is not a postgres:// URL", raw)
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		// pgx's message may quote the URL, password and all.
		return nil, model.Errorf(model.CodeInvalid, "cannot parse PostgreSQL URL %s", Redact(raw))
	}
	schema := SchemaOf(raw)
	s := &Store{cfg: cfg, schema: schema, where: Redact(raw), now: o.Now, clock: clock, ro: o.ReadOnly, sync: "on", foldGap: foldGap, onMigrate: o.OnMigrate}
	if o.Durability == store.Fast {
		s.sync = "off"
	}
	rp := cfg.ConnConfig.RuntimeParams
	rp["search_path"] = quoteIdent(schema)
	if rp["application_name"] == "" {
		rp["application_name"] = "retrysafe"
	}
	// A lock held by another writer is waited for this long per statement;
	// WithTx then retries inside the caller's deadline (SQLite's busy
	// timeout, the same promise).
	rp["lock_timeout"] = strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)
	rp["synchronous_commit"] = s.sync
	if o.ReadOnly {
		rp["default_transaction_read_only"] = "on"
	}
	if !strings.Contains(raw, "pool_max_conns") {
		cfg.MaxConns = 16
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.BusyTimeout+10*time.Second)
	defer cancel()
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.translate(err, "connect")
	}
	if err := s.migrate(ctx, o.Create); err != nil {
		s.pool.Close()
		return nil, err
	}
	if clock != nil {
		clock.sample = func(ctx context.Context) (t time.Time, err error) {
			err = s.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t)
			return t, err
		}
		if err := clock.measure(ctx, clockSamples, false); err != nil {
			s.pool.Close()
			return nil, s.translate(err, "read the database's clock")
		}
	}
	if !s.ro {
		s.notify, s.stopNotify, s.notifyDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go s.notifier()
	}
	return s, nil
}

// notifyGap is the least time between two notifications of one process:
// commits within it share the next one. Each notification is a transaction
// of its own on the server; one per wake-up cost about 0.7 of one per new
// call at 8 workers (pg_stat_database), a fifth of the server's work per
// call. A watcher still hears of a write within a second.
const notifyGap = 50 * time.Millisecond

// foldGap is the least time between two folds of the counts' deltas by
// one process while it runs (see foldCounts); it folds once more when it
// closes, if it wrote since.
const foldGap = time.Second

// notifier tells watchers that something committed: one pg_notify, in a
// transaction of its own (no WAL flush to wait for), per wake-up, and at
// most one per notifyGap. A notification lost to a crash between a commit
// and this is caught up by the next commit anyone makes. At most once per
// foldGap it also folds the counts' deltas.
func (s *Store) notifier() {
	defer close(s.notifyDone)
	lastFold := time.Now()
	unfolded := false // this process committed since its last fold
	fold := func(ctx context.Context) {
		lastFold, unfolded = time.Now(), false
		_ = s.foldCounts(ctx)
	}
	young := true // the planner may still think operations is nearly empty
	send := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = s.pool.Exec(ctx, `SELECT pg_notify($1, '')`, channel(s.schema))
		unfolded = true
		if time.Since(lastFold) >= s.foldGap {
			fold(ctx)
			if young {
				young = s.analyzeYoung(ctx)
			}
		}
	}
	// A commit just before Close is still announced, and what this process
	// wrote is folded: a short-lived process (one `retrysafe call`) folds on its
	// way out, so deltas do not pile up where only such processes write.
	last := func() {
		select {
		case <-s.notify:
			send()
		default:
		}
		if unfolded && s.foldGap < 1<<62 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			fold(ctx)
			cancel()
		}
	}
	for {
		select {
		case <-s.notify:
			send()
		case <-s.stopNotify:
			last()
			return
		}
		select {
		case <-time.After(notifyGap):
		case <-s.stopNotify:
			last()
			return
		}
	}
}

// foldCountsSQL moves every delta the triggers appended (migration 8) into
// state_counts, in one statement: the rows it deletes are exactly the rows
// whose sums it adds. A fold already running elsewhere (the advisory lock
// is taken) makes this one a no-op rather than a queue behind it.
const foldCountsSQL = `WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('retrysafe fold ' || current_schema(), 0)) AS ok),
	d AS (DELETE FROM state_count_deltas WHERE (SELECT ok FROM lock) RETURNING tenant, state, n)
	INSERT INTO state_counts AS c (tenant, state, slot, n)
	SELECT tenant, state, 0, SUM(n) FROM d GROUP BY tenant, state
	ON CONFLICT (tenant, state, slot) DO UPDATE SET n = c.n + excluded.n`

// foldCounts folds the counts' deltas, in a transaction of its own whose
// commit waits for no WAL flush: lost to a crash, it is lost whole, and
// the deltas are still there to fold.
func (s *Store) foldCounts(ctx context.Context) error {
	b := &pgx.Batch{}
	b.Queue(beginSQL)
	b.Queue(relaxSQL)
	b.Queue(foldCountsSQL)
	b.Queue(commitSQL)
	return s.pool.SendBatch(ctx, b).Close()
}

// youngStatsSQL reads what the planner believes of operations (-1 rows:
// never analyzed) beside the pages it holds now.
const youngStatsSQL = `SELECT c.reltuples::float8,
	pg_relation_size(c.oid) / current_setting('block_size')::bigint
	FROM pg_class c WHERE c.oid = 'operations'::regclass`

// analyzeYoung gives the planner statistics for a ledger too young for
// autovacuum's (its first ANALYZE comes up to a minute after the writes, a
// naptime). Without them a key lookup — tenant = $1 AND op_key = $2 — is
// planned on a table the planner takes for nearly empty, where the index
// on (tenant, id) costs the same as the unique one on (tenant, op_key);
// the plan a connection caches after its fifth run can then scan a
// tenant's every row for one key, and keeps doing so as the table grows
// (at 8 workers, calls fell from 3,000 to 1,000 a second within 16,000
// new operations, the server's CPU per call doubled). One ANALYZE, once
// the table has a few pages, is enough: it replaces every connection's
// cached plans, and from then on the planner scales the rows it knows of
// by the table's size. It reports whether the ledger is still young (not
// yet analyzed with rows in it, by anyone). An ANALYZE the role may not run (not the
// tables' owner) is a warning, not an error: nothing is lost but the
// nudge, and it is not tried again.
func (s *Store) analyzeYoung(ctx context.Context) bool {
	var rows float64
	var pages int64
	if err := s.pool.QueryRow(ctx, youngStatsSQL).Scan(&rows, &pages); err != nil {
		return true // try again at the next fold
	}
	if rows >= 100 {
		return false // analyzed (by autovacuum, or an earlier run) with rows to go by
	}
	if pages < 10 {
		return true
	}
	_, _ = s.pool.Exec(ctx, `ANALYZE operations, attempts`)
	return false
}

// committed wakes the notifier without ever waiting for it.
func (s *Store) committed() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// OpenLedger is Open returning the store interface, for wiring that picks
// a driver by the ledger's location (lab.OpenFunc, the command line).
func OpenLedger(raw string, o store.Options) (store.Ledger, error) {
	s, err := Open(raw, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// schemaState reads what the schema holds: whether it exists, its schema
// version (-1 without a migrations table) and how many tables it has.
func (s *Store) schemaState(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (exists bool, version int, tables int, err error) {
	var hasMigrations bool
	err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
		(SELECT COUNT(*) FROM pg_tables WHERE schemaname = $1),
		EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'schema_migrations')`, s.schema).
		Scan(&exists, &tables, &hasMigrations)
	if err != nil {
		return
	}
	version = -1
	if hasMigrations {
		err = q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+quoteIdent(s.schema)+`.schema_migrations`).Scan(&version)
	}
	return
}

func (s *Store) migrate(ctx context.Context, create bool) error {
	all := migrations()
	check := func(exists bool, version, tables int) (done bool, err error) {
		switch {
		case !exists || (tables == 0 && version < 0):
			if !create || s.ro {
				return false, model.Errorf(model.CodeNotFound, "no ledger at %s (create one with `retrysafe call` or `retrysafe demo`)", s.where)
			}
			return false, nil
		case version < 0:
			return false, model.Errorf(model.CodeUnsupported, "schema %s of %s holds %d tables but no retrysafe ledger; refusing to touch it (choose another schema with search_path=NAME in the URL)", s.schema, s.where, tables)
		case version > len(all):
			return false, model.Errorf(model.CodeUnsupported, "ledger %s has schema version %d; this retrysafe knows up to %d — upgrade retrysafe", s.where, version, len(all))
		case version == len(all):
			return true, nil
		case s.ro:
			return false, model.Errorf(model.CodeUnsupported, "ledger %s has schema version %d and needs migrating to %d before this retrysafe can read it: run `retrysafe migrate` on this ledger once, as the schema's owner (nothing was read or changed)", s.where, version, len(all))
		}
		return false, nil
	}
	// The usual case — a ledger exists — in one statement and one round
	// trip (simple protocol: nothing to prepare), which every process
	// start waits for; anything else is read in full below.
	var current int
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+quoteIdent(s.schema)+`.schema_migrations`,
		pgx.QueryExecModeSimpleProtocol).Scan(&current)
	if err == nil {
		if done, err := check(true, current, 1); done || err != nil {
			return err
		}
	} else if code := sqlState(err); code != "42P01" && code != "3F000" { // undefined table, invalid schema name
		return s.translate(err, "read schema version")
	}
	exists, version, tables, err := s.schemaState(ctx, s.pool)
	if err != nil {
		return s.translate(err, "read schema version")
	}
	if done, err := check(exists, version, tables); done || err != nil {
		return err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.translate(err, "migrate")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// One migrator per schema at a time, across every host; the others
	// wait here and then find the work done.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('retrysafe migrate ' || $1, 0))`, s.schema); err != nil {
		return s.translate(err, "migrate")
	}
	if exists, version, tables, err = s.schemaState(ctx, tx); err != nil {
		return s.translate(err, "read schema version")
	}
	if done, err := check(exists, version, tables); done || err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+quoteIdent(s.schema)); err != nil {
			return s.translate(err, "create schema "+s.schema)
		}
	}
	if version < 0 {
		version = 0
	}
	from := version
	for _, m := range all[version:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			if sqlState(err) == "42501" { // insufficient_privilege
				return s.mayNotMigrate(err, from, len(all))
			}
			te := s.translate(err, "migration "+m.Name)
			if model.CodeOf(te) == model.CodeBusy {
				return te
			}
			return model.Wrap(model.CodeInternal, err, "%s", te.Error())
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, time.Now().UnixMilli()); err != nil {
			if sqlState(err) == "42501" {
				return s.mayNotMigrate(err, from, len(all))
			}
			return s.translate(err, "migrate")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return s.translate(err, "migrate")
	}
	if s.onMigrate != nil {
		s.onMigrate(from, len(all))
	}
	return nil
}

// mayNotMigrate is the error of a migration the role may not run
// (SQLSTATE 42501): not the schema's owner — the README's worker role.
// It is the setup's, not an outage: retrying cannot help until the owner
// runs the migrations (or, for a new ledger, creates it).
func (s *Store) mayNotMigrate(err error, from, to int) error {
	role := s.cfg.ConnConfig.User
	if from == 0 {
		return model.Wrap(model.CodeUnsupported, err, "cannot create ledger %s: role %q may not create its tables (permission denied, SQLSTATE 42501): create it once as a role that may, such as the schema's owner (`retrysafe call` creates one), then grant this role what the README says", s.where, role)
	}
	return model.Wrap(model.CodeUnsupported, err, "ledger %s has schema version %d and needs migrating to %d, which role %q may not do (permission denied, SQLSTATE 42501: not the schema's owner): the schema's owner must run `retrysafe migrate` once with this ledger's URL, then grant this role any new tables as the README says; nothing was changed", s.where, from, to, role)
}

// Path is the ledger's URL without its password.
func (s *Store) Path() string { return s.where }

// Schema is the schema the ledger lives in.
func (s *Store) Schema() string { return s.schema }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.ro }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// ClockOffset is the database server's clock minus this host's, as last
// measured, and the host's time of that measurement (store.ClockReporter);
// not ok when the store's clock was pinned (Options.Now).
func (s *Store) ClockOffset() (offset time.Duration, measuredAt time.Time, ok bool) {
	if s.clock == nil {
		return 0, time.Time{}, false
	}
	return s.clock.report()
}

// Close closes the pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.stopNotify != nil {
			close(s.stopNotify)
			<-s.notifyDone
		}
		s.pool.Close()
	})
	return nil
}

// DropSchema removes a ledger's whole schema (the lab's and the tests'
// throw-away ledgers). It refuses the public schema.
func DropSchema(ctx context.Context, raw string) error {
	schema := SchemaOf(raw)
	if schema == "public" {
		return model.Errorf(model.CodeInvalid, "refusing to drop the public schema of %s", Redact(raw))
	}
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot connect to %s to drop schema %s", Redact(raw), schema)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+quoteIdent(schema)+` CASCADE`)
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "drop schema %s of %s: %v", schema, Redact(raw), codeOf(err))
	}
	return nil
}

// sqlState is err's SQLSTATE, or "" when PostgreSQL did not answer with one.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// codeOf names a PostgreSQL error by its SQLSTATE and class.
func codeOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity + " " + pe.Code + ": " + pe.Message
	}
	return err.Error()
}

// retryable reports the errors WithTx runs the transaction again for, by
// SQLSTATE: a serialization failure or deadlock (PostgreSQL aborted this
// transaction so another could go on), and a lock wait that hit
// lock_timeout.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "55P03":
			return true
		}
	}
	return false
}

// refusedByServer: connection errors that are the caller's setup, not an
// outage — a wrong password or role (28000, 28P01), a database that does
// not exist (3D000). Retrying changes nothing: unavailable, not busy.
func refusedByServer(code string) bool {
	return code == "28000" || code == "28P01" || code == "3D000"
}

// connectionLost reports a broken or refused connection, by type and by
// SQLSTATE class 08 and the shutdown codes — never by message text. A
// connection that ends in the middle of a reply (the server killed, the
// socket reset) surfaces as io.ErrUnexpectedEOF, io.EOF, a *net.OpError
// or ECONNRESET/EPIPE, with or without pgconn's wrapping.
func connectionLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "53300", pe.Code == "28000", pe.Code == "28P01", pe.Code == "3D000":
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && !pgconn.Timeout(err) {
		return true // a net.Error: the socket broke
	}
	return pgconn.SafeToRetry(err) || errors.Is(err, pgx.ErrTxClosed)
}

// Unplace makes the store's errors name the ledger without where it lives
// from now on ("the ledger" for its URL's host, user, database and schema):
// a gateway hands them to its clients, and where the ledger lives is the
// operator's to know. Path still says where it is. A caller's words in an
// error (a key, an argument) are never touched: the place is left out where
// the store would have put it, not replaced afterwards.
func (s *Store) Unplace() { s.unplaced.Store(true) }

// named is the ledger as an error names it: its URL (without password),
// or "the ledger" once unplaced.
func (s *Store) named() string {
	if s.unplaced.Load() {
		return "the ledger"
	}
	return s.where
}

// ledger is "ledger URL", or "the ledger" once unplaced.
func (s *Store) ledger() string {
	if s.unplaced.Load() {
		return "the ledger"
	}
	return "ledger " + s.where
}

// translate maps driver errors to model errors by SQLSTATE; model errors
// pass through unchanged.
func (s *Store) translate(err error, what string) error {
	if err == nil {
		return nil
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	prefix := s.named()
	if what != "" {
		prefix += ": " + what
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || pgconn.Timeout(err) {
		return model.Wrap(model.CodeBusy, err, "%s: the deadline passed before the transaction finished", s.ledger())
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case retryable(err):
			return model.Wrap(model.CodeBusy, err, "%s stayed locked by another writer until the deadline (SQLSTATE %s)", s.ledger(), pe.Code)
		case pe.Code == "57014": // query_canceled: our deadline, or an operator
			return model.Wrap(model.CodeBusy, err, "%s: the statement was cancelled before it finished (SQLSTATE %s)", s.ledger(), pe.Code)
		case strings.HasPrefix(pe.Code, "23"): // integrity constraint violation
			return model.Wrap(model.CodeConflict, err, "%s: constraint violated (SQLSTATE %s, %s)", prefix, pe.Code, pe.ConstraintName)
		case pe.Code == "22021" || pe.Code == "22P05": // bytes PostgreSQL text cannot hold (NUL)
			return model.Wrap(model.CodeInvalid, err, "%s: text PostgreSQL cannot store (SQLSTATE %s)", prefix, pe.Code)
		case pe.Code == "25006": // read_only_sql_transaction
			return model.Wrap(model.CodeInvalid, err, "%s is open read-only (SQLSTATE %s)", s.ledger(), pe.Code)
		case pe.Code == "42501": // insufficient_privilege
			return model.Wrap(model.CodeUnavailable, err, "%s: permission denied (SQLSTATE %s)", prefix, pe.Code)
		case pe.Code == "53100" || strings.HasPrefix(pe.Code, "58"): // disk full, I/O error
			// The machine, as SQLite's SQLITE_FULL/IOERR: internal, so a
			// runner retries later instead of reading it as a refusal.
			return model.Wrap(model.CodeInternal, err, "%s: server disk error (SQLSTATE %s): disk full or failing?", prefix, pe.Code)
		case connectionLost(err) && refusedByServer(pe.Code):
			// The server's words name what it refused (a database that
			// does not exist, a failed login) and hold no password.
			if s.unplaced.Load() { // they name the role or the database
				return model.Wrap(model.CodeUnavailable, err, "%s: PostgreSQL refused the connection (SQLSTATE %s)", prefix, pe.Code)
			}
			return model.Wrap(model.CodeUnavailable, err, "%s: PostgreSQL refused the connection: %s (SQLSTATE %s)", prefix, pe.Message, pe.Code)
		case connectionLost(err):
			// An outage (the server stopped, restarting, out of
			// connections, the socket broke): busy, so a runner, a cron
			// sweep or an agent retries later with the same key instead of
			// reading it as a refusal of the request.
			// The words say what happened, not what to do: wrapped in a
			// call's "unknown — stop" they must not read "retry later".
			return model.Wrap(model.CodeBusy, err, "%s: PostgreSQL is unavailable (SQLSTATE %s: an outage)", prefix, pe.Code)
		}
		return model.Wrap(model.CodeInternal, err, "%s: SQLSTATE %s: %s", prefix, pe.Code, pe.Message)
	}
	if connectionLost(err) {
		// The driver's words name the user, database, host and socket
		// (failed to connect to user=… database=…: /…/.s.PGSQL.5432):
		// they stay in the wrapped cause, for the operator's log, and out
		// of the message, which a gateway hands to its clients.
		return model.Wrap(model.CodeBusy, err, "%s: PostgreSQL is unavailable (an outage)", prefix)
	}
	return model.Wrap(model.CodeInternal, err, "%s: %v", prefix, err)
}

// The PostgreSQL store and its transactions keep the ledger contract.
var (
	_ store.Ledger = (*Store)(nil)
	_ store.Tx     = (*Tx)(nil)
)

// MoveSchema puts the ledger in schema from (of raw's database) in place
// of schema to, in one transaction: a ledger already at to is dropped — only
// if it is a retrysafe ledger — and from is renamed. A half-built ledger is
// thereby never seen under the name people open.
func MoveSchema(ctx context.Context, raw, from, to string) error {
	if to == "public" || from == "public" {
		return model.Errorf(model.CodeInvalid, "refusing to replace or move the public schema of %s", Redact(raw))
	}
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot connect to %s: %v", Redact(raw), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var tables int
		var ledger bool
		if err := tx.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM pg_tables WHERE schemaname = $1),
			EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'schema_migrations')`, to).Scan(&tables, &ledger); err != nil {
			return model.Wrap(model.CodeUnavailable, err, "%s: %v", Redact(raw), codeOf(err))
		}
		if tables > 0 && !ledger {
			return model.Errorf(model.CodeUnsupported, "schema %s of %s holds tables that are not a retrysafe ledger; refusing to replace it", to, Redact(raw))
		}
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+quoteIdent(to)+` CASCADE`); err != nil {
			return model.Wrap(model.CodeUnavailable, err, "%s: %v", Redact(raw), codeOf(err))
		}
		if _, err := tx.Exec(ctx, `ALTER SCHEMA `+quoteIdent(from)+` RENAME TO `+quoteIdent(to)); err != nil {
			return model.Wrap(model.CodeUnavailable, err, "%s: %v", Redact(raw), codeOf(err))
		}
		return nil
	})
}

// SchemasWithPrefix lists the schemas of raw's database whose names start
// with prefix (compared as text, not as a LIKE pattern), in name order: a
// command's own leftovers (the demo's building schemas) to find.
func SchemasWithPrefix(ctx context.Context, raw, prefix string) ([]string, error) {
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return nil, model.Wrap(model.CodeUnavailable, err, "cannot connect to %s: %v", Redact(raw), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE left(nspname, length($1)) = $1 ORDER BY nspname`, prefix)
	if err != nil {
		return nil, model.Wrap(model.CodeUnavailable, err, "%s: %v", Redact(raw), codeOf(err))
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, model.Wrap(model.CodeUnavailable, err, "%s: %v", Redact(raw), codeOf(err))
	}
	return names, nil
}
