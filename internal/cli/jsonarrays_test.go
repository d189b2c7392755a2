package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// A list in JSON output is an array even when it is empty — never null
// (M3: triage --json printed "providers": null with no candidates; the
// README documents an array).
func TestJSONListsAreArraysWhenEmpty(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "t1", "create_support_task", taskArgs("s"))...); code != 0 {
		t.Fatalf("setup call exit %d", code)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		arrays []string // top-level fields that must be arrays
	}{
		{"triage, no candidates", []string{"triage", "--db", db, "--json", "--tenant", "nobody"}, []string{"providers", "findings"}},
		{"triage read-only, no candidates", []string{"triage", "--db", db, "--json", "--read-only"}, []string{"providers", "findings"}},
		{"ops list, none", []string{"ops", "list", "--db", db, "--json", "--tenant", "nobody"}, []string{"operations"}},
		{"ops show of an applied operation", []string{"ops", "show", "--db", db, "--json", "--tenant", "acme", "--key", "t1"}, []string{"attempts", "decisions", "actions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errText, code := cli(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errText)
			}
			if strings.Contains(out, "null") {
				t.Errorf("output has a null:\n%s", out)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			for _, f := range tc.arrays {
				if v := strings.TrimSpace(string(m[f])); !strings.HasPrefix(v, "[") {
					t.Errorf("%q is %s, want an array", f, v)
				}
			}
		})
	}
	out, _, _ := cli(t, "ops", "decisions", "--db", db, "--json", "--tenant", "nobody")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("ops decisions --json with none: %q, want []", out)
	}
}
