// Package provider is the boundary to systems outside the ledger's
// transaction (e-mail, payments). A provider takes a downstream idempotency
// key with every dispatch and can be asked, by that key, what happened —
// the authoritative status path an operator reconciles against.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is a provider's definite answer to a dispatch.
type Status string

const (
	// Applied: the effect happened; Ref names it at the provider.
	Applied Status = "applied"
	// Rejected: the provider refused the request for good (a final failure).
	Rejected Status = "rejected"
	// NotApplied: the provider guarantees nothing happened and nothing will
	// (for example it refused before accepting); the same key may try again.
	NotApplied Status = "not_applied"
	// Busy: the provider did not take the request now (429, 503, a request
	// under the same key still in flight) and asks for the same key again
	// later, after RetryAfter if it said.
	Busy Status = "busy"
)

// Request is one dispatch.
type Request struct {
	DownstreamKey string
	Tool          string
	Args          json.RawMessage
	Faults        Faults // sandbox fault switches; real providers ignore them
}

// Response is a definite answer. An ambiguous outcome (timeout, reset
// connection, 5xx without a guarantee) is an error instead: see Ambiguous.
type Response struct {
	Status Status
	Ref    string
	Detail string
	// RetryAfter is the provider's Retry-After (Busy only; 0 if it said none),
	// at most MaxRetryAfter.
	RetryAfter time.Duration
}

// MaxRetryAfter is the longest Retry-After a provider reports: one that
// asks longer (a date years away) is reported as this, and its Detail
// says what it asked.
const MaxRetryAfter = 24 * time.Hour

// Evidence is what the provider's status path says about a downstream key.
type Evidence struct {
	Provider      string    `json:"provider"`
	DownstreamKey string    `json:"downstream_key"`
	Found         bool      `json:"found"`
	Effects       int       `json:"effects"` // how many effects the provider holds under this key
	Ref           string    `json:"ref,omitempty"`
	Status        string    `json:"status,omitempty"`
	At            time.Time `json:"at,omitzero"`
	Detail        string    `json:"detail"`
	// CheckedAt is when the ledger recorded this answer as a lookup
	// attempt (its started_at; model.Finding.At), zero when it was not
	// recorded. Not the provider's: a "has nothing" is evidence only of
	// what the provider had then, and an attempt after it may have sent
	// the effect since (reconcile.CheckOutdated).
	CheckedAt time.Time `json:"-"`
	// Other, when set, says the provider holds something under the key
	// and reported what request it was (a provider that can: the
	// sandbox), and none of it is the request asked about (Query.Tool,
	// Query.Args): what differs, in plain words. Ref then names what it
	// holds. Found is false: nothing under the key is this request. A
	// copy of a ledger (the same ledger id) or a key reused after its
	// tombstone was forgotten sends another request under the same
	// downstream key. LookupFor makes it an error (OtherRequest): never
	// evidence that the request asked about was applied, nor that it was
	// not.
	Other string `json:"other,omitempty"`
}

// Provider is one external system.
type Provider interface {
	Name() string
	// HonoursKeys reports whether a repeated dispatch under the same
	// downstream key returns the first result instead of a second effect.
	HonoursKeys() bool
	// Dispatch sends the request. A nil error carries a definite Response;
	// any error means the outcome is unknown.
	Dispatch(ctx context.Context, req Request) (Response, error)
	// Lookup asks what happened under a downstream key. It changes nothing.
	Lookup(ctx context.Context, downstreamKey string) (Evidence, error)
}

// Query is what a lookup may know of an operation.
type Query struct {
	DownstreamKey string
	// Ref is the provider's reference an earlier attempt recorded (a late
	// result, a stored failure), "" if none.
	Ref string
	// Tool and Args are the request the operation sends under the key (as
	// Request carries them); a provider that reports what it holds (the
	// sandbox) compares them with it and answers Evidence.Other for
	// another request. Empty Tool: not known, asked by key alone.
	Tool string
	Args json.RawMessage
}

// QueryLooker is an optional interface of a Provider whose lookup can use
// more than the downstream key: the HTTP provider, whose status URL may
// name the provider's reference ({provider_ref}).
type QueryLooker interface {
	LookupQuery(ctx context.Context, q Query) (Evidence, error)
}

