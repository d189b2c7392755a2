package cli

import (
	"encoding/json"
	"reflect"
	"testing"
)

// ops resolve --json (one key) and ops supersede --json print the
// operation as ops show --json gives it — its attempt count and latest
// finding too, not attempt_count 0 and no finding.
func TestDecisionJSONIsTheOperationAsOpsShowGivesIt(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"r-1", "s-1"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
		if _, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", k); code != 0 {
			t.Fatalf("check %s: %s", k, errText)
		}
	}
	for _, c := range []struct {
		name, key string
		args      []string
		field     string // where the operation is in the output ("": the whole line)
	}{
		{name: "resolve", key: "r-1", args: []string{"ops", "resolve", "--as", "applied", "--reason", "r", "--evidence", "sbx_1", "--json"}},
		{name: "supersede", key: "s-1", args: []string{"ops", "supersede", "--reason", "again", "--json"}, field: "operation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--db", db, "--tenant", "acme", "--key", c.key)
			if c.name == "supersede" {
				args = append(args, "--against-finding="+shownDigest(t, db, c.key))
			}
			out, errText, code := cli(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errText)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if c.field != "" {
				got, _ = got[c.field].(map[string]any)
			}
			show, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key, "--json")
			var d map[string]any
			if err := json.Unmarshal([]byte(show), &d); err != nil {
				t.Fatal(err)
			}
			want := d["operation"].(map[string]any)
			if got["attempt_count"] != want["attempt_count"] || got["finding"] == nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("printed:\n%v\nops show:\n%v", got, want)
			}
		})
	}
}
