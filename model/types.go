package model

import (
	"encoding/json"
	"time"
)

// Operation is one logical write, keyed by (Tenant, Key).
type Operation struct {
	ID             int64           `json:"id"`
	Tenant         string          `json:"tenant"`
	Key            string          `json:"key"`
	Tool           string          `json:"tool"`
	PayloadVersion int             `json:"payload_version"`
	Args           json.RawMessage `json:"args"` // canonical JSON
	Summary        string          `json:"summary"`
	Fingerprint    string          `json:"fingerprint"`
	State          State           `json:"state"`
	Version        int64           `json:"version"`  // bumps on every change; decisions compare it
	ClaimNo        int64           `json:"claim_no"` // which claim holds (or last held) the operation
	Receipt        json.RawMessage `json:"receipt,omitempty"`
	Provider       string          `json:"provider,omitempty"`
	DownstreamKey  string          `json:"downstream_key,omitempty"`
	ProviderRef    string          `json:"provider_ref,omitempty"`
	LeaseOwner     string          `json:"lease_owner,omitempty"`
	LeaseUntil     time.Time       `json:"lease_until,omitzero"`
	Contradicted   bool            `json:"contradicted"`
	SupersedesID   int64           `json:"supersedes_id,omitempty"`
	SupersededByID int64           `json:"superseded_by_id,omitempty"`
	AttemptCount   int             `json:"attempt_count"`
	// LookupCount is how many of AttemptCount are provider lookups (a
	// check, a triage, a late "applied" recorded as a finding): questions
	// about the effect, not attempts to make it. Lists and details fill it.
	LookupCount int `json:"lookup_count"`
	// Finding is the latest provider lookup recorded for it (nil: not
	// checked). Lists and details fill it; a write path does not.
	Finding *Finding `json:"finding,omitempty"`
	// BindingFinding is the earlier lookup a decision is checked against
	// when it is not Finding (store.Tx.LatestConclusiveFinding's rule): a
	// "has it" before a later "has nothing", "cannot tell" or retry, or a
	// fresh "has nothing" before a later "cannot tell". nil when Finding
	// itself binds, or nothing does. Filled with Finding.
	BindingFinding *Finding  `json:"binding_finding,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	ExpiresAt      time.Time `json:"expires_at,omitzero"` // end of the replay window

	// ClaimHonoursKeys is whether its provider honoured downstream keys
	// in the config of the process that made its latest claim (nil: never
	// claimed, or claimed before the ledger recorded it — migration 12).
	// A claim is sent again under the same downstream key only when this
	// and the config of the process about to send it both say so
	// (reconcile's mayResend).
	ClaimHonoursKeys *bool `json:"claim_honours_keys,omitempty"`

	// ClaimApplyBy is until when its provider may still apply a request
	// of its claims, as the config of the process that made them saw it:
	// the claim's lease end plus the grace that config gave the provider
	// (its request timeout, or longer); a later claim keeps the later
	// time. A lookup that finds nothing before it is "cannot tell",
	// whatever the config of the process that looks says. Zero: never
	// claimed, or claimed before the ledger recorded it (migration 13).
	ClaimApplyBy time.Time `json:"-"`
	// ClaimDispatchID is where its latest claim's request went: a digest
	// of its provider's kind, method, scheme, host, URL template, key
	// header and configured headers (provider.IdentityOf; the headers since
	// R11: a digest without them is held to the rest). A claim is sent again only where the
	// config of the process about to send it points the provider to the
	// same place. "": never claimed, or claimed before migration 13.
	ClaimDispatchID string `json:"-"`
	// ClaimLookupID is the same of its provider's lookup then ("" also:
	// it had none). A lookup that asks elsewhere cannot say "has nothing".
	ClaimLookupID string `json:"-"`

	// RetryNotBefore is when its provider, answering busy with a
	// Retry-After (seconds or an HTTP date), asked to be sent it again at
	// the soonest: the time of that answer plus the wait, at most
	// reconcile.MaxRetryAfter. Until then no call of its key and no sweep
	// sends it again; each is told the wait still left. Zero: none asked
	// (every other answer clears it), or recorded before migration 14.
	RetryNotBefore time.Time `json:"retry_not_before,omitzero"`
}

// Attempt is one transport attempt against a key (or one sweep of it).
type Attempt struct {
	ID          int64   `json:"id"`
	OperationID int64   `json:"operation_id"`
	Seq         int     `json:"seq"`
	Outcome     Outcome `json:"outcome"`
	Fingerprint string  `json:"fingerprint"`
	TraceID     string  `json:"trace_id,omitempty"`
	WorkerID    string  `json:"worker_id,omitempty"`
	ProviderRef string  `json:"provider_ref,omitempty"`
	Error       string  `json:"error,omitempty"`
	// Finding and Detail: what a lookup attempt found (OutcomeLookup only);
	// Detail is the provider's words, or why it cannot tell.
	Finding   FindingKind   `json:"finding,omitempty"`
	Detail    string        `json:"detail,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	Duration  time.Duration `json:"duration_ns"`
}

// Decision is one operator action on an operation.
type Decision struct {
	ID          int64     `json:"id"`
	OperationID int64     `json:"operation_id"`
	Operator    string    `json:"operator"`
	Action      Action    `json:"action"`
	Reason      string    `json:"reason"`
	Evidence    string    `json:"evidence,omitempty"`
	FromState   State     `json:"from_state"`
	ToState     State     `json:"to_state"`
	FromVersion int64     `json:"from_version"`
	NewKey      string    `json:"new_key,omitempty"`
	At          time.Time `json:"at"`
}

// AuditEntry is one decision with the operation it was about: a line of
// the audit log.
type AuditEntry struct {
	Decision
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
	Tool   string `json:"tool"`
}

// Tombstone is what stays of an operation after its replay window: enough to
// tell a late retry "expired — reconcile" instead of creating a second effect.
type Tombstone struct {
	Tenant      string    `json:"tenant"`
	Key         string    `json:"key"`
	Tool        string    `json:"tool"`
	Fingerprint string    `json:"fingerprint"`
	FinalState  State     `json:"final_state"`
	ExpiredAt   time.Time `json:"expired_at"`
	ForgetAt    time.Time `json:"forget_at"`
}

// Detail is an operation with everything the console and `ops show` display.
type Detail struct {
	Operation    Operation  `json:"operation"`
	Attempts     []Attempt  `json:"attempts"`
	Decisions    []Decision `json:"decisions"`
	Supersedes   *LinkRef   `json:"supersedes,omitempty"`
	SupersededBy *LinkRef   `json:"superseded_by,omitempty"`
}

// LinkRef names a linked operation.
type LinkRef struct {
	ID    int64  `json:"id"`
	Key   string `json:"key"`
	State State  `json:"state"`
}

// Receipt is what a done call hands back: what happened to the request, not
// the current state of the resource.
type Receipt struct {
	Status      string          `json:"status"` // created | replayed | failed
	Tenant      string          `json:"tenant"`
	Key         string          `json:"key"`
	Tool        string          `json:"tool"`
	Result      json.RawMessage `json:"result"`
	ProviderRef string          `json:"provider_ref,omitempty"`
}

// Lookups is how many of atts are provider lookups (Operation.LookupCount).
func Lookups(atts []Attempt) int {
	n := 0
	for _, a := range atts {
		if a.Outcome == OutcomeLookup {
			n++
		}
	}
	return n
}
