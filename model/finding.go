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
)

// AllFindingKinds is every finding kind, in the order the console shows them.
var AllFindingKinds = []FindingKind{FindingHasIt, FindingHasNothing, FindingCannotTell}

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
	}
	return "not checked"
}

// FindingFilter selects operations by their latest finding.
type FindingFilter string

const (
	FilterAnyFinding  FindingFilter = ""
	FilterHasIt       FindingFilter = FindingFilter(FindingHasIt)
	FilterHasNothing  FindingFilter = FindingFilter(FindingHasNothing)
	FilterCannotTell  FindingFilter = FindingFilter(FindingCannotTell)
	FilterNotChecked  FindingFilter = "not_checked"
	filterWordsAnyAll               = "any"
)

// AllFindingFilters is every filter but "any", in the console's cycle order.
var AllFindingFilters = []FindingFilter{FilterHasIt, FilterHasNothing, FilterCannotTell, FilterNotChecked}

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
	return "", Errorf(CodeInvalid, "unknown finding %q (want has-it, has-nothing, cannot-tell, not-checked or any)", s)
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
	// Stale: made before the operation's latest non-lookup attempt, so the
	// provider may know more now.
	Stale bool `json:"stale"`
}

// Line is the finding in one line, as the console's and ops list's FINDING
// columns show it: what it found, the provider's reference after a "has
// it" (ref: the caller makes it inert and short), how long ago (when, in
// the caller's format), and "stale:" first when it is.
func (f *Finding) Line(ref, when string) string {
	s := f.Kind.Words()
	if f.Kind == FindingHasIt && ref != "" {
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
// (in any order), stale if a non-lookup attempt came after it; nil if none
// was recorded. provider is the operation's provider. The SQL drivers
// compute the same for lists.
func LatestFinding(provider string, attempts []Attempt) *Finding {
	var latest *Attempt
	lastOther := 0
	for i := range attempts {
		a := &attempts[i]
		if a.Outcome != OutcomeLookup {
			lastOther = max(lastOther, a.Seq)
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
