// Package sandbox is a stand-in third party for retrysafe's external
// effects: deliveries kept in its own SQLite file. In process for unit
// tests (Open), and over HTTP for everything else (`retrysafe sandbox
// serve`, Server), reached through the generic HTTP provider.
package sandbox

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/retrysafe/retrysafe/provider"
	"io"
	"io/fs"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite" // the sandbox keeps its own SQLite file
	sqlite3 "modernc.org/sqlite/lib"
)

// Sandbox is a stand-in external system with its own SQLite file — not the
// ledger, deliberately: its effects (deliveries) never share a transaction
// with retrysafe's records, exactly like a real e-mail or payment provider.
// It speaks its own SQL for that reason; the ledger's SQL stays in store.
//
// One sandbox file serves two providers: "sandbox", which ignores downstream
// keys (every dispatch is a new delivery), and "sandbox-idem", which honours
// them (a repeated key returns the first delivery).
type Sandbox struct {
	db     *sql.DB
	path   string
	fileID string           // this file's own random id (FileID)
	now    func() time.Time // stamps deliveries; nil = time.Now
	// noVia: the file is older than deliveries saying how they came, and
	// this process may not add the column (viaColumn); every delivery in
	// it reads as via NULL.
	noVia bool
	// lookupDelay slows every lookup down (a slow provider, for tests and
	// measurements of what waits on it); nanoseconds.
	lookupDelay atomic.Int64
}

// SetLookupDelay makes every lookup wait d before it answers (or until its
// caller's deadline, which then gets no answer): a slow provider.
func (s *Sandbox) SetLookupDelay(d time.Duration) { s.lookupDelay.Store(int64(d)) }

// Open opens or creates the sandbox provider's file. An existing file that
// is not one — a ledger (a wrong --provider-db), another application's
// database, not SQLite at all — is refused before anything is written to
// it: opening it as a sandbox would add the sandbox's tables to it (and
// switch it to WAL), even for a command that only asks.
func Open(path string) (*Sandbox, error) { return open(path, false) }

