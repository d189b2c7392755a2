package lab

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// On a terminal narrower than the table (its lines run to ~200 columns
// and one result to ~570), the lab prints one block per scenario, its
// long texts wrapped to the width, and loses no word; width 0 (not a
// terminal) keeps the wide table.
func TestLabTableFitsTheTerminalWidth(t *testing.T) {
	long := "lookup cannot tell: a request sent at 2026-12-03T17:04:03Z, waited for until 2026-12-03T17:04:33Z, may still be applied by the provider (the provider does not stop processing, and may apply it later)"
	rows := []Row{
		{Scenario: "before-commit-same-key", Before: 0, After: 1, Expected: "0 → 1", OK: true, FirstCall: "stops before commit",
			NextAttempt: "same key, same report", Ledger: "op-a: applied [created]", FirstResult: "exit 17, no reply", NextResult: "created job 1, exit 0"},
		{Scenario: "authorize-new-key", Before: 0, After: 1, Expected: "0 → 1; old key told the new key", OK: false, FirstCall: "killed after claim, before dispatch",
			NextAttempt: "new key authorized; old key, then new key", Ledger: "op-a: superseded [dispatched lease_expired lookup refused] +authorize_new_key; op-b: applied [applied replayed]",
			FirstResult: "killed by SIGKILL, no reply", NextResult: long, Failures: []string{"effects 2, want 1"}},
	}
	var wide bytes.Buffer
	WriteTable(&wide, rows)
	for _, width := range []int{120, 80, 60} {
		var b bytes.Buffer
		WriteTableWidth(&b, rows, width)
		for _, line := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: a line of %d columns: %q", width, n, line)
			}
		}
		got := strings.Join(strings.Fields(b.String()), " ")
		for _, r := range rows {
			for _, s := range []string{r.Scenario, r.Expected, r.FirstCall, r.NextAttempt, r.Ledger, r.FirstResult, r.NextResult, "FAIL", "effects 2, want 1"} {
				if !strings.Contains(got, strings.Join(strings.Fields(s), " ")) {
					t.Errorf("width %d: %q is missing:\n%s", width, s, b.String())
				}
			}
		}
	}
	var b bytes.Buffer
	WriteTableWidth(&b, rows, 0)
	if b.String() != wide.String() {
		t.Errorf("width 0 (not a terminal) changed the table:\n%s", b.String())
	}
}

// A word that does not fit after the first line's prefix goes to the next
// line whole ("ef" / "fects" at 30 columns read as two words).
func TestWrappedTextMovesAWordRatherThanCuttingIt(t *testing.T) {
	var b strings.Builder
	writeWrapped(&b, "before-commit-same-key  ok  ", "  ", "effects 0 → 1", 30)
	got := b.String()
	if want := "before-commit-same-key  ok\n  effects 0 → 1\n"; got != want {
		t.Fatalf("wrapped:\n%q\nwant\n%q", got, want)
	}
}
