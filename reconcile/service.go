// Package reconcile holds retrysafe's rules: how a call is classified, when
// a key replays, conflicts or claims, how an external effect is dispatched
// in two phases, how leases expire, which operator decisions are legal and
// how a runner retries. It calls the store, never SQL.
package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// Defaults of the retention and lease contract (documented in the README).
const (
	DefaultReplayWindow    = 24 * time.Hour
	DefaultTombstoneWindow = 30 * 24 * time.Hour
	DefaultLease           = 30 * time.Second
	DefaultDispatchTimeout = 10 * time.Second
	// MaxRetryAfter caps the wait a busy provider asks for (Retry-After)
	// that a result carries: a date days away is not a wait a caller
	// should be told to sit out; it asks again then.
	MaxRetryAfter = 5 * time.Minute
)

// Point names a place in the call path where the lab (and crash tests) can
// stop a worker process for real.
type Point string

const (
	// PointBeforeCommit: the local effect and receipt are written, the
	// transaction is not committed.
	PointBeforeCommit Point = "before-commit"
	// PointAfterCommit: committed, the acknowledgment not yet returned.
	PointAfterCommit Point = "after-commit"
	// PointAfterClaim: transaction A committed, nothing dispatched yet.
	PointAfterClaim Point = "after-claim"
	// PointAfterDispatch: the provider answered, transaction B not begun.
	PointAfterDispatch Point = "after-dispatch"
)

// Service runs calls, sweeps and decisions over one ledger, for the tools
// of one registry.
type Service struct {
	Store     store.Ledger
	Tools     *model.Registry
	Providers provider.Registry
	// LocalFuncs are the effects of the registry's custom local tools (an
	// embedding program's Go functions), by tool name.
	LocalFuncs map[string]LocalFunc

	Lease           time.Duration
	ReplayWindow    time.Duration
	TombstoneWindow time.Duration
	DispatchTimeout time.Duration
	// LookupTimeout bounds one provider lookup (default
	// DefaultLookupTimeout): a slower provider "cannot tell".
	LookupTimeout time.Duration
	// RecordTimeout bounds recording a lookup's finding once the provider
	// answered (default DefaultRecordTimeout): the record outlives the
	// caller giving up, so that what the provider said is kept, but a
	// ledger another process keeps locked answers busy, not never.
	RecordTimeout time.Duration
	// Grace is how long after a request's wait ended a lookup that finds
	// nothing is "cannot tell" (DispatchGrace): 0 is the provider's
	// request timeout or DefaultDispatchGrace, never less than the lease;
	// a positive value is used as it is; negative is none (a test that
	// means "after the grace"). New reads it from GraceEnv.
	Grace time.Duration
	// AuthoritativeLookups names the providers whose lookup is declared
	// authoritative: only their "has nothing" may lead to a bulk "mark not
	// applied" (see LookupAuthoritative).
	AuthoritativeLookups map[string]bool
	// LookupRates are the lookups a second each provider's config entry
	// allows ([providers.lookup] rate), by provider name; a provider not
	// named gets DefaultTriageRate (see LookupRate).
	LookupRates map[string]float64

	// HintFlags are the flags a command this service prints for a person
	// to run next ("retrysafe ops check …") needs to act on the same
	// ledger — the CLI's --db, --provider-db, --config when not the
	// defaults — shell-quoted, each with a leading space; "" for none.
	HintFlags string

	// At, when set, is called at each Point; the lab's worker exits the
	// process there. Production leaves it nil.
	At func(Point)

	// receipts are stored receipts already decoded (New makes it; nil
	// decodes every time).
	receipts *storedReceipts
	// asked is the lookups this process recorded (New makes it; nil: none,
	// so every "has nothing" is asked again before "not applied").
	asked *askedHere
}