// open is Open; unwritable opens the file read-only, as SQLite opens one
// this process may not write (what a test can make whoever runs it).
func open(path string, unwritable bool) (*Sandbox, error) {
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	q := url.Values{}
	if unwritable {
		q.Set("mode", "ro")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS deliveries (
		id INTEGER PRIMARY KEY,
		provider TEXT NOT NULL,
		downstream_key TEXT NOT NULL,
		tool TEXT NOT NULL,
		args TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		via TEXT CHECK (via IN ('serve', 'dispatch')))`); err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	via, err := viaColumn(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	if _, err := db.Exec(`CREATE INDEX IF NOT EXISTS deliveries_key ON deliveries (downstream_key)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	if err := tieTables(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	fileID, err := makeFileID(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox provider %s: %w", path, err)
	}
	return &Sandbox{db: db, path: path, fileID: fileID, noVia: !via}, nil
}

// FileID is this file's own identity: a random id (32 lowercase hex
// digits) made once, by the first Open of the file (an older file gets
// one on its first Open since), and kept. Its ties (Serves) are by ledger
// id, which a copy of a ledger keeps, so they cannot tell two copies of a
// ledger apart; a ledger records the FileID of the file it dispatched
// through (store.Tx.TieProviderFile), which can.
func (s *Sandbox) FileID() string { return s.fileID }

// makeFileID reads the file's id, making it first if it has none (one
// immediate transaction, so concurrent first opens agree); a file that
// has one costs a read, no write.
func makeFileID(db *sql.DB) (string, error) {
	var id string
	if db.QueryRow(`SELECT file_id FROM file_meta`).Scan(&id) == nil {
		return id, nil
	}
	tx, err := db.Begin()
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS file_meta (
			one INTEGER PRIMARY KEY CHECK (one = 1),
			file_id TEXT NOT NULL CHECK (length(file_id) = 32))`,
		`INSERT OR IGNORE INTO file_meta (one, file_id) VALUES (1, lower(hex(randomblob(16))))`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return "", err
		}
	}
	if err := tx.QueryRow(`SELECT file_id FROM file_meta`).Scan(&id); err != nil {
		return "", err
	}
	return id, tx.Commit()
}

// ErrNotASandboxFile is Open's refusal of an existing file that is not a
// sandbox provider's (see checkFile): nothing was written to it.
var ErrNotASandboxFile = errors.New("not a sandbox provider's file")

// checkFile refuses an existing file that is not a sandbox provider's:
// one whose header is not SQLite's, whose application_id is set (the
// sandbox sets none; a ledger does), or that holds tables but no
// deliveries. It reads the header and, as an immutable file, the table
// list: nothing is written, no lock taken.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	head := make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return nil // an empty file made for it
	}
	if n < 100 || string(head[:16]) != "SQLite format 3\x00" {
		return fmt.Errorf("not a SQLite database, so %w; nothing was written to it", ErrNotASandboxFile)
	}
	if app := binary.BigEndian.Uint32(head[68:72]); app != 0 {
		return fmt.Errorf("%w: a retrysafe ledger or another application's database (application_id %#x); nothing was written to it", ErrNotASandboxFile, app)
	}
	tables, deliveries, err := countTables(path, "mode=ro&immutable=1")
	if err != nil {
		// A kill -9 during a checkpoint leaves the file alone unreadable
		// ("malformed": its header already counts pages not yet written),
		// whole only with its -wal, which SQLite replays on open. Such a
		// file is read again with its log (read-only; SQLite may make the
		// -shm index beside the -wal, never changes the file).
		if st, serr := os.Stat(path + "-wal"); serr != nil || st.Size() == 0 {
			return err
		}
		if tables, deliveries, err = countTables(path, "mode=ro"); err != nil {
			return err
		}
	}
	if tables > 0 && deliveries == 0 {
		return fmt.Errorf("%w: it holds other tables and no deliveries; nothing was written to it", ErrNotASandboxFile)
	}
	return nil
}

// countTables counts the file's tables and whether one is deliveries,
// opened with params.
func countTables(path, params string) (tables, deliveries int, err error) {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE name = 'deliveries') FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &deliveries)
	return tables, deliveries, err
}

// viaColumn gives a file made before deliveries said how they came its
// column via: "serve" for a delivery taken through `sandbox serve`
// (Server, which is not told the tool: see LookupQuery), "dispatch" for
// one made in process. The deliveries it held stay NULL — unknown, as
// does one a build before this one makes in the file since (it names the
// columns it writes): a NULL row whose tool is its provider's name may
// have come through `sandbox serve`, or be a delivery of a tool named
// like its provider, and cannot be told apart. One immediate transaction
// (DDL included): concurrent openers add the column once, the others see
// it; a file that has it costs a read, no write. A file this process may
// not write keeps its rows as they are, all of them NULL (has false): it
// still answers lookups, as it did for the builds before (nothing can be
// delivered into it anyway).
func viaColumn(db *sql.DB) (has bool, err error) {
	const q = `SELECT EXISTS (SELECT 1 FROM pragma_table_info('deliveries') WHERE name = 'via')`
	if err := db.QueryRow(q).Scan(&has); err != nil || has {
		return has, err
	}
	err = func() error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := tx.QueryRow(q).Scan(&has); err != nil || has {
			return err
		}
		if _, err := tx.Exec(`ALTER TABLE deliveries ADD COLUMN via TEXT CHECK (via IN ('serve', 'dispatch'))`); err != nil {
			return err
		}
		has = true
		return tx.Commit()
	}()
	if readOnly(err) {
		return false, nil
	}
	return has && err == nil, err
}

// readOnly reports SQLite's "attempt to write a readonly database", by
// result code (its extended codes too: a read-only directory, a file
// that cannot be locked for writing).
func readOnly(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY
}

// tieTables makes the table of the ledgers this file serves, by their ids
// (store.Reader.LedgerID) and provider names: see Tie. A file made before
// ties named their providers kept ledger ids alone (table ledgers); such
// a tie stands for the providers the file holds deliveries of, and no
// other — a file made for one provider name holds nothing of another's.
// One immediate transaction: a concurrent opener sees the table with its
// rows carried over, or no table.
func tieTables(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_providers')`).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return tx.Commit()
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ledgers (
			ledger_id TEXT PRIMARY KEY,
			since INTEGER NOT NULL)`,
		`CREATE TABLE ledger_providers (
			ledger_id TEXT NOT NULL,
			provider TEXT NOT NULL,
			since INTEGER NOT NULL,
			PRIMARY KEY (ledger_id, provider))`,
		`INSERT INTO ledger_providers (ledger_id, provider, since)
			SELECT l.ledger_id, d.provider, l.since FROM ledgers l, (SELECT DISTINCT provider FROM deliveries) d`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SetClock sets the clock that stamps new deliveries (default time.Now):
// the demo plays its traffic on an earlier clock, and the provider's
// records must agree with the ledger's. Set it before dispatching.
func (s *Sandbox) SetClock(now func() time.Time) { s.now = now }

// clockKey carries a delivery's stamp from the server (TimeHeader).
type clockKey struct{}

func withClock(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, clockKey{}, at)
}

// stamp is when a delivery made under ctx is recorded: the server's
// TimeHeader when it gave one, else the sandbox's clock.
func (s *Sandbox) stamp(ctx context.Context) time.Time {
	if at, ok := ctx.Value(clockKey{}).(time.Time); ok {
		return at
	}
	return s.clock()
}

func (s *Sandbox) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// Close closes the sandbox file.
func (s *Sandbox) Close() error { return s.db.Close() }

// Path is the sandbox's file.
func (s *Sandbox) Path() string { return s.path }

// Providers returns the sandbox's two usual providers, by name: "sandbox"
// (ignores downstream keys) and "sandbox-idem" (honours them).
func (s *Sandbox) Providers() provider.Registry {
	return provider.Registry{
		"sandbox":      s.Provider("sandbox", false),
		"sandbox-idem": s.Provider("sandbox-idem", true),
	}
}

// Provider returns a provider over this sandbox file under name; its
// deliveries are kept apart from other names' in the same file.
func (s *Sandbox) Provider(name string, honoursKeys bool) provider.Provider {
	return &sandboxProvider{s: s, name: name, honours: honoursKeys}
}

// servedProvider is the provider `sandbox serve` (Server) delivers
// through: its deliveries are kept as taken over HTTP, tool unknown.
func (s *Sandbox) servedProvider(name string, honoursKeys bool) provider.Provider {
	return &sandboxProvider{s: s, name: name, honours: honoursKeys, served: true}
}

// KeepsKeys says the sandbox never expires a downstream key: every
// delivery stays in its file under its key (provider.KeyKeeper).
func (p *sandboxProvider) KeepsKeys() bool { return true }

// Deliveries counts the effects the sandbox holds, for one downstream key
// or all ("").
func (s *Sandbox) Deliveries(ctx context.Context, downstreamKey string) (int, error) {
	var n int
	var err error
	if downstreamKey == "" {
		err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries`).Scan(&n)
	} else {
		err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries WHERE downstream_key = ?`, downstreamKey).Scan(&n)
	}
	return n, err
}

// Mark is a point in this file's history: the sequence number of a
// delivery (its id, sbx_N; 0 = before any) and a check of what that
// delivery is (provider, downstream key, tool, arguments, time). A ledger
// keeps the newest Mark it saw the file hold (store.FileMark); a file
// that no longer Holds it went back in time — restored from an older
// backup (the delivery is gone, or its number was given to another one
// since) or replaced by a copy that went another way — so its "has
// nothing" says nothing about what the ledger sent through it.
type Mark struct {
	Seq   int64
	Check string
}

// markCheck is a delivery's check: 16 bytes of SHA-256 over its columns,
// so another delivery under the same number (a restored file that went on
// delivering) does not pass for it. Not over via (viaColumn): a build
// before it checks the same delivery alike, so a ledger whose mark one
// build recorded and another checks does not take the file for another.
func markCheck(provider, key, tool, args string, at int64) string {
	h := sha256.New()
	for _, f := range []string{provider, key, tool, args, strconv.FormatInt(at, 10)} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Mark is the newest delivery this file holds (zero for a file with none).
func (s *Sandbox) Mark(ctx context.Context) (Mark, error) {
	return s.markAt(ctx, `SELECT id, provider, downstream_key, tool, args, created_at FROM deliveries ORDER BY id DESC LIMIT 1`)
}

// Holds reports whether this file still holds the delivery m names, as it
// was: a file restored from an older backup does not. The zero Mark is
// held by every file.
func (s *Sandbox) Holds(ctx context.Context, m Mark) (bool, error) {
	if m.Seq == 0 {
		return true, nil
	}
	got, err := s.markAt(ctx, `SELECT id, provider, downstream_key, tool, args, created_at FROM deliveries WHERE id = ?`, m.Seq)
	return err == nil && got == m, err
}

func (s *Sandbox) markAt(ctx context.Context, q string, args ...any) (Mark, error) {
	var m Mark
	var prov, key, tool, a string
	var at int64
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&m.Seq, &prov, &key, &tool, &a, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, err
	}
	m.Check = markCheck(prov, key, tool, a, at)
	return m, nil
}

// ErrNotThisLedgers is Tie's refusal: the file has never served the
// ledger for a provider, and the ledger has already sent operations to
// that provider — through another file.
var ErrNotThisLedgers = errors.New("this sandbox file has never served this ledger")

// Serves reports whether this file was tied to the ledger ledgerID for
// the provider named provider (Tie): whether it is where that ledger's
// deliveries through that provider are. One that is not — another
// ledger's file, an empty one made elsewhere, or one tied for other
// provider names (another config's) — holds none of them, so its "has
// nothing" proves nothing about them.
func (s *Sandbox) Serves(ctx context.Context, ledgerID, provider string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM ledger_providers WHERE ledger_id = ? AND provider = ?)`, ledgerID, provider).Scan(&ok)
	return ok, err
}

