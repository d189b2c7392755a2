// Package model holds retrysafe's domain types: operation states, attempt
// outcomes, outcome classes, request validation, the fingerprint and the one
// error type. It imports no UI and no SQL.
package model

// State is where an operation stands. The SQL CHECK in store's migrations
// lists exactly AllStates; a test keeps the two in step.
type State string

const (
	StateInProgress State = "in_progress"
	StateApplied    State = "applied"
	StateFailed     State = "failed"
	StateNotApplied State = "not_applied"
	StateUnknown    State = "unknown"
	StateSuperseded State = "superseded"
	StateAuthorized State = "authorized"
)

// AllStates is every state, in the order the console shows them: the ones
// that need a person first.
var AllStates = []State{
	StateUnknown, StateInProgress, StateNotApplied, StateFailed,
	StateApplied, StateSuperseded, StateAuthorized,
}

// Valid reports whether s is one of AllStates.
func (s State) Valid() bool {
	for _, x := range AllStates {
		if x == s {
			return true
		}
	}
	return false
}

// Final reports whether no call can move the operation on: only an operator
// decision (or nothing at all) may.
func (s State) Final() bool {
	return s == StateApplied || s == StateFailed || s == StateSuperseded
}

// ParseState accepts the state names and the dashed spellings operators type
// (not-applied, in-progress).
func ParseState(s string) (State, error) {
	for _, x := range AllStates {
		if string(x) == s || dashed(string(x)) == s {
			return x, nil
		}
	}
	return "", Errorf(CodeInvalid, "unknown state %q (want one of %s)", s, stateNames())
}