// New returns a Service with the documented defaults.
func New(st store.Ledger, tools *model.Registry, providers provider.Registry) *Service {
	return &Service{
		Store: st, Tools: tools, Providers: providers,
		Lease: DefaultLease, ReplayWindow: DefaultReplayWindow,
		TombstoneWindow: DefaultTombstoneWindow, DispatchTimeout: DefaultDispatchTimeout,
		LookupTimeout: DefaultLookupTimeout, Grace: graceFromEnv(), receipts: &storedReceipts{}, asked: &askedHere{},
	}
}

func (s *Service) at(p Point) {
	if s.At != nil {
		s.At(p)
	}
}

// DownstreamKey is the idempotency key sent to a provider for (tenant, key)
// of the ledger whose id is ledgerID (store.Reader.LedgerID): stable across
// every attempt of the operation, and revealing none of them. Two ledgers
// that send to one provider (a sandbox file may serve several, an API
// account several services) never share one, so neither is answered with
// the other's delivery. A copy of a ledger keeps its id: it is the same
// history. An operation keeps the key it recorded when it was created;
// one created before keys named their ledger recorded the same hash
// without it, which ledgerID "" still gives.
func DownstreamKey(ledgerID, tenant, key string) string {
	in := tenant + "\x00" + key
	if ledgerID != "" {
		in = ledgerID + "\x00" + in
	}
	h := sha256.Sum256([]byte(in))
	return "rs-" + hex.EncodeToString(h[:16])
}

// downstreamKey is DownstreamKey for a new operation of tx's ledger.
func downstreamKey(tx store.Tx, tenant, key string) (string, error) {
	id, err := tx.LedgerID()
	if err != nil {
		return "", err
	}
	return DownstreamKey(id, tenant, key), nil
}

// Result is a call's classified outcome.
type Result struct {
	Class   model.Class    `json:"class"`
	Outcome model.Outcome  `json:"outcome,omitempty"` // what the attempt row says
	Receipt *model.Receipt `json:"receipt,omitempty"`
	NewKey  string         `json:"new_key,omitempty"` // superseded: use this key
	State   model.State    `json:"state,omitempty"`
	Message string         `json:"message,omitempty"`
	// RetryAfter is how long a busy provider asked to be left alone
	// (its Retry-After, in seconds or as an HTTP date), rounded up to a
	// whole second and capped at MaxRetryAfter; 0 when it said nothing.
	// The gateway's Retry-After, MCP's tool error, call --json and
	// CallWithRetry's backoff use it.
	RetryAfter time.Duration    `json:"-"`
	Op         *model.Operation `json:"-"`
}

func errorResult(err error) Result {
	class := model.ClassInternal
	if model.IsCode(err, model.CodeInvalid) {
		class = model.ClassInvalid
	}
	return Result{Class: class, Message: err.Error()}
}

// LocalFunc is a custom local effect: it runs inside the operation's
// transaction (tx.Exec on the program's own tables) and returns what the
// receipt carries as "effect". An error rolls the whole call back. It may
// run more than once (a busy database is retried) and must have no effect
// outside tx.
type LocalFunc func(tx store.Tx, c LocalCall) (json.RawMessage, error)

// LocalCall is what a custom local effect is told.
type LocalCall struct {
	Tenant, Key, Tool string
	OperationID       int64
	// Args are the arguments as decoded (numbers as json.Number), Canonical
	// their canonical JSON.
	Args      map[string]any
	Canonical []byte
}

// EffectCount counts the local effect rows of a local tool, in one tenant
// or all (""), in the table the registry names for it.
func (s *Service) EffectCount(ctx context.Context, tool, tenant string) (int, error) {
	t, err := s.Tools.Lookup(tool)
	if err != nil {
		return 0, err
	}
	if t.Kind() != model.EffectLocal {
		return 0, model.Errorf(model.CodeInvalid, "tool %q has no local effect table", tool)
	}
	return s.Store.EffectCount(ctx, t.Effect.Table, t.Name, tenant)
}