// Ledger is what Tie asks of the ledger it ties a file to (a
// store.Reader answers both).
type Ledger interface {
	LedgerID(ctx context.Context) (string, error)
	SentTo(ctx context.Context, providers ...string) (bool, error)
}

// Tie ties this file to ledger l, for each of the providers (the names
// this file stands for), before anything of l's is sent to it: from then
// on the file is where l's deliveries through them are (Serves), and its
// lookups are evidence about l's operations sent to them. A provider the
// file already serves for l is left as it is (one read, no write). One it
// does not is tied only if l has sent nothing yet to that provider: a
// ledger that has sent keeps those deliveries in another file, and tying
// this one would make its "has nothing" look like evidence about them —
// Tie refuses then (ErrNotThisLedgers) and writes nothing. One file may
// serve several ledgers.
func (s *Sandbox) Tie(ctx context.Context, l Ledger, providers ...string) error {
	id, err := l.LedgerID(ctx)
	if err != nil {
		return err
	}
	var untied []string
	for _, p := range providers {
		ok, err := s.Serves(ctx, id, p)
		if err != nil {
			return err
		}
		if !ok {
			untied = append(untied, p)
		}
	}
	if len(untied) == 0 {
		return nil
	}
	toTie := untied[:0:0]
	for _, p := range untied {
		sent, err := l.SentTo(ctx, p)
		if err != nil {
			return err
		}
		if sent {
			// A concurrent first call of the same ledger may have tied
			// this file for p and sent between the two reads. Every
			// sender ties before it sends, so the ties read after the
			// sends are conclusive.
			ok, err := s.Serves(ctx, id, p)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			return fmt.Errorf("%w for %s (ledger id %s), and the ledger has operations sent to %s", ErrNotThisLedgers, p, id, p)
		}
		toTie = append(toTie, p)
	}
	if len(toTie) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	since := s.clock().UnixMilli()
	for _, p := range toTie {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO ledger_providers (ledger_id, provider, since) VALUES (?, ?, ?)`, id, p, since); err != nil {
			return err
		}
	}
	return tx.Commit()
}

type sandboxProvider struct {
	s       *Sandbox
	name    string
	honours bool
	// served: the provider `sandbox serve` (Server) delivers through,
	// whose deliveries are kept as such (via "serve"): it is not told
	// their tool.
	served bool
}

func (p *sandboxProvider) Name() string      { return p.name }
func (p *sandboxProvider) HonoursKeys() bool { return p.honours }

// Identity is provider.Identifier: a sandbox provider's dispatches and
// lookups go to its file, under its name (the ledger keeps which file it
// sent through apart: store.Tx.TieProviderFile).
func (p *sandboxProvider) Identity() provider.Identity { return Identity() }

// Identity is where a sandbox provider's requests go: the sandbox file
// tied to the ledger. A provider that reaches that same file another way
// (the demo's, over HTTP through `sandbox serve`) sends them there too.
func Identity() provider.Identity {
	t := provider.Target{Kind: "sandbox"}
	return provider.Identity{Dispatch: t, Lookup: &t}
}

func ref(id int64) string { return "sbx_" + strconv.FormatInt(id, 10) }

func (p *sandboxProvider) Dispatch(ctx context.Context, req provider.Request) (provider.Response, error) {
	if req.DownstreamKey == "" {
		return provider.Response{Status: provider.Rejected, Detail: "missing downstream key"}, nil
	}
	if d := req.Faults.Delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return provider.Response{}, provider.Ambiguous("no reply within the deadline (%v)", ctx.Err())
		case <-t.C:
		}
	}
	// A provider that honours downstream keys answers a repeated key with
	// the first result, whatever this request would have met: it cannot
	// promise "nothing was applied" for a key it already applied.
	if p.honours && (req.Faults.FailBefore || req.Faults.Reject) {
		var id int64
		err := p.s.db.QueryRowContext(ctx, `SELECT id FROM deliveries WHERE provider = ? AND downstream_key = ? ORDER BY id LIMIT 1`,
			p.name, req.DownstreamKey).Scan(&id)
		switch {
		case err == nil && req.Faults.LoseReply:
			return provider.Response{}, provider.Ambiguous("reply lost: connection reset after the request was sent")
		case err == nil:
			return provider.Response{Status: provider.Applied, Ref: ref(id)}, nil
		case !errors.Is(err, sql.ErrNoRows):
			return provider.Response{}, provider.Ambiguous("sandbox: %v", err)
		}
	}
	if req.Faults.FailBefore {
		return provider.Response{Status: provider.NotApplied, Detail: "503 not accepted: nothing was applied"}, nil
	}
	if req.Faults.Reject {
		return provider.Response{Status: provider.Rejected, Detail: "422 recipient refused"}, nil
	}
	var id int64
	err := func() error {
		tx, err := p.s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if p.honours {
			err := tx.QueryRowContext(ctx, `SELECT id FROM deliveries WHERE provider = ? AND downstream_key = ? ORDER BY id LIMIT 1`,
				p.name, req.DownstreamKey).Scan(&id)
			if err == nil {
				return tx.Commit()
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		via := "dispatch"
		if p.served {
			via = "serve"
		}
		insert := `INSERT INTO deliveries (provider, downstream_key, tool, args, created_at, via) VALUES (?,?,?,?,?,?)`
		args := []any{p.name, req.DownstreamKey, req.Tool, string(req.Args), p.s.stamp(ctx).UnixMilli(), via}
		if p.s.noVia {
			// Opened read-only (viaColumn): SQLite refuses the write as it
			// refuses any, not for a column it does not know.
			insert = `INSERT INTO deliveries (provider, downstream_key, tool, args, created_at) VALUES (?,?,?,?,?)`
			args = args[:5]
		}
		res, err := tx.ExecContext(ctx, insert, args...)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return tx.Commit()
	}()
	if err != nil {
		return provider.Response{}, provider.Ambiguous("sandbox: %v", err)
	}
	if req.Faults.LoseReply {
		return provider.Response{}, provider.Ambiguous("reply lost: connection reset after the request was sent")
	}
	return provider.Response{Status: provider.Applied, Ref: ref(id)}, nil
}

func (p *sandboxProvider) Lookup(ctx context.Context, downstreamKey string) (provider.Evidence, error) {
	ev := provider.Evidence{Provider: p.name, DownstreamKey: downstreamKey}
	if err := p.lookupWait(ctx); err != nil {
		return ev, err
	}
	return p.lookupKey(ctx, downstreamKey)
}

// lookupWait is the lookup delay (SetLookupDelay), cut short by ctx.
func (p *sandboxProvider) lookupWait(ctx context.Context) error {
	if d := time.Duration(p.s.lookupDelay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: no answer: %w", p.name, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// lookupKey is a lookup by downstream key alone: whatever the file holds
// under it, whichever request it was.
func (p *sandboxProvider) lookupKey(ctx context.Context, downstreamKey string) (provider.Evidence, error) {
	ev := provider.Evidence{Provider: p.name, DownstreamKey: downstreamKey}
	var first, n int64
	var at sql.NullInt64
	err := p.s.db.QueryRowContext(ctx, `SELECT COALESCE(MIN(id), 0), COUNT(*), MIN(created_at) FROM deliveries
		WHERE provider = ? AND downstream_key = ?`, p.name, downstreamKey).Scan(&first, &n, &at)
	if err != nil {
		return ev, err
	}
	ev.Effects = int(n)
	if n == 0 {
		ev.Detail = fmt.Sprintf("%s holds no delivery under %s", p.name, downstreamKey)
		return ev, nil
	}
	ev.Found, ev.Ref, ev.Status = true, ref(first), "delivered"
	if at.Valid {
		ev.At = time.UnixMilli(at.Int64).UTC()
	}
	under := "1 delivery"
	if n != 1 {
		under = fmt.Sprintf("%d deliveries", n)
	}
	ev.Detail = fmt.Sprintf("%s delivered %s at %s (%s under this key)", p.name, ev.Ref, ev.At.Format(time.RFC3339), under)
	return ev, nil
}

// LookupQuery is provider.QueryLooker: the sandbox keeps the tool and
// arguments of every delivery it is given in process (Dispatch), so a
// lookup that names the request it asks about (q.Tool, q.Args) is
// answered about that request. One made over HTTP (`sandbox serve`, kept
// as such: via "serve") cannot be compared and is taken as this request,
// as a lookup by key alone takes it; so is one from before deliveries
// said how they came (via NULL) whose tool is the provider's name, which
// may have come over HTTP (viaColumn). A delivery under
// the key of another tool or with other arguments (JSON compared as
// values) is not this request's: with none of this request's, the answer
// is Evidence.Other (what differs), never "has it". A query without a
// tool is a lookup by key alone (Lookup).
func (p *sandboxProvider) LookupQuery(ctx context.Context, q provider.Query) (provider.Evidence, error) {
	ev := provider.Evidence{Provider: p.name, DownstreamKey: q.DownstreamKey}
	if err := p.lookupWait(ctx); err != nil {
		return ev, err
	}
	if q.Tool == "" {
		return p.lookupKey(ctx, q.DownstreamKey)
	}
	via := "via"
	if p.s.noVia {
		via = "NULL"
	}
	rows, err := p.s.db.QueryContext(ctx, `SELECT id, tool, args, created_at, `+via+` FROM deliveries
		WHERE provider = ? AND downstream_key = ? ORDER BY id`, p.name, q.DownstreamKey)
	if err != nil {
		return ev, err
	}
	defer rows.Close()
	type delivery struct {
		id, at     int64
		tool, args string
		via        sql.NullString
	}
	var all []delivery
	for rows.Next() {
		var d delivery
		if err := rows.Scan(&d.id, &d.tool, &d.args, &d.at, &d.via); err != nil {
			return ev, err
		}
		all = append(all, d)
	}
	if err := rows.Err(); err != nil {
		return ev, err
	}
	ev.Effects = len(all)
	if len(all) == 0 {
		ev.Detail = fmt.Sprintf("%s holds no delivery under %s", p.name, q.DownstreamKey)
		return ev, nil
	}
	under := "1 delivery"
	if len(all) != 1 {
		under = fmt.Sprintf("%d deliveries", len(all))
	}
	for _, d := range all {
		// A delivery made through `sandbox serve` (Server) is recorded
		// under the provider's own name as its tool and the HTTP body as
		// its arguments: the server is not told the tool, and the body is
		// the config's rendering of the arguments. Its request cannot be
		// compared, so it counts as this one, as by key alone. It says
		// so (via "serve"); one from before deliveries did (via NULL)
		// under the provider's name may be one, or a delivery of a tool
		// named like its provider: it counts as this one, as before. A
		// delivery made in process is compared, whatever its tool.
		served := d.via.String == "serve" || (!d.via.Valid && d.tool == p.name)
		if served || (d.tool == q.Tool && sameArgs(d.args, q.Args)) {
			ev.Found, ev.Ref, ev.Status, ev.At = true, ref(d.id), "delivered", time.UnixMilli(d.at).UTC()
			ev.Detail = fmt.Sprintf("%s delivered %s at %s (%s under this key)", p.name, ev.Ref, ev.At.Format(time.RFC3339), under)
			return ev, nil
		}
	}
	d := all[0]
	ev.Ref, ev.Status, ev.At = ref(d.id), "delivered", time.UnixMilli(d.at).UTC()
	if d.tool != q.Tool {
		ev.Other = fmt.Sprintf("%s is a %s request, this operation a %s one", ev.Ref, d.tool, q.Tool)
	} else {
		ev.Other = fmt.Sprintf("%s is a %s request with other arguments than this operation's", ev.Ref, d.tool)
	}
	ev.Detail = fmt.Sprintf("%s delivered %s at %s (%s under this key, none of them this request: %s)", p.name, ev.Ref, ev.At.Format(time.RFC3339), under, ev.Other)
	return ev, nil
}

// sameArgs reports whether a delivery's arguments, as kept, are the
// request's: the same bytes, or the same JSON value.
func sameArgs(kept string, args json.RawMessage) bool {
	if kept == string(args) {
		return true
	}
	var a, b any
	if json.Unmarshal([]byte(kept), &a) != nil || json.Unmarshal(args, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}
