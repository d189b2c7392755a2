package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// ops list's FINDING column says what each operation's latest provider
// lookup found, in the console's words, with its age: has it · ref, has
// nothing, cannot tell, not checked, "stale:" when an attempt that may
// have reached the provider came after it (a refused retry does not), and
// "-" for a local operation. The provider's words are made inert. --json carries the same finding in each operation (the stable
// shape, extended), and --finding filters by it.
func TestOpsListShowsFindings(t *testing.T) {
	db := newLedgerFile(t)
	for _, k := range []string{"f-has", "f-nothing", "f-cannot", "f-stale", "f-never", "f-evil"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	if _, _, code := cli(t, callArgs(db, "acme", "f-local", "create_support_task", taskArgs("local"))...); code != 0 {
		t.Fatal("local call failed")
	}
	// The real paths: ops check records has it, or cannot tell when the
	// provider's file is missing.
	for _, k := range []string{"f-has", "f-stale"} {
		if _, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", k, "--operator", "oncall"); code != 0 {
			t.Fatalf("ops check %s: exit %d %s", k, code, errText)
		}
	}
	if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "f-cannot",
		"--provider-db", filepath.Join(t.TempDir(), "missing.db")); code != 2 {
		t.Fatalf("ops check without the provider's file: exit %d", code)
	}
	// A retry of the key after the check is refused and sends nothing;
	// a late answer from the provider after it makes the finding stale.
	if _, _, code := cli(t, callArgs(db, "acme", "f-stale", "send_notification", notifyArgs)...); code != 5 {
		t.Fatalf("retry of an unknown key: exit %d", code)
	}
	recordLateAnswer(t, db, "acme", "f-stale")
	// What the sandbox cannot be made to say — nothing under a key it
	// was sent, a reference full of escapes — is written as a lookup
	// attempt through the store, as a provider's lookup would be.
	st, err := ledger.OpenStore(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for key, a := range map[string]model.Attempt{
		"f-nothing": {Finding: model.FindingHasNothing, Detail: "no delivery under the key"},
		"f-evil":    {Finding: model.FindingHasIt, ProviderRef: "ref\x1b]0;pwned\x07\u202e"},
	} {
		op, err := st.Get(context.Background(), "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		a.OperationID, a.Outcome, a.Fingerprint, a.WorkerID, a.StartedAt = op.ID, model.OutcomeLookup, op.Fingerprint, "test", time.Now()
		if err := st.WithAttemptTx(context.Background(), func(tx store.Tx) error { return tx.InsertAttempt(&a) }); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	// A refused retry after the "has nothing" sent nothing: that finding
	// is not stale (only f-stale's is, below).
	if _, _, code := cli(t, callArgs(db, "acme", "f-nothing", "send_notification", notifyArgs)...); code != 5 {
		t.Fatalf("retry of an unknown key: exit %d", code)
	}

	out, errText, code := cli(t, "ops", "list", "--db", db)
	if code != 0 {
		t.Fatalf("ops list: exit %d %s", code, errText)
	}
	inert(t, "ops list", out)
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "FINDING") {
		t.Fatalf("no FINDING column:\n%s", out)
	}
	col := strings.Index(lines[0], "FINDING")
	cell := func(key string) string {
		t.Helper()
		for _, l := range lines[1:] {
			if strings.Contains(l, " "+key+" ") && len(l) > col {
				return l[col:]
			}
		}
		t.Fatalf("no row for %s:\n%s", key, out)
		return ""
	}
	age := regexp.MustCompile(`^[^ ].* (now|[0-9]+[smhd] ago) `)
	for key, want := range map[string][]string{
		"f-has":     {"has it · sbx_", "AGE"},
		"f-nothing": {"has nothing", "AGE"},
		"f-cannot":  {"cannot tell", "AGE"},
		"f-stale":   {"stale: has it · sbx_", "AGE"},
		"f-never":   {"not checked"},
		"f-local":   {"- "},
		"f-evil":    {`has it · ref\x1b]0;pwned`},
	} {
		c := cell(key)
		for _, w := range want {
			if w == "AGE" {
				// How long ago, in one unit (the test makes no claim on
				// how fast it ran).
				if !age.MatchString(c) {
					t.Errorf("%s: FINDING %q says no age", key, c)
				}
				continue
			}
			if !strings.HasPrefix(c, w) {
				t.Errorf("%s: FINDING %q; want %q", key, c, w)
			}
		}
		if key != "f-stale" && strings.HasPrefix(c, "stale") {
			t.Errorf("%s: %q is not stale", key, c)
		}
	}

	// JSON: each operation's finding, the provider's reference exactly as
	// stored; the stale one marked.
	out, _, code = cli(t, "ops", "list", "--db", db, "--json")
	var p listPage
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != 0 {
		t.Fatalf("--json: exit %d %v", code, err)
	}
	got := map[string]*model.Finding{}
	for _, op := range p.Operations {
		got[op.Key] = op.Finding
	}
	if f := got["f-evil"]; f == nil || f.Ref != "ref\x1b]0;pwned\x07\u202e" || f.Kind != model.FindingHasIt {
		t.Errorf("f-evil's finding in JSON: %+v", f)
	}
	if f := got["f-stale"]; f == nil || !f.Stale || f.By != "ops check by oncall" {
		t.Errorf("f-stale's finding in JSON: %+v", f)
	}
	if got["f-never"] != nil || got["f-local"] != nil {
		t.Errorf("never checked, yet a finding: %+v %+v", got["f-never"], got["f-local"])
	}

	// --finding filters by the latest finding.
	for filter, want := range map[string]string{
		"has-it":      "f-evil,f-stale,f-has",
		"has-nothing": "f-nothing",
		"cannot-tell": "f-cannot",
		"not-checked": "f-local,f-never",
	} {
		out, errText, code := cli(t, "ops", "list", "--db", db, "--finding", filter, "--json")
		var p listPage
		if err := json.Unmarshal([]byte(out), &p); err != nil || code != 0 {
			t.Fatalf("--finding %s: exit %d %v %s", filter, code, err, errText)
		}
		var keys []string
		for _, op := range p.Operations {
			keys = append(keys, op.Key)
		}
		if strings.Join(keys, ",") != want {
			t.Errorf("--finding %s: %v; want %s", filter, keys, want)
		}
	}
	if _, errText, code := cli(t, "ops", "list", "--db", db, "--finding", "maybe"); code != 2 || !strings.Contains(errText, "--finding") {
		t.Errorf("--finding maybe: exit %d %q", code, errText)
	}

	// ops show says the same: the finding, and each lookup's finding and
	// the provider's words in the attempts.
	for key, want := range map[string][]string{
		"f-stale":   {"finding         stale (an attempt that may have reached the provider came after it; check again): has it · sbx_", "ops check by oncall", "lookup: has it"},
		"f-cannot":  {"finding         cannot tell: ", "lookup: cannot tell", "missing.db"},
		"f-nothing": {"finding         has nothing — ", "lookup: has nothing", "no delivery under the key"},
		"f-evil":    {`finding         has it · ref\x1b]0;pwned\x07\u202e — `},
		"f-never":   {"finding         not checked"},
	} {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", key, code, errText)
		}
		inert(t, "ops show "+key, out)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("ops show %s does not say %q:\n%s", key, w, out)
			}
		}
	}
}
