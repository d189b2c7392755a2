package model

import (
	"strconv"
	"time"
)

// FindingKind is what one provider lookup said about an operation's
// downstream key. The SQL CHECK on attempts.finding lists exactly
// AllFindingKinds.
type FindingKind string

const (
	// FindingHasIt: the provider holds an effect under the key (Ref names it).
	FindingHasIt FindingKind = "has_it"
	// FindingHasNothing: the provider answered and holds nothing under the
	// key. Whether that proves "never applied" depends on whether the
	// provider's lookup is declared authoritative.
	FindingHasNothing FindingKind = "has_nothing"
	// FindingCannotTell: the provider could not be asked or did not answer
	// (down, slow, no lookup); Detail says why. Never evidence either way.
	FindingCannotTell FindingKind = "cannot_tell"
	// FindingHasOther: the provider holds something under the key, and
	// reports what request it was (the sandbox does): not this operation's
	// — another tool or other arguments, sent under the same downstream key
	// by a copy of the ledger, or by a key reused after its tombstone was
	// forgotten. Ref names what it holds, Detail what differs. Never
	// evidence either way: not that this operation's effect happened (a
	// decision "applied" on it is refused), nor that it did not.
	FindingHasOther FindingKind = "has_other"
)

// AllFindingKinds is every finding kind, in the order the console shows them.
var AllFindingKinds = []FindingKind{FindingHasIt, FindingHasNothing, FindingCannotTell, FindingHasOther}

// Valid reports whether k is one of AllFindingKinds.
func (k FindingKind) Valid() bool {
	for _, x := range AllFindingKinds {
		if x == k {
			return true
		}
	}
	return false
}

// Words is how the kind reads to a person.
func (k FindingKind) Words() string {
	switch k {
	case FindingHasIt:
		return "has it"
	case FindingHasNothing:
		return "has nothing"
	case FindingCannotTell:
		return "cannot tell"
	case FindingHasOther:
		return "has another request"
	}
	return "not checked"
}

// FindingFilter selects operations by the kind of finding their FINDING
// column shows (Operation.Shown): "has it" also selects an operation whose
// later lookups could not tell or found nothing, since that "has it" still
// binds.
type FindingFilter string

const (
	FilterAnyFinding  FindingFilter = ""
	FilterHasIt       FindingFilter = FindingFilter(FindingHasIt)
	FilterHasNothing  FindingFilter = FindingFilter(FindingHasNothing)
	FilterCannotTell  FindingFilter = FindingFilter(FindingCannotTell)
	FilterHasOther    FindingFilter = FindingFilter(FindingHasOther)
	FilterNotChecked  FindingFilter = "not_checked"
	filterWordsAnyAll               = "any"
)

// AllFindingFilters is every filter but "any", in the console's cycle order.
var AllFindingFilters = []FindingFilter{FilterHasIt, FilterHasNothing, FilterCannotTell, FilterHasOther, FilterNotChecked}

// ParseFindingFilter accepts the filter names and dashed spellings
// (has-it, not-checked); "" and "any" select every operation.
func ParseFindingFilter(s string) (FindingFilter, error) {
	if s == "" || s == filterWordsAnyAll {
		return FilterAnyFinding, nil
	}
	for _, f := range AllFindingFilters {
		if string(f) == s || dashed(string(f)) == s {
			return f, nil
		}
	}
	return "", Errorf(CodeInvalid, "unknown finding %q (want has-it, has-nothing, cannot-tell, has-other, not-checked or any)", s)
}

// Words is how the filter reads to a person.
func (f FindingFilter) Words() string {
	if f == FilterAnyFinding {
		return "any finding"
	}
	return FindingKind(f).Words()
}

// Finding is the latest provider lookup recorded for an operation: a
// `lookup` attempt with what the provider said. It is evidence for a
// person, never a decision.
type Finding struct {
	Kind     FindingKind `json:"kind"`
	Provider string      `json:"provider,omitempty"`
	Ref      string      `json:"ref,omitempty"`    // has it: the provider's reference
	Detail   string      `json:"detail,omitempty"` // the provider's words, or why it cannot tell
	At       time.Time   `json:"at"`
	Seq      int         `json:"seq"`          // the lookup attempt's number
	By       string      `json:"by,omitempty"` // who asked: "triage by alice", "ops check by bob"
	// Stale: made before the operation's latest attempt that may have
	// reached the provider (Outcome.StalesFinding: not a replay, conflict,
	// refusal or expiry, which send nothing), so the provider may know
	// more now.
	Stale bool `json:"stale"`
	// Earlier: an Operation.BindingFinding from a lookup before the latest
	// one, which said less ("cannot tell", or "has nothing" after a "has it").
	Earlier bool `json:"earlier,omitempty"`
}

