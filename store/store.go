// Package store is the ledger's contract: the interfaces the rules
// (reconcile), the console (ui), the lab and the gateway depend on, and the
// query types they pass. It holds no driver code. Each driver — SQLite in
// store/sqlite, PostgreSQL in store/postgres — implements it and passes
// the one conformance suite in store/storetest.
//
// Every driver keeps the same promises: one write transaction at a time per
// operation key, compare-and-set state changes (UpdateOperation fails with
// model.CodeStale when the row moved on), driver errors translated into
// model errors by the driver's own codes (never by message text), and a
// read side that never blocks the writer.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// Ledger is an open ledger: the write side the rules use and the read side
// the console uses.
type Ledger interface {
	Reader
	Tokens

	// WithTx runs fn in one durable write transaction and commits when fn
	// returns nil. A busy ledger is waited out until ctx's deadline, so fn
	// may run more than once and must have no effects outside the
	// transaction.
	WithTx(ctx context.Context, fn func(Tx) error) error
	// WithAttemptTx is WithTx for transactions that usually only append an
	// attempt row (replays, conflicts, refusals): a driver may commit those
	// more cheaply, but must make fn's work durable the moment it writes
	// anything else (Tx methods return ErrNeedsDurable to a relaxed
	// transaction that tries, and the driver reruns fn durably).
	WithAttemptTx(ctx context.Context, fn func(Tx) error) error

	// Now is the ledger's clock (pinned by tests, the lab and the demo).
	Now() time.Time
	// ReadOnly reports whether every write will be refused.
	ReadOnly() bool
	// Path says where the ledger lives, for people: a file path, or a URL
	// without its password.
	Path() string
	Close() error

	// RequestHistories reads many operations' requests at once (a bulk
	// decision's rows, a bulk review's warning): each of keys' operation
	// as stored (Detail's, without its findings and attempt count) and
	// those of its attempts whose outcome is one of outcomes, in order —
	// what the grace after its latest request is read from — in one
	// statement per chunk of keys (never one per operation), in one read
	// transaction, so they agree. A key with no operation (another
	// tenant's included) has no entry; no keys read nothing.
	RequestHistories(ctx context.Context, keys []OpKey, outcomes []model.Outcome) (map[OpKey]RequestHistory, error)
}

// FileMark is a point in a provider file's history as a ledger saw it:
// the sequence number of the newest delivery the file held (Seq, 0 =
// none seen) and a check of that delivery's content (Check). A file that
// no longer holds that delivery went back in time — restored from an
// older backup, or replaced by a copy that went another way — and its
// "has nothing" is no evidence about what the ledger sent through it.
type FileMark struct {
	Seq   int64
	Check string
}

