package model_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
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

// sqlCheckLists reads the IN (...) list of every CHECK on column in one
// driver's migrations (store/DRIVER/migrations); the last migration that
// mentions it wins.
func sqlCheckLists(t *testing.T, driver string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(driver, "migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found in %s: %v", driver, err)
	}
	sort.Strings(files)
	re := regexp.MustCompile(`CHECK\s*\(\s*(\w+)\s+IN\s*\(([^)]*)\)`)
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			var vals []string
			for _, v := range strings.Split(m[2], ",") {
				vals = append(vals, strings.Trim(strings.TrimSpace(v), "'"))
			}
			out[m[1]] = vals
		}
	}
	return out
}

func sameSet(t *testing.T, what string, sqlVals []string, modelVals []string) {
	t.Helper()
	a := append([]string(nil), sqlVals...)
	b := append([]string(nil), modelVals...)
	sort.Strings(a)
	sort.Strings(b)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("%s: SQL CHECK lists %v, the model lists %v", what, a, b)
	}
}

// The SQL CHECK constraints and the Go lists must agree both ways: a state
// the model can produce but SQL refuses fails at runtime; a state SQL allows
// but the model does not know is data nobody can read. (store's tests insert
// each value into a real ledger; this one reads the migration text.)
// Every driver's migrations are checked.
func TestSQLCheckListsMatchTheModel(t *testing.T) {
	drivers, _ := filepath.Glob(filepath.Join("..", "store", "*", "migrations"))
	if len(drivers) == 0 {
		t.Fatal("no driver migrations found under store/")
	}
	for _, d := range drivers {
		t.Run(filepath.Base(filepath.Dir(d)), func(t *testing.T) { checkListsMatch(t, sqlCheckLists(t, filepath.Dir(d))) })
	}
}

func checkListsMatch(t *testing.T, lists map[string][]string) {
	var states, outcomes, actions []string
	for _, s := range model.AllStates {
		states = append(states, string(s))
	}
	for _, o := range model.AllOutcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, a := range model.AllActions {
		actions = append(actions, string(a))
	}
	var findings []string
	for _, f := range model.AllFindingKinds {
		findings = append(findings, string(f))
	}
	for col, want := range map[string][]string{"state": states, "final_state": states, "outcome": outcomes, "action": actions, "finding": findings} {
		got, ok := lists[col]
		if !ok {
			t.Errorf("no CHECK (%s IN (...)) found in the migrations", col)
			continue
		}
		sameSet(t, col, got, want)
	}
}