// Line is the finding in one line, as the console's and ops list's FINDING
// columns show it: what it found, the provider's reference after a "has
// it" (ref: the caller makes it inert and short), how long ago (when, in
// the caller's format), "stale:" first when it is, and "(earlier)" after
// the words of an earlier lookup that binds.
func (f *Finding) Line(ref, when string) string {
	s := f.Kind.Words()
	if f.Earlier {
		s += " (earlier)"
	}
	if (f.Kind == FindingHasIt || f.Kind == FindingHasOther) && ref != "" {
		s += " · " + ref
	}
	s += " " + when
	if f.Stale {
		s = "stale: " + s
	}
	return s
}

// Conclusive reports whether the finding says something definite now:
// has it or has nothing, and not stale. Cannot tell never is.
func (f *Finding) Conclusive() bool {
	return f != nil && !f.Stale && (f.Kind == FindingHasIt || f.Kind == FindingHasNothing)
}

// LatestFinding is the finding of the newest lookup attempt among attempts
// (in any order), stale if an attempt that may have reached the provider
// (Outcome.StalesFinding) came after it; nil if none was recorded.
// provider is the operation's provider. The SQL drivers compute the same
// for lists (store.FindingStaledBySQL).
func LatestFinding(provider string, attempts []Attempt) *Finding {
	var latest *Attempt
	lastOther := 0
	for i := range attempts {
		a := &attempts[i]
		if a.Outcome != OutcomeLookup {
			if a.Outcome.StalesFinding() {
				lastOther = max(lastOther, a.Seq)
			}
			continue
		}
		if latest == nil || a.Seq > latest.Seq {
			latest = a
		}
	}
	if latest == nil {
		return nil
	}
	return &Finding{Kind: latest.Finding, Provider: provider, Ref: latest.ProviderRef, Detail: latest.Detail,
		At: latest.StartedAt, Seq: latest.Seq, By: latest.WorkerID, Stale: lastOther > latest.Seq}
}

// BindingFinding is the finding a decision on an operation is checked
// against, from its attempts (in any order): the newest "has it", never
// stale (a provider never takes a delivery back); else the newest "has
// nothing", stale by LatestFinding's rule; nil if neither was recorded.
// store.Tx.LatestConclusiveFinding is the same rule in SQL.
func BindingFinding(provider string, attempts []Attempt) *Finding {
	var hasIt, nothing *Attempt
	lastOther := 0
	for i := range attempts {
		a := &attempts[i]
		switch {
		case a.Outcome != OutcomeLookup:
			if a.Outcome.StalesFinding() {
				lastOther = max(lastOther, a.Seq)
			}
		case a.Finding == FindingHasIt && (hasIt == nil || a.Seq > hasIt.Seq):
			hasIt = a
		case a.Finding == FindingHasNothing && (nothing == nil || a.Seq > nothing.Seq):
			nothing = a
		}
	}
	b := hasIt
	if b == nil {
		b = nothing
	}
	if b == nil {
		return nil
	}
	return &Finding{Kind: b.Finding, Provider: provider, Ref: b.ProviderRef, Detail: b.Detail,
		At: b.StartedAt, Seq: b.Seq, By: b.WorkerID, Stale: b.Finding != FindingHasIt && lastOther > b.Seq}
}

// EarlierBinding is binding (BindingFinding's) when it binds a decision
// and latest (LatestFinding's) does not say the same: another lookup, or
// the same "has it" that latest calls stale. nil otherwise — what
// Operation.BindingFinding holds.
func EarlierBinding(latest, binding *Finding) *Finding {
	if !binding.Conclusive() || latest == nil {
		return nil
	}
	if latest.Seq == binding.Seq && latest.Stale == binding.Stale {
		return nil
	}
	b := *binding
	b.Earlier = latest.Seq != b.Seq
	return &b
}

// Binding is the finding a decision on op is checked against:
// BindingFinding when set, else Finding.
func (op *Operation) Binding() *Finding {
	if op.BindingFinding != nil {
		return op.BindingFinding
	}
	return op.Finding
}

// Shown is the finding op's FINDING column shows: the earlier lookup that
// binds ("has it (earlier)") when there is one, else the latest — a
// "has it" made stale by a later attempt still reads "stale: has it",
// though it binds as fresh (Binding). A latest lookup that found another
// request under the key is shown whatever came before it: an earlier
// "has it", asked by key alone, may have been about that request.
func (op *Operation) Shown() *Finding {
	if op.Earlier() && (op.Finding == nil || op.Finding.Kind != FindingHasOther) {
		return op.BindingFinding
	}
	return op.Finding
}

// Earlier reports whether op's FINDING column shows an earlier lookup
// than its latest one.
func (op *Operation) Earlier() bool {
	return op.BindingFinding != nil && op.BindingFinding.Earlier
}

// AgeWords spells a non-negative age in one unit, rounded down: 45s, 12m,
// 3h (under two days), 2d — the console's and the CLI's one spelling.
func AgeWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}