// Reader is the console's side of the ledger: queries that never write.
type Reader interface {
	// List returns one page of operations, newest first, with attempt
	// counts and latest findings, reading no more rows than the page
	// needs, in a fixed number of statements (never one per row).
	List(ctx context.Context, q ListQuery) ([]model.Operation, error)
	// Counts is the number of operations by state, in constant time.
	// tenant "" counts every tenant.
	Counts(ctx context.Context, tenant string) (Counts, error)
	// Tenants lists the tenants that have operations, sorted.
	Tenants(ctx context.Context) ([]string, error)
	// SentTo reports whether any operation (of any tenant, in any state)
	// names one of providers: a ledger that has sent to a provider has
	// history that provider's store must hold.
	SentTo(ctx context.Context, providers ...string) (bool, error)
	// LedgerID is the ledger's identity: a random id made once, with the
	// ledger (or by the migration that gave an older ledger one), never
	// changed, kept by a copy. A provider's store records the ids of the
	// ledgers it served, so a provider file that never served this one is
	// not taken for this ledger's (its "has nothing" proves nothing).
	LedgerID(ctx context.Context) (string, error)
	// ProviderFile is the id of the provider file (a sandbox file's own
	// random id) this ledger recorded for the provider named provider when
	// it first dispatched through it (Tx.TieProviderFile), or "" if none
	// is recorded. A copy of the ledger keeps its LedgerID, so a provider
	// file's record of the ledgers it served cannot tell the copies apart;
	// the ledger's record of the file it used can.
	ProviderFile(ctx context.Context, provider string) (string, error)
	// ProviderFileMark is the provider file recorded for provider (as
	// ProviderFile) and how far this ledger has seen it go
	// (Tx.MarkProviderFile), in one read: "" and zero when none is
	// recorded.
	ProviderFileMark(ctx context.Context, provider string) (string, FileMark, error)
	// Get reads one operation of a tenant, with its latest finding (as
	// List has it); another tenant's key is not found, exactly as a key
	// that never existed.
	Get(ctx context.Context, tenant, key string) (*model.Operation, error)
	// Detail reads an operation with its attempts, decisions and links in
	// one read transaction, so the parts agree.
	Detail(ctx context.Context, tenant, key string) (*model.Detail, error)
	DetailByID(ctx context.Context, id int64) (*model.Detail, error)
	// Tombstone is tenant's live tombstone under key (a key a sweep
	// compacted, refused as "expired" until its tombstone is forgotten),
	// read on the read side, so a read-only ledger answers it too;
	// model.CodeNotFound if there is none (another tenant's included).
	Tombstone(ctx context.Context, tenant, key string) (*model.Tombstone, error)
	// Decisions lists operator decisions, newest first, with the operation
	// each was about: the audit log.
	Decisions(ctx context.Context, q DecisionQuery) ([]model.AuditEntry, error)
	// EffectCount counts the rows of a local effect table, in one tenant
	// or all (""); in the generic local_effects table, tool's rows only.
	EffectCount(ctx context.Context, table model.LocalTable, tool, tenant string) (int, error)
	// Audit checks the ledger's invariants and returns one line per
	// violation.
	Audit(ctx context.Context) ([]string, error)
	// Snapshot digests every row of every table except skip, in one read
	// transaction: equal digests mean nothing was written in between. For
	// tests and the lab on small ledgers.
	Snapshot(ctx context.Context, skip ...string) (string, error)
	// Watch starts noticing commits by other connections and processes.
	Watch(ctx context.Context) (Watcher, error)
	// StateAges counts each tenant's operations in state and says since
	// when the oldest of them has not changed (the gateway's gauges of
	// operations waiting for a person), sorted by tenant.
	StateAges(ctx context.Context, state model.State) ([]TenantStateAge, error)
}

// TenantStateAge is one tenant's operations in one state.
type TenantStateAge struct {
	Tenant string
	Count  int
	// Oldest is the earliest last change among them.
	Oldest time.Time
}

// Tokens are the gateway's bearer tokens: each maps to one tenant, and the
// ledger keeps only a token's hash (model.HashToken).
type Tokens interface {
	// CreateToken stores t (its hash, never its secret) and sets t.ID.
	CreateToken(ctx context.Context, t *model.Token) error
	// TokenByHash finds the token whose secret hashes to hash, revoked or
	// not; model.CodeNotFound if none.
	TokenByHash(ctx context.Context, hash string) (*model.Token, error)
	// ListTokens lists tokens oldest first; tenant "" lists every tenant's.
	ListTokens(ctx context.Context, tenant string) ([]model.Token, error)
	// RevokeToken revokes token id for good; revoking a revoked token is
	// model.CodeIllegal, an unknown id model.CodeNotFound.
	RevokeToken(ctx context.Context, id int64) (*model.Token, error)
}

// Peeker is an optional read-side fast path a driver may offer (SQLite
// does; a driver without it loses only speed). reconcile asks it first and
// sends a key never seen straight to one durable transaction — a new
// operation — instead of trying the cheap attempt-only one, which would stop
// at its first write and run again durably. The answer is only a hint: the
// transaction reads again and decides.
type Peeker interface {
	// Seen reports whether tenant has an operation or a tombstone under
	// key, read without waiting for the writer.
	Seen(ctx context.Context, tenant, key string) (bool, error)
}

// EffectHinter is an optional hint a driver's transaction may take
// (PostgreSQL's does; one without it loses only speed). A local call tells
// its transaction, before it reads the key, which table its effect would
// go into: a driver that reads ahead can then draw the effect row's id
// with that read when the key turns out new, so that inserting the effect
// waits for no answer and travels with the call's last writes. It changes
// nothing the transaction reads or writes.
type EffectHinter interface {
	ExpectLocalEffect(table model.LocalTable)
}

