package model_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// The seven states of DESIGN.md, spelled as the design spells them. If a
// state is added to the model without being designed (or the reverse), this
// test is the place that says so.
var designStates = []string{"in_progress", "applied", "failed", "not_applied", "unknown", "superseded", "authorized"}

func TestAllStatesIsExactlyTheDesignedSeven(t *testing.T) {
	got := map[string]bool{}
	for _, s := range model.AllStates {
		if got[string(s)] {
			t.Errorf("AllStates lists %q twice", s)
		}
		got[string(s)] = true
		if !s.Valid() {
			t.Errorf("%q is in AllStates but not Valid()", s)
		}
	}
	if len(got) != len(designStates) {
		t.Errorf("AllStates has %d states, DESIGN.md has %d", len(got), len(designStates))
	}
	for _, s := range designStates {
		if !got[s] {
			t.Errorf("designed state %q is missing from AllStates", s)
		}
	}
	if model.State("bogus").Valid() || model.State("").Valid() {
		t.Error("a state outside AllStates is Valid()")
	}
	// The console shows the states that need a person first.
	if model.AllStates[0] != model.StateUnknown {
		t.Errorf("AllStates starts with %q; unknown must come first", model.AllStates[0])
	}
}

func TestParseStateAcceptsNamesAndDashedSpellingsOnly(t *testing.T) {
	for _, s := range model.AllStates {
		for _, spelling := range []string{string(s), strings.ReplaceAll(string(s), "_", "-")} {
			got, err := model.ParseState(spelling)
			if err != nil || got != s {
				t.Errorf("ParseState(%q) = %q, %v; want %q", spelling, got, err, s)
			}
		}
	}
	for _, bad := range []string{"", "Applied", "done", "not applied", "unknown "} {
		if _, err := model.ParseState(bad); !model.IsCode(err, model.CodeInvalid) {
			t.Errorf("ParseState(%q) error = %v; want an invalid-input error", bad, err)
		}
	}
}

func TestFinalStatesAreTheOnesNoCallMoves(t *testing.T) {
	want := map[model.State]bool{model.StateApplied: true, model.StateFailed: true, model.StateSuperseded: true}
	for _, s := range model.AllStates {
		if s.Final() != want[s] {
			t.Errorf("%s.Final() = %v, want %v", s, s.Final(), want[s])
		}
	}
}

func TestOutcomesAndActionsAreDistinctAndValid(t *testing.T) {
	seen := map[model.Outcome]bool{}
	for _, o := range model.AllOutcomes {
		if seen[o] || !o.Valid() {
			t.Errorf("outcome %q duplicated or not Valid()", o)
		}
		seen[o] = true
	}
	if model.Outcome("exploded").Valid() {
		t.Error("an outcome outside AllOutcomes is Valid()")
	}
	// The attempt history must be able to say each thing DESIGN.md lists.
	for _, o := range []model.Outcome{"created", "replayed", "conflict", "in_progress", "dispatched", "timed_out", "late_result"} {
		if !seen[o] {
			t.Errorf("DESIGN.md's attempt outcome %q is missing", o)
		}
	}
	acts := map[model.Action]bool{}
	for _, a := range model.AllActions {
		if acts[a] || !a.Valid() {
			t.Errorf("action %q duplicated or not Valid()", a)
		}
		acts[a] = true
	}
	if len(acts) != 3 || model.Action("delete").Valid() {
		t.Errorf("actions = %v; want exactly mark applied, mark not applied, authorize new key", model.AllActions)
	}
}

// The exit codes are the `call` contract of the README; the runner branches
// on them, so each class has its own and only two classes are retryable.
func TestClassExitCodesAndRetryability(t *testing.T) {
	want := map[model.Class]struct {
		code      int
		retryable bool
	}{
		model.ClassDone: {0, false}, model.ClassInternal: {1, true}, model.ClassInvalid: {2, false},
		model.ClassConflict: {3, false}, model.ClassInProgress: {4, true}, model.ClassUnknown: {5, false},
		model.ClassSuperseded: {6, false}, model.ClassExpired: {7, false}, model.ClassFailed: {8, false},
	}
	if len(model.AllClasses) != len(want) {
		t.Fatalf("AllClasses has %d classes, the contract %d", len(model.AllClasses), len(want))
	}
	for _, c := range model.AllClasses {
		w, ok := want[c]
		if !ok {
			t.Errorf("class %q is not in the exit-code contract", c)
			continue
		}
		if c.ExitCode() != w.code || c.Retryable() != w.retryable {
			t.Errorf("%s: exit %d retryable %v; want exit %d retryable %v", c, c.ExitCode(), c.Retryable(), w.code, w.retryable)
		}
	}
}
