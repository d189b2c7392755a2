package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// R6 D3: an in_progress operation nobody holds — its claim released, or
// its lease ended — is settled from the command line as an unknown one
// is: ops show says so and what to run, ops resolve and ops supersede take
// it (asking the provider first, as for unknown). One whose lease is live
// is refused, naming when the lease ends, and nothing is written.
func TestOpsDecideAnInProgressNobodyHolds(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	killWorker(t, db, "gone", "sandbox", "after-claim", "1ms")     // its lease ends at once, nothing sent
	killWorker(t, db, "gone2", "sandbox", "after-claim", "1ms")    // the same
	killWorker(t, db, "held", "sandbox-idem", "after-claim", "1h") // a worker holds it
	for _, k := range []string{"rel", "rel2"} {                    // delivered, the reply lost: released
		if _, errText, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--provider", "sandbox-idem", "--fault", "lose-reply")...); code != 4 {
			t.Fatalf("setup %s: exit %d %s", k, code, errText)
		}
	}
	for _, c := range []struct {
		key  string
		says []string // ops show
	}{
		{"gone", []string{"nobody holds its claim", "ops resolve", "ops supersede", "ops check"}},
		{"rel", []string{"nobody holds its claim", "released", "ops resolve"}},
		{"held", []string{"no decision yet", "held by", "until"}},
	} {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", c.key, code, errText)
		}
		for _, w := range c.says {
			if !strings.Contains(out, w) {
				t.Errorf("ops show %s does not say %q:\n%s", c.key, w, out)
			}
		}
	}
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		state model.State // after
		says  string      // on stderr or stdout
	}{
		{"not applied, lease ended, the provider has nothing", []string{"ops", "resolve", "--key", "gone", "--as", "not-applied", "--evidence", "INC-1: never left", "--reason", "worker died before sending"}, 0, model.StateNotApplied, ""},
		{"applied, released", []string{"ops", "resolve", "--key", "rel", "--as", "applied", "--evidence", "sbx_1", "--reason", "provider console shows it"}, 0, model.StateApplied, ""},
		{"not applied, released, the provider has it", []string{"ops", "resolve", "--key", "rel2", "--as", "not-applied", "--evidence", "INC-2", "--reason", "r"}, 2, model.StateInProgress, "has it"},
		{"new key, lease ended", []string{"ops", "supersede", "--key", "gone2", "--reason", "send again deliberately", "--new-key", "gone2-b"}, 0, model.StateSuperseded, "gone2-b"},
		{"applied, lease live", []string{"ops", "resolve", "--key", "held", "--as", "applied", "--evidence", "sbx_9", "--reason", "r"}, 2, model.StateInProgress, "lease runs until"},
		{"new key, lease live", []string{"ops", "supersede", "--key", "held", "--reason", "r"}, 2, model.StateInProgress, "nothing was written"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := c.args[3]
			before := opOf(t, db, key)
			args := append(append([]string{}, c.args...), "--db", db, "--tenant", "acme", "--operator", "oncall")
			out, errText, code := cli(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errText)
			}
			if c.says != "" && !strings.Contains(out+errText, c.says) {
				t.Errorf("does not say %q:\n%s%s", c.says, out, errText)
			}
			after := opOf(t, db, key)
			if after.State != c.state {
				t.Errorf("%s after; want %s", after.State, c.state)
			}
			if c.code != 0 && after.Version != before.Version {
				t.Errorf("a refused decision moved it: v%d → v%d", before.Version, after.Version)
			}
		})
	}
}

func opOf(t *testing.T, db, key string) *model.Operation {
	t.Helper()
	st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	op, err := st.Get(context.Background(), "acme", key)
	if err != nil {
		t.Fatal(err)
	}
	return op
}