// Recaller is an optional, read-free stand-in for Peeker a driver may offer
// a long-running process (SQLite does, except to a store opened
// ReadOnWriter): whether this process remembers the key in use — an
// operation it created or read. A key it does not remember is taken for a
// new one, with no read: its call goes straight to one durable transaction,
// which reads the key again under the write lock and decides, so a replay
// of a key made elsewhere (or forgotten) is still answered from the stored
// receipt, only committed durably instead of cheaply. ok false: the driver
// cannot tell here; ask Peeker.
type Recaller interface {
	Recalls(tenant, key string) (used, ok bool)
}

// Replayer is an optional fast path for replays a driver may offer (SQLite
// does; a driver without it loses only speed). A replay of a final
// operation is a read plus one attempt row: reconcile reads the operation
// here, off the writer's path (maybe from a cache), classifies it, and
// records the attempt only if the operation is still exactly as read —
// otherwise it takes the full path, which reads again under the write lock.
// A stale read can therefore never be answered.
type Replayer interface {
	// ReplayPeek reads tenant's operation under key without waiting for
	// the writer; model.CodeNotFound if there is none. It may be stale (a
	// cached read): AppendReplay checks. The operation's byte slices are
	// shared and must not be modified.
	ReplayPeek(ctx context.Context, tenant, key string) (*model.Operation, error)
	// AppendReplay appends a (an attempt of op) with WithAttemptTx's
	// durability, if and only if op's row still has the id, key,
	// fingerprint, state, version, receipt and expiry of op; a.ID and
	// a.StartedAt (the transaction's time) are set. false, nothing
	// written, if the row moved on or is gone. Callers that arrive
	// together share one transaction.
	AppendReplay(ctx context.Context, op *model.Operation, a *model.Attempt) (bool, error)
}

// LocalCreator is an optional fast path a driver's Tx may offer for a new
// local operation (SQLite's does; a driver without it loses only speed).
// reconcile uses it only when Peeker said the key was never seen; anything
// else (an operation or a live tombstone under the key after all) returns
// false with nothing written, and the call takes the full path in the same
// transaction.
type LocalCreator interface {
	// CreateLocal inserts op (a new operation: ID, Version and times are
	// set as InsertOperation sets them) and its effect e (e.OperationID is
	// op's new id) if, and only if, op.Tenant has neither an operation nor
	// a live tombstone under op.Key. The receipt stored with op is
	// receipt(result), result being what InsertLocalEffect would return for
	// e; op.Receipt is set to it. false, nothing written, otherwise.
	CreateLocal(op *model.Operation, e LocalEffect, receipt func(result json.RawMessage) ([]byte, error)) (bool, error)
}

// WriteRefuser is an optional report of a ledger that refuses every write
// from now on until the process restarts (SQLite: its files were removed
// or replaced under it): nil while it writes.
type WriteRefuser interface {
	WritesRefused() error
}

// FrozenReporter is an optional report of a read-only ledger read as a
// snapshot of its file as it was when opened (SQLite: a file in a directory
// this process may not write is read as immutable — no lock, no shared
// index, and no notice of anyone's later commits). Its Watcher's Changed
// never reports a change: it reports an error once the file changed on
// disk, and only reopening the ledger shows what is there now. Drivers
// that always read the current ledger (PostgreSQL) need not implement it.
type FrozenReporter interface {
	Frozen() bool
}

// ClockReporter is an optional report of how far this host's clock is
// from the ledger's, for people: a driver whose ledger clock is a database
// server's (PostgreSQL) measures the difference and corrects it, so
// leases and graces never depend on it, but a host clock that is off
// still misdates this host's logs and what it stamps by its own clock.
// A driver whose ledger clock is this host's (SQLite) does not implement
// it: there is nothing to be off from.
type ClockReporter interface {
	// ClockOffset is the ledger's clock minus this host's (positive: this
	// host's clock is behind), as last measured, and the host's time of
	// that measurement; ok is false when nothing is measured (a clock
	// pinned by Options.Now is used as it is).
	ClockOffset() (offset time.Duration, measuredAt time.Time, ok bool)
}

// Watcher notices commits by other connections cheaply (SQLite's
// data_version, PostgreSQL's LISTEN/NOTIFY).
type Watcher interface {
	// Changed reports whether anything was committed since the last call.
	Changed(ctx context.Context) (bool, error)
	Close() error
}

