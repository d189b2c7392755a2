package model_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

func TestAgeWordsSpellsOneUnitRoundedDown(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{59*time.Minute + 59*time.Second, "59m"},
		{time.Hour, "1h"},
		{47*time.Hour + 59*time.Minute, "47h"},
		{48 * time.Hour, "2d"},
		{400 * 24 * time.Hour, "400d"},
	} {
		if got := model.AgeWords(c.d); got != c.want {
			t.Errorf("AgeWords(%v) = %q; want %q", c.d, got, c.want)
		}
	}
}

// Every outcome is classified on purpose: whether an attempt with it,
// recorded after a lookup, makes that lookup's finding stale. Only an
// attempt that sent nothing to the provider and learnt nothing from it
// leaves the finding standing. A new outcome fails here until it is added.
func TestEveryOutcomeIsClassifiedForStaleness(t *testing.T) {
	stales := map[model.Outcome]string{
		model.OutcomeCreated:      "a local effect committed: what the ledger holds changed",
		model.OutcomeDispatched:   "the request is sent, or about to be",
		model.OutcomeRedispatched: "the sweep sent it again",
		model.OutcomeApplied:      "the provider answered",
		model.OutcomeFailed:       "the provider answered",
		model.OutcomeNotApplied:   "the provider answered (or the claim's lease ended before it left)",
		model.OutcomeTimedOut:     "sent, no definite answer: it may still land",
		model.OutcomeLateResult:   "the provider answered after the claim moved on",
		model.OutcomeLeaseExpired: "a claim whose request may still land went unknown",
		model.OutcomeInProgress:   "also a dispatched attempt the provider answered busy (and kept under its key)",
	}
	stays := map[model.Outcome]string{
		model.OutcomeReplayed: "the stored receipt was returned; nothing sent",
		model.OutcomeConflict: "different arguments; nothing sent",
		model.OutcomeRefused:  "told to stop or use the new key; nothing sent",
		model.OutcomeExpired:  "past the replay window; nothing sent",
		model.OutcomeLookup:   "a lookup is a finding itself; a newer one replaces it",
	}
	for _, o := range model.AllOutcomes {
		_, s := stales[o]
		_, k := stays[o]
		if s == k {
			t.Errorf("outcome %q is not classified exactly once here (stales %v, stays %v)", o, s, k)
			continue
		}
		if got := o.StalesFinding(); got != s {
			t.Errorf("%q.StalesFinding() = %v; want %v", o, got, s)
		}
	}
	if n := len(stales) + len(stays); n != len(model.AllOutcomes) {
		t.Errorf("classified %d outcomes; AllOutcomes has %d", n, len(model.AllOutcomes))
	}
	if !model.Outcome("bogus").StalesFinding() {
		t.Error("an unknown outcome leaves a finding standing; it must stale it (it may have reached the provider)")
	}
	var neutral []model.Outcome
	for _, o := range model.AllOutcomes {
		if _, ok := stays[o]; ok {
			neutral = append(neutral, o)
		}
	}
	if got := model.FindingNeutralOutcomes(); fmt.Sprint(got) != fmt.Sprint(neutral) {
		t.Errorf("FindingNeutralOutcomes() = %v; want %v", got, neutral)
	}
}

// A "has nothing" (or "has it") followed by an attempt that sent nothing
// is not stale; followed by one that may have reached the provider it is,
// in LatestFinding and BindingFinding alike — where a "has it" binds
// however many attempts came after it.
func TestFindingStaleOnlyAfterAnAttemptThatMayHaveReachedTheProvider(t *testing.T) {
	for _, o := range model.AllOutcomes {
		if o == model.OutcomeLookup {
			continue
		}
		for _, kind := range []model.FindingKind{model.FindingHasNothing, model.FindingHasIt, model.FindingCannotTell} {
			atts := []model.Attempt{
				// In no particular order: the rule reads seq.
				{Seq: 3, Outcome: o},
				{Seq: 1, Outcome: model.OutcomeDispatched},
				{Seq: 2, Outcome: model.OutcomeLookup, Finding: kind},
				{Seq: 4, Outcome: model.OutcomeRefused},
			}
			want := o.StalesFinding()
			if l := model.LatestFinding("sandbox", atts); l == nil || l.Seq != 2 || l.Stale != want {
				t.Errorf("%s then %s: latest %+v; want #2, stale %v", kind, o, l, want)
			}
			b := model.BindingFinding("sandbox", atts)
			switch kind {
			case model.FindingCannotTell:
				if b != nil {
					t.Errorf("%s then %s: binding %+v; want none", kind, o, b)
				}
			case model.FindingHasIt:
				if b == nil || b.Seq != 2 || b.Stale {
					t.Errorf("%s then %s: binding %+v; want #2, never stale", kind, o, b)
				}
			default:
				if b == nil || b.Seq != 2 || b.Stale != want {
					t.Errorf("%s then %s: binding %+v; want #2, stale %v", kind, o, b, want)
				}
			}
		}
	}
	// Explicitly, the cases the rule is for.
	for o, want := range map[model.Outcome]bool{
		model.OutcomeRefused: false, model.OutcomeReplayed: false, model.OutcomeConflict: false, model.OutcomeExpired: false,
		model.OutcomeDispatched: true, model.OutcomeTimedOut: true, model.OutcomeRedispatched: true, model.OutcomeInProgress: true,
	} {
		atts := []model.Attempt{{Seq: 1, Outcome: model.OutcomeLookup, Finding: model.FindingHasNothing}, {Seq: 2, Outcome: o}}
		if f := model.LatestFinding("p", atts); f.Stale != want {
			t.Errorf("has nothing then %s: stale %v; want %v", o, f.Stale, want)
		}
	}
}