func dashed(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

func stateNames() string {
	out := ""
	for i, s := range AllStates {
		if i > 0 {
			out += ", "
		}
		out += string(s)
	}
	return out
}

// Outcome is what one transport attempt amounted to. The SQL CHECK on
// attempts.outcome lists exactly AllOutcomes.
type Outcome string

const (
	OutcomeCreated      Outcome = "created"       // local effect committed with its receipt
	OutcomeReplayed     Outcome = "replayed"      // stored receipt (or stored failure) returned
	OutcomeConflict     Outcome = "conflict"      // same key, different arguments; nothing changed
	OutcomeInProgress   Outcome = "in_progress"   // another attempt holds the claim, or the provider said busy
	OutcomeDispatched   Outcome = "dispatched"    // claim recorded; request sent (or about to be)
	OutcomeApplied      Outcome = "applied"       // provider confirmed the effect
	OutcomeFailed       Outcome = "failed"        // provider rejected it definitively
	OutcomeNotApplied   Outcome = "not_applied"   // provider: definitely never applied
	OutcomeTimedOut     Outcome = "timed_out"     // no answer or an ambiguous one
	OutcomeLateResult   Outcome = "late_result"   // a result after the claim moved on
	OutcomeRefused      Outcome = "refused"       // unknown or superseded: told to stop / use the new key
	OutcomeExpired      Outcome = "expired"       // past the replay window: reconcile
	OutcomeLeaseExpired Outcome = "lease_expired" // sweep: claim outlived its lease → unknown
	OutcomeRedispatched Outcome = "redispatched"  // sweep: re-sent under the same downstream key
	// OutcomeLookup is a provider lookup by downstream key (ops check, the
	// console's c, a triage run): its finding is evidence for a person. It
	// never changes the operation's state or version.
	OutcomeLookup Outcome = "lookup"
)

// AllOutcomes is every attempt outcome.
var AllOutcomes = []Outcome{
	OutcomeCreated, OutcomeReplayed, OutcomeConflict, OutcomeInProgress,
	OutcomeDispatched, OutcomeApplied, OutcomeFailed, OutcomeNotApplied,
	OutcomeTimedOut, OutcomeLateResult, OutcomeRefused, OutcomeExpired,
	OutcomeLeaseExpired, OutcomeRedispatched, OutcomeLookup,
}

// Valid reports whether o is one of AllOutcomes.
func (o Outcome) Valid() bool {
	for _, x := range AllOutcomes {
		if x == o {
			return true
		}
	}
	return false
}

// StalesFinding reports whether an attempt with this outcome, recorded
// after a provider lookup, makes that lookup's finding stale: whether it
// may have sent something to the provider or told us something about it,
// so the provider may know more now than it said. An attempt that sent
// nothing and learnt nothing leaves the finding standing — a call refused
// ("unknown: stop") after a "has nothing" does not undo it. Every outcome
// is listed on purpose; one not listed stales (it may have reached the
// provider). store.FindingStaledBySQL is this list in SQL.
func (o Outcome) StalesFinding() bool {
	switch o {
	case
		// The stored receipt (or stored failure) returned.
		OutcomeReplayed,
		// Different arguments: nothing changed.
		OutcomeConflict,
		// Unknown, contradicted or superseded: told to stop or use the
		// new key.
		OutcomeRefused,
		// Past the replay window: told to reconcile.
		OutcomeExpired,
		// A finding itself: a newer lookup replaces it, not stales it.
		OutcomeLookup:
		return false
	case
		// Sent, or about to be; the sweep's re-send.
		OutcomeDispatched, OutcomeRedispatched,
		// The provider answered (a not_applied may also be a claim whose
		// lease ended before it left: the outcome alone does not say).
		OutcomeApplied, OutcomeFailed, OutcomeNotApplied, OutcomeLateResult,
		// Sent with no definite answer: it may still land.
		OutcomeTimedOut,
		// The sweep made a claim unknown whose request may still land.
		OutcomeLeaseExpired,
		// Not only a call told another attempt holds the claim (which
		// sends nothing): a dispatched attempt the provider answered
		// "busy" and keeps under its downstream key ends in_progress
		// too, and the outcome alone does not say which.
		OutcomeInProgress,
		// A local effect committed: no provider, but the ledger changed.
		OutcomeCreated:
		return true
	}
	return true
}

// FindingNeutralOutcomes is every outcome, in AllOutcomes' order, whose
// attempt leaves an earlier finding standing (!StalesFinding).
func FindingNeutralOutcomes() []Outcome {
	var out []Outcome
	for _, o := range AllOutcomes {
		if !o.StalesFinding() {
			out = append(out, o)
		}
	}
	return out
}

// Action is an operator decision.
type Action string

const (
	ActionMarkApplied    Action = "mark_applied"
	ActionMarkNotApplied Action = "mark_not_applied"
	ActionAuthorizeKey   Action = "authorize_new_key"
)

// AllActions is every operator action.
var AllActions = []Action{ActionMarkApplied, ActionMarkNotApplied, ActionAuthorizeKey}

// Valid reports whether a is one of AllActions.
func (a Action) Valid() bool {
	for _, x := range AllActions {
		if x == a {
			return true
		}
	}
	return false
}

// ParseAction accepts the action names and the short words operators type
// (applied, not-applied, new-key).
func ParseAction(s string) (Action, error) {
	switch s {
	case "applied", "mark-applied":
		return ActionMarkApplied, nil
	case "not-applied", "not_applied", "mark-not-applied":
		return ActionMarkNotApplied, nil
	case "new-key", "authorize", "authorize-new-key", "supersede":
		return ActionAuthorizeKey, nil
	}
	if a := Action(s); a.Valid() {
		return a, nil
	}
	return "", Errorf(CodeInvalid, "unknown action %q (want applied, not-applied or new-key)", s)
}

// Verb is how the action reads in a sentence ("cannot mark applied …"):
// the console, the command line and reconcile's messages all use it.
func (a Action) Verb() string {
	switch a {
	case ActionMarkApplied:
		return "mark applied"
	case ActionMarkNotApplied:
		return "mark not applied"
	case ActionAuthorizeKey:
		return "authorize a new key"
	}
	return string(a)
}

// Target is the state the action moves an operation to.
func (a Action) Target() State {
	switch a {
	case ActionMarkApplied:
		return StateApplied
	case ActionMarkNotApplied:
		return StateNotApplied
	case ActionAuthorizeKey:
		return StateSuperseded
	}
	return ""
}

// Class is what the caller (an agent runner) should do with a call's result.
type Class string

const (
	ClassDone       Class = "done"        // created or replayed: use the receipt
	ClassFailed     Class = "failed"      // definite, stored failure: do not retry
	ClassConflict   Class = "conflict"    // fix the request
	ClassInvalid    Class = "invalid"     // fix the request
	ClassInProgress Class = "in_progress" // wait, retry the same key
	ClassUnknown    Class = "unknown"     // stop; a person reconciles
	ClassSuperseded Class = "superseded"  // use the new key
	ClassExpired    Class = "expired"     // past the replay window: reconcile
	ClassInternal   Class = "internal"    // a bug or the machine: retry the same key later
)

// AllClasses is every outcome class.
var AllClasses = []Class{
	ClassDone, ClassFailed, ClassConflict, ClassInvalid, ClassInProgress,
	ClassUnknown, ClassSuperseded, ClassExpired, ClassInternal,
}

// Retryable reports whether the runner may try again under the same key.
func (c Class) Retryable() bool { return c == ClassInProgress || c == ClassInternal }

// ExitCode is the documented exit code of `retrysafe call` for the class.
func (c Class) ExitCode() int {
	switch c {
	case ClassDone:
		return 0
	case ClassInvalid:
		return 2
	case ClassConflict:
		return 3
	case ClassInProgress:
		return 4
	case ClassUnknown:
		return 5
	case ClassSuperseded:
		return 6
	case ClassExpired:
		return 7
	case ClassFailed:
		return 8
	default:
		return 1
	}
}

// LeaseReleased is the lease owner of a claim released to be sent again
// (a lost reply, a "busy", a "not sent" or a "nothing applied" to a
// re-send, where the provider honours downstream keys): in_progress, and
// nobody holds it — not a worker that died holding its lease. Its lease
// time is when it was released.
const LeaseReleased = "released"