// Tx is one write transaction. Its methods speak model types only.
type Tx interface {
	// Now is the time fixed for this transaction: every row it writes
	// agrees.
	Now() time.Time

	GetOperation(tenant, key string) (*model.Operation, error)
	GetOperationByID(id int64) (*model.Operation, error)
	// InsertOperation stores a new operation and sets op.ID.
	InsertOperation(op *model.Operation) error
	// UpdateOperation is a compare-and-set: it writes op only while the row
	// is still in fromState at fromVersion, and bumps op.Version.
	UpdateOperation(op *model.Operation, fromState model.State, fromVersion int64) error
	// SetReceipt replaces an operation's stored receipt.
	SetReceipt(opID int64, receipt []byte) error
	// SupersedingKey is the key an operator authorized in place of opID.
	SupersedingKey(opID int64) (string, error)
	// LedgerID is Reader.LedgerID read inside this transaction (a driver
	// reads it once and keeps it): the downstream keys of the operations
	// this transaction creates are derived from it.
	LedgerID() (string, error)
	// TieProviderFile records fileID (32 lowercase hex digits) as the
	// provider file of the provider named provider, a compare-and-set:
	// only while the one recorded is replacing ("" = none is recorded).
	// It returns the one recorded after: fileID, or another that was
	// recorded meanwhile.
	TieProviderFile(provider, fileID, replacing string) (string, error)
	// MarkProviderFile raises the mark recorded for provider to m while
	// the file recorded for it is fileID and its mark is lower (a mark
	// only moves forward; a tie to another file resets it), and returns
	// the mark recorded after — zero when fileID is not the one recorded.
	MarkProviderFile(provider, fileID string, m FileMark) (FileMark, error)

	// InsertAttempt appends an attempt; a lookup attempt carries its
	// finding (a.Finding, a.Detail) and changes nothing else.
	InsertAttempt(a *model.Attempt) error
	// LatestFinding is the operation's latest recorded provider finding
	// (model.LatestFinding's rule), or nil if none.
	LatestFinding(opID int64) (*model.Finding, error)
	// LatestConclusiveFinding is the recorded finding that binds a
	// decision (model.BindingFinding's rule), or nil: the latest that says
	// something (has it, has nothing) — a later "cannot tell" is no
	// evidence and leaves it standing — or a "has another request" no
	// later lookup said more than: it outranks every lookup before it.
	// What a decision against a finding is checked against, and what
	// refuses "mark applied" and "not applied" on another request.
	LatestConclusiveFinding(opID int64) (*model.Finding, error)
	UpdateAttempt(a *model.Attempt) error
	InsertDecision(d *model.Decision) error
	// InsertLocalEffect writes a local tool's effect row in the table the
	// registry names and returns the result that goes into the receipt.
	InsertLocalEffect(e LocalEffect) (json.RawMessage, error)
	// Exec runs a statement of an embedding program on its own tables, in
	// this transaction: how a local effect registered from Go commits with
	// its operation. The transaction may be retried (a busy database), so
	// the statement must have no effect outside it.
	Exec(query string, args ...any) (sql.Result, error)

	GetTombstone(tenant, key string) (*model.Tombstone, error)
	// ExpiredLeases lists in-progress operations whose lease has ended.
	ExpiredLeases(limit int) ([]*model.Operation, error)
	// CompactExpired turns receipts past their replay window into
	// tombstones and forgets tombstones older than tombstoneTTL. A
	// contradicted operation is kept: it waits for a person.
	CompactExpired(tombstoneTTL time.Duration, limit int) (compacted, forgotten int, err error)
	// LongestReplayWindow is the longest replay window recorded by an
	// operation CompactExpired would compact now (its expires_at less the
	// time it settled, updated_at), or 0 if there is none. Writes nothing.
	LongestReplayWindow() (time.Duration, error)
}