// LookupFor asks p what happened to an operation: with everything q
// knows when p can use it (QueryLooker), else by the downstream key.
//
// A provider that holds only another request under the key
// (Evidence.Other) answers with an *OtherRequest error: whoever asked gets
// no evidence from it unless it reads that error for what it is.
func LookupFor(ctx context.Context, p Provider, q Query) (Evidence, error) {
	var ev Evidence
	var err error
	if ql, ok := p.(QueryLooker); ok {
		ev, err = ql.LookupQuery(ctx, q)
	} else {
		ev, err = p.Lookup(ctx, q.DownstreamKey)
	}
	if err == nil && ev.Other != "" {
		ev.Found = false
		err = &OtherRequest{Provider: or(ev.Provider, p.Name()), Ref: ev.Ref, What: ev.Other}
	}
	return ev, err
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// OtherRequest is a lookup's answer that the provider holds, under the
// downstream key asked about, a request other than the operation's (see
// Evidence.Other): not evidence that the operation's effect happened,
// nor that it did not.
type OtherRequest struct {
	Provider string
	Ref      string // what the provider holds under the key ("" if it named nothing)
	What     string // what differs
}

func (o *OtherRequest) Error() string {
	held := "a request"
	if o.Ref != "" {
		held = o.Ref
	}
	return fmt.Sprintf("%s has a different request under this key (%s): no evidence this operation's effect happened, nor that it did not — do not mark it applied; check %s at the provider, and authorize a new key to send this one (a copy of the ledger, or a key reused after its tombstone was forgotten, sent another request under the same downstream key)",
		o.Provider, o.What, held)
}

// Checker is an optional interface of a Provider that can tell, before
// anything is claimed, that it cannot dispatch from this process at all
// (an HTTP provider whose dispatch reads a ${NAME} that is not set here):
// nil when it can, as far as it knows.
type Checker interface {
	CanDispatch() error
}

// KeyKeeper is a provider that can say it keeps what it holds under a
// downstream key for good — it never expires a key (the sandbox) — so
// its "has nothing" is never a key it has forgotten. Optional: a provider
// that does not say so may expire keys (many APIs keep them 24 h).
type KeyKeeper interface {
	KeepsKeys() bool
}

// KeepsKeys reports whether p says it never expires a downstream key
// (KeyKeeper); false when it does not say.
func KeepsKeys(p Provider) bool {
	k, ok := p.(KeyKeeper)
	return ok && k.KeepsKeys()
}

// NotSentPrefix begins the Detail of a NotApplied answer for a request
// that never left this process (a secret unset, a connection refused, a
// provider that could not be opened): see SentNothing.
const NotSentPrefix = "not sent: "

// SentNothing reports whether r says its request never left this process.
func SentNothing(r Response) bool {
	return r.Status == NotApplied && strings.HasPrefix(r.Detail, NotSentPrefix)
}

// ErrAmbiguous marks a dispatch whose outcome nobody knows.
var ErrAmbiguous = errors.New("outcome unknown")

// Ambiguous wraps a transport failure as an unknown outcome.
func Ambiguous(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrAmbiguous, fmt.Sprintf(format, args...))
}

// Faults are the sandbox's per-call fault switches.
type Faults struct {
	// LoseReply applies the effect, then reports a timeout.
	LoseReply bool `json:"lose_reply,omitempty"`
	// FailBefore refuses before applying, with the guarantee that nothing
	// happened (a definite not_applied).
	FailBefore bool `json:"fail_before,omitempty"`
	// Reject refuses definitively (a final failure).
	Reject bool `json:"reject,omitempty"`
	// Delay waits before applying; with a caller deadline shorter than the
	// delay the caller sees a timeout and nothing is applied.
	Delay time.Duration `json:"delay,omitempty"`
}

// Registry finds a provider by the name recorded on an operation.
type Registry map[string]Provider

// Get returns the named provider or an error naming the known ones.
func (r Registry) Get(name string) (Provider, error) {
	p, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("no provider %q is configured", name)
	}
	return p, nil
}

// Unreachable is a provider that could not be opened for asking (its file
// does not exist, its address does not answer). Its lookups answer "cannot
// tell" — an error, never evidence — and a dispatch sends nothing, which
// is a definite not-applied.
func Unreachable(name string, honoursKeys bool, why string) Provider {
	return &unreachable{name: name, honours: honoursKeys, why: why}
}

type unreachable struct {
	name    string
	honours bool
	why     string
}

func (u *unreachable) Name() string      { return u.name }
func (u *unreachable) HonoursKeys() bool { return u.honours }
func (u *unreachable) Dispatch(context.Context, Request) (Response, error) {
	return Response{Status: NotApplied, Detail: NotSentPrefix + u.why}, nil
}
func (u *unreachable) Lookup(_ context.Context, key string) (Evidence, error) {
	return Evidence{Provider: u.name, DownstreamKey: key}, fmt.Errorf("cannot tell: %s", u.why)
}
