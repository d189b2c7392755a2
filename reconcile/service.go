// Package reconcile holds retrysafe's rules: how a call is classified, when
// a key replays, conflicts or claims, how an external effect is dispatched
// in two phases, how leases expire, which operator decisions are legal and
// how a runner retries. It calls the store, never SQL.
package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
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
	DefaultProvider        = "sandbox"
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

// Service runs calls, sweeps and decisions over one ledger.
type Service struct {
	Store     store.Ledger
	Providers provider.Registry

	Lease           time.Duration
	ReplayWindow    time.Duration
	TombstoneWindow time.Duration
	DispatchTimeout time.Duration
	// LookupTimeout bounds one provider lookup (default
	// DefaultLookupTimeout): a slower provider "cannot tell".
	LookupTimeout time.Duration
	// AuthoritativeLookups names the providers whose lookup is declared
	// authoritative: only their "has nothing" may lead to a bulk "mark not
	// applied" (see LookupAuthoritative).
	AuthoritativeLookups map[string]bool

	// At, when set, is called at each Point; the lab's worker exits the
	// process there. Production leaves it nil.
	At func(Point)
}

// New returns a Service with the documented defaults.
func New(st store.Ledger, providers provider.Registry) *Service {
	return &Service{
		Store: st, Providers: providers,
		Lease: DefaultLease, ReplayWindow: DefaultReplayWindow,
		TombstoneWindow: DefaultTombstoneWindow, DispatchTimeout: DefaultDispatchTimeout,
		LookupTimeout: DefaultLookupTimeout,
	}
}

func (s *Service) at(p Point) {
	if s.At != nil {
		s.At(p)
	}
}

// DownstreamKey is the idempotency key sent to a provider for (tenant, key):
// stable across every attempt of the operation, and revealing neither.
func DownstreamKey(tenant, key string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + key))
	return "rs-" + hex.EncodeToString(h[:16])
}

// Result is a call's classified outcome.
type Result struct {
	Class   model.Class      `json:"class"`
	Outcome model.Outcome    `json:"outcome,omitempty"` // what the attempt row says
	Receipt *model.Receipt   `json:"receipt,omitempty"`
	NewKey  string           `json:"new_key,omitempty"` // superseded: use this key
	State   model.State      `json:"state,omitempty"`
	Message string           `json:"message,omitempty"`
	Op      *model.Operation `json:"-"`
}

func errorResult(err error) Result {
	class := model.ClassInternal
	if model.IsCode(err, model.CodeInvalid) {
		class = model.ClassInvalid
	}
	return Result{Class: class, Message: err.Error()}
}