// ListQuery selects one page of operations, newest first unless Sort says
// otherwise.
type ListQuery struct {
	Tenant string      // "" = all tenants
	State  model.State // "" = all states
	Tool   string      // "" = all tools
	// Search matches key or summary (subject, report, recipient) as a
	// substring, or the trace id of any attempt by exact id or prefix.
	Search string
	// Contradicted keeps only operations a late result contradicted.
	Contradicted bool
	// Finding keeps only operations whose latest provider finding is this
	// one (model.FilterNotChecked: no lookup recorded).
	Finding model.FindingFilter
	// Provider keeps only operations sent to this provider ("" = any,
	// local tools included).
	Provider string
	// CreatedBefore keeps only operations created before it (older than
	// an age); CreatedAfter only those created at or after it. Zero: no
	// bound.
	CreatedBefore, CreatedAfter time.Time
	// Sort is the order of the rows ("" = model.SortAge, newest first);
	// Reverse turns it round. Every order ends on the id, so it is total.
	Sort    model.SortColumn
	Reverse bool
	// BeforeID is the keyset cursor: only the rows that come after
	// operation BeforeID in the chosen order (0 = from the first). In the
	// default order, the ids below it. The operation must exist, except in
	// the default order, where any id is a boundary.
	BeforeID int64
	// AfterID pages backwards: only the rows that come before operation
	// AfterID in the chosen order, the nearest Limit of them, returned in
	// that order.
	AfterID int64
	// BeforeRow and AfterRow are the same cursors given as the row the
	// caller read (its sort columns' values then, and its id); they take
	// the place of BeforeID and AfterID. A sorted list must page by them:
	// a row's state and changed time move (a decision, a sweep) and a
	// compacted row is gone, and a cursor read again by id would start
	// the next page at the row's new place — or nowhere — skipping the
	// rows in between.
	BeforeRow, AfterRow *model.Operation
	Limit               int
}

// SortColumns are the columns an order compares, in SQL, last the id:
// what both drivers build their ORDER BY and keyset conditions from.
func SortColumns(c model.SortColumn) []string {
	switch c {
	case model.SortKey:
		return []string{"tenant", "op_key", "id"}
	case model.SortState:
		return []string{"state", "id"}
	case model.SortTenant:
		return []string{"tenant", "id"}
	case model.SortTool:
		return []string{"tool", "id"}
	case model.SortChanged:
		return []string{"updated_at", "id"}
	}
	return []string{"id"}
}

// KeysetBound is one edge of a page in a ListQuery's order: the row
// comparison (SortColumns against the cursor row) a driver spells in its SQL.
type KeysetBound struct {
	Cmp string           // ">" or "<", in SortColumns' own ascending terms
	ID  int64            // the cursor row, read by id, when Row is nil
	Row *model.Operation // the cursor row as the caller read it
}

// Keyset is where q's page lies in its order, for both drivers: the bounds
// its rows must satisfy, the direction to read them in, and flip, set when
// the page is read backwards (AfterID/AfterRow: the page before the cursor)
// and its rows must be reversed into the list's order.
func Keyset(q ListQuery) (bounds []KeysetBound, dir string, flip bool) {
	desc := q.Sort.Descending() != q.Reverse
	later, earlier := ">", "<"
	if desc {
		later, earlier = "<", ">"
	}
	if q.BeforeRow != nil || q.BeforeID > 0 {
		bounds = append(bounds, KeysetBound{Cmp: later, ID: q.BeforeID, Row: q.BeforeRow})
	}
	if q.AfterRow != nil || q.AfterID > 0 {
		bounds = append(bounds, KeysetBound{Cmp: earlier, ID: q.AfterID, Row: q.AfterRow})
		flip = true
	}
	dir = "ASC"
	if desc != flip {
		dir = "DESC"
	}
	return bounds, dir, flip
}

// SortValues are op's values of SortColumns(c), in that order, as both
// drivers store them (times in Unix milliseconds): a cursor row as its
// reader saw it.
func SortValues(c model.SortColumn, op *model.Operation) []any {
	cols := SortColumns(c)
	out := make([]any, len(cols))
	for i, col := range cols {
		switch col {
		case "tenant":
			out[i] = op.Tenant
		case "op_key":
			out[i] = op.Key
		case "state":
			out[i] = string(op.State)
		case "tool":
			out[i] = op.Tool
		case "updated_at":
			out[i] = op.UpdatedAt.UnixMilli()
		case "id":
			out[i] = op.ID
		}
	}
	return out
}

// DefaultPage is how many rows a List or Decisions page holds when its
// query names no limit (0 or less).
const DefaultPage = 100

// MaxPage is the largest page a person or a program may ask for (ops
// list --limit, decisions --limit).
const MaxPage = 10000

// PageLimit is how many rows a List or Decisions query asking for limit
// reads: DefaultPage for 0 or less; limit itself up to MaxPage+1 (the
// largest page and one row more, which tells a caller whether another
// page follows); beyond that the query is refused (CodeInvalid) — never
// read as another page size than asked, which a caller would take for the
// whole answer.
func PageLimit(limit int) (int, error) {
	switch {
	case limit <= 0:
		return DefaultPage, nil
	case limit > MaxPage+1:
		return 0, model.Errorf(model.CodeInvalid, "a page is at most %d rows (and one more, to tell whether another follows); %d asked", MaxPage, limit)
	}
	return limit, nil
}

// DecisionQuery selects decisions for the audit log, newest first.
type DecisionQuery struct {
	Tenant   string       // "" = all tenants
	Operator string       // "" = every operator
	Action   model.Action // "" = every action
	BeforeID int64        // keyset cursor: only decisions below this id
	Limit    int          // see PageLimit
}

// Counts is the number of operations by state (and in all), plus how many
// are flagged contradicted and how many claims' leases have ended.
type Counts struct {
	ByState      map[model.State]int
	Total        int
	Contradicted int
	// ExpiredLeases counts in_progress operations whose lease has ended
	// with no result: their worker is gone, and a sweep makes them unknown.
	ExpiredLeases int
	// ReleasedClaims counts those of ExpiredLeases whose claim was
	// released (model.LeaseReleased: given up to be sent again under its
	// key), not ended with its worker gone.
	ReleasedClaims int
	// HeldClaims counts those of ReleasedClaims whose busy provider's
	// Retry-After has not passed (retry_not_before after now,
	// reconcile.HeldFor): nothing sends them before then.
	HeldClaims int
	// NextHoldEnd is when the next of those holds ends (zero: none):
	// HeldClaims shrinks then, with no write to say so.
	NextHoldEnd time.Time
	// NextLeaseEnd is when the next running claim's lease ends (zero: none
	// runs): ExpiredLeases grows then, with no write to say so.
	NextLeaseEnd time.Time
}

// Durability chooses how hard a commit is pushed to disk. Durable is the
// default and what every acknowledged call relies on; Fast exists only for
// bulk generators of throw-away benchmark ledgers.
type Durability int

const (
	Durable Durability = iota
	Fast
)

// Options tune a driver's Open.
type Options struct {
	// Create makes a missing ledger (a file's directory must exist).
	Create bool
	// ReadOnly opens for reading only; any write fails.
	ReadOnly bool
	// BusyTimeout is how long one statement waits for another writer's
	// lock before the transaction is retried inside the caller's deadline.
	// Default 5s.
	BusyTimeout time.Duration
	Durability  Durability
	// LeaveWAL lets Close leave a small write-ahead log in place, not
	// merged into the main file, when this store made no durable commit
	// (a replay, a conflict, a refusal: attempt rows only). The next
	// writer appends to it, and neither process pays the fsyncs of a
	// checkpoint and of a new log. SQLite drivers only; the ledger is
	// then the file together with its -wal.
	LeaveWAL bool
	// ReadOnWriter makes the reads a store does outside a transaction on
	// a writer's behalf (the Peeker's Seen) run on the writer's connection,
	// already open, instead of opening a reader connection of their own
	// — which costs its open, its pragmas and a parse of the whole schema.
	// For a process that makes one call and exits (the CLI's `call`); a
	// long-lived store with concurrent callers should not set it, since
	// such a read then waits for the writer. SQLite drivers only.
	ReadOnWriter bool
	// Now is the clock; tests and the lab pin it. Default time.Now.
	Now func() time.Time
	// OnMigrate, if set, is told the schema version an open found and the
	// one it migrated the ledger to, once the migrations have committed
	// (from 0: a ledger the open created). Not called when none ran.
	OnMigrate func(from, to int)
	// HostClock is this host's clock, against which a driver whose ledger
	// clock is a database server's (PostgreSQL) measures that clock's
	// offset; tests skew it. Default time.Now; unused with Now set.
	HostClock func() time.Time
}

// ErrNeedsDurable is what a Tx method returns inside a relaxed
// WithAttemptTx transaction when fn tries to write more than an attempt
// row; the driver then reruns fn durably. fn passes it through unchanged.
var ErrNeedsDurable = errors.New("store: this transaction changes more than attempts; it must be durable")

// LocalEffect is one local tool's effect, written in the operation's own
// transaction.
type LocalEffect struct {
	Table       model.LocalTable
	Tool        string
	Tenant      string
	OperationID int64
	// Text is the summary argument's value: the task's subject or the
	// report's name in the demo's tables.
	Text string
	// Args is the canonical arguments (the generic table keeps them whole).
	Args []byte
}
