package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// ops resolve on several operations: without --dry-run or --yes nothing
// happens; --dry-run lists each from → to and writes nothing; --yes writes
// each as its own compare-and-set and prints its result.
func TestOpsResolveSeveralDryRunThenYes(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"u-1", "u-2", "u-3"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	decisions := func() int {
		st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		n := 0
		for _, k := range []string{"u-1", "u-2", "u-3"} {
			d, err := st.Detail(context.Background(), "acme", k)
			if err != nil {
				t.Fatal(err)
			}
			n += len(d.Decisions)
		}
		return n
	}
	// The provider cannot be asked (no such file): each lookup made first
	// cannot tell, and the decision stays the operator's.
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--state", "unknown", "--as", "not-applied",
		"--reason", "provider incident INC-7: their queue dropped everything", "--evidence", "INC-7", "--operator", "alice",
		"--provider-db", filepath.Join(t.TempDir(), "missing.db")}
	if _, errText, code := cli(t, base...); code != 2 || !strings.Contains(oneErrorLine(t, "no mode", errText), "--dry-run") {
		t.Fatalf("without --dry-run/--yes: exit %d %q", code, errText)
	}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "u-1") || !strings.Contains(out, "unknown (v2) → not_applied") ||
		!strings.Contains(out, "dry run: mark not applied 3 operations; 3 of them are on the typed evidence alone: the provider cannot tell (the sandbox provider's file") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	if n := decisions(); n != 0 {
		t.Fatalf("the dry run wrote %d decisions", n)
	}
	out, errText, code = cli(t, append(base, "--yes")...)
	if code != 0 || strings.Count(out, "written") != 3 || !strings.Contains(errText, "3 decisions written") {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, errText)
	}
	if n := decisions(); n != 3 {
		t.Fatalf("%d decisions after --yes", n)
	}
	// Pinned versions: u-1 moved on (it is v3 now), so @2 is refused as
	// stale; nothing is written for it, and the exit code says so.
	out, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "u-1@2", "--key", "u-2@3",
		"--as", "applied", "--reason", "r", "--evidence", "sbx_1", "--yes")
	if code != 2 || !strings.Contains(out, "stale") || !strings.Contains(out, "illegal") || !strings.Contains(errText, "0 of 2 written") {
		t.Fatalf("pinned: exit %d\n%s%s", code, out, errText)
	}
	if n := decisions(); n != 3 {
		t.Fatalf("refused decisions wrote: %d", n)
	}
}

// ops decisions is the audit log: newest first, filters, JSON.
func TestOpsDecisionsListsTheAuditLog(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"a-1", "a-2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "a-1", "--as", "applied",
		"--reason", "found it", "--evidence", "sbx_1", "--operator", "alice"); code != 0 {
		t.Fatal(errText)
	}
	// The provider's "has it" seen first: --against-finding confirms only
	// a finding recorded before its run.
	cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "a-2")
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "a-2", "--as", "not-applied",
		"--reason", "nothing there", "--evidence", "INC-9", "--operator", "bob", "--against-finding="+shownDigest(t, db, "a-2")); code != 0 {
		t.Fatal(errText)
	}
	out, _, code := cli(t, "ops", "decisions", "--db", db)
	if code != 0 || strings.Index(out, "a-2") > strings.Index(out, "a-1") || !strings.Contains(out, "unknown (v2) → applied") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, _, code = cli(t, "ops", "decisions", "--db", db, "--operator", "bob", "--action", "not-applied", "--json")
	var es []map[string]any
	if err := json.Unmarshal([]byte(out), &es); err != nil || code != 0 || len(es) != 1 || es[0]["key"] != "a-2" || es[0]["evidence"] != "INC-9" {
		t.Fatalf("json: exit %d %v\n%s", code, err, out)
	}
	if _, errText, code := cli(t, "ops", "decisions", "--db", db, "--action", "delete"); code != 2 {
		t.Fatalf("bad --action: exit %d %q", code, errText)
	}
}

// ops resolve --check: the provider's finding under the console's rule. A
// lookup that found the delivery blocks "not applied" unless
// --against-finding; it is the evidence of "applied".
func TestOpsResolveCheckUsesTheFinding(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"c-1", "c-2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup: exit %d", code)
		}
	}
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--check", "--operator", "alice"}
	_, errText, code := cli(t, append(base, "--key", "c-1", "--as", "not-applied", "--reason", "customer says no", "--evidence", "ticket 1")...)
	if code != 2 || !strings.Contains(errText, "the provider check found the effect") || !strings.Contains(errText, "--against-finding") {
		t.Fatalf("not applied against a delivery: exit %d %q", code, errText)
	}
	out, errText, code := cli(t, append(base, "--key", "c-1", "--as", "not-applied", "--reason", "customer says no", "--evidence", "ticket 1", "--against-finding="+digestIn(t, errText))...)
	if code != 0 || !strings.Contains(out, "unknown → not_applied") {
		t.Fatalf("with --against-finding: exit %d %q %q", code, out, errText)
	}
	out, errText, code = cli(t, append(base, "--key", "c-2", "--as", "applied", "--reason", "provider has it")...)
	if code != 0 || !strings.Contains(out, "unknown → applied") {
		t.Fatalf("applied on the finding: exit %d %q %q", code, out, errText)
	}
	_, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "c-2", "--as", "applied", "--reason", "r",
		"--check", "--provider-db", filepath.Join(t.TempDir(), "missing.db"))
	if code != 2 || !strings.Contains(errText, "cannot tell") {
		t.Fatalf("no provider file: exit %d %q", code, errText)
	}
}

// ops resolve --check records its finding, as ops check and triage do: the
// audit trail shows what the provider said when the decision was made —
// the lookup, then the decision resting on it. A check that cannot tell is
// recorded as such and decides nothing; a command line that is wrong
// whatever the provider says asks nothing and records nothing.
func TestOpsResolveCheckRecordsItsFinding(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"r-1", "r-2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup: exit %d", code)
		}
	}
	detail := func(key string) (d model.Detail, lookups []model.Attempt) {
		t.Helper()
		out, _, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key, "--json")
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 {
			t.Fatalf("ops show %s: exit %d %v", key, code, err)
		}
		for _, a := range d.Attempts {
			if a.Outcome == model.OutcomeLookup {
				lookups = append(lookups, a)
			}
		}
		return d, lookups
	}
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--check", "--operator", "alice"}

	// Wrong whatever the provider says: nothing asked, nothing recorded.
	for _, c := range [][]string{
		{"--key", "r-1", "--as", "applied"},                                          // no reason
		{"--key", "r-1", "--as", "applied", "--reason", "r", "--operator", "a\x1bb"}, // operator not printable
		{"--key", "r-1", "--as", "applied", "--reason", "r", "--evidence", "e\x07v"}, // evidence not printable
		{"--key", "nope", "--as", "applied", "--reason", "r"},                        // no such operation
	} {
		before := digest(t, db)
		if _, errText, code := cli(t, append(base, c...)...); code != 2 {
			t.Errorf("%q: exit %d %q; want 2", c, code, errText)
		}
		if digest(t, db) != before {
			t.Errorf("%q: a refused resolve --check wrote something", c)
		}
	}

	// Cannot tell: recorded as such, exit 2, the state untouched.
	_, errText, code := cli(t, append(base, "--key", "r-1", "--as", "applied", "--reason", "r",
		"--provider-db", filepath.Join(t.TempDir(), "missing.db"))...)
	if code != 2 || !strings.Contains(errText, "cannot tell") || !strings.Contains(errText, "recorded as a finding") {
		t.Fatalf("no provider file: exit %d %q", code, errText)
	}
	d, lookups := detail("r-1")
	if d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 || len(lookups) != 1 ||
		lookups[0].Finding != model.FindingCannotTell || lookups[0].WorkerID != "ops resolve --check by alice" {
		t.Fatalf("after cannot tell: %s, %d decisions, lookups %+v", d.Operation.State, len(d.Decisions), lookups)
	}

	// Has it: recorded, then the decision rests on it (its reference is
	// the evidence), the lookup before the decision.
	out, errText, code := cli(t, append(base, "--key", "r-1", "--as", "applied", "--reason", "provider has it")...)
	if code != 0 || !strings.Contains(out, "unknown → applied") || !strings.Contains(errText, "recorded as a finding") {
		t.Fatalf("applied on the finding: exit %d %q %q", code, out, errText)
	}
	d, lookups = detail("r-1")
	if len(lookups) != 2 || lookups[1].Finding != model.FindingHasIt || lookups[1].ProviderRef == "" || len(d.Decisions) != 1 {
		t.Fatalf("after has it: lookups %+v, decisions %+v", lookups, d.Decisions)
	}
	if dc := d.Decisions[0]; dc.Evidence != lookups[1].ProviderRef || dc.At.Before(lookups[1].StartedAt) {
		t.Errorf("decision %+v; want the evidence %q, decided after the lookup at %v", dc, lookups[1].ProviderRef, lookups[1].StartedAt)
	}

	// Refused against the finding: the lookup is recorded all the same
	// (it is what the provider said), the state is not touched.
	_, errText, code = cli(t, append(base, "--key", "r-2", "--as", "not-applied", "--reason", "customer says no", "--evidence", "ticket 1")...)
	if code != 2 || !strings.Contains(errText, "--against-finding") {
		t.Fatalf("against the finding: exit %d %q", code, errText)
	}
	d, lookups = detail("r-2")
	if d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 || len(lookups) != 1 || lookups[0].Finding != model.FindingHasIt {
		t.Fatalf("after a refusal: %s, decisions %d, lookups %+v", d.Operation.State, len(d.Decisions), lookups)
	}
	if d.Operation.Finding == nil || d.Operation.Finding.Kind != model.FindingHasIt || d.Operation.Finding.Stale {
		t.Errorf("r-2's finding %+v; want a fresh has it", d.Operation.Finding)
	}
}

// recordHasNothing writes a lookup attempt that found nothing on
// tenant/key, as a lookup of a provider holding nothing would: a sandbox
// file that never served the ledger cannot say so through the CLI.
func recordHasNothing(t *testing.T, db, tenant, key string) {
	t.Helper()
	st, err := ledger.OpenStore(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	op, err := st.Get(context.Background(), tenant, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WithAttemptTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Finding: model.FindingHasNothing,
			Fingerprint: op.Fingerprint, WorkerID: "test", Detail: "sandbox holds no delivery under the key", StartedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
}

// ops resolve --finding, without --evidence, decides each operation on its
// own finding, as the console's review does: "has it" → mark applied with
// that operation's reference as the evidence; an authoritative "has
// nothing" → mark not applied. A "has it" made stale by a retry still
// binds (a retry cannot take a delivery back): mark applied. "Has nothing"
// from a provider whose lookup is not declared authoritative decides
// nothing and says why.
func TestOpsResolveByFinding(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"u-1", "u-2", "u-3"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	if _, errText, code := cli(t, "triage", "--db", db, "--operator", "oncall"); code != 0 {
		t.Fatalf("triage: exit %d %s", code, errText)
	}
	// u-3 is tried again after the triage: its "has it" is stale, and
	// still binds.
	if _, _, code := cli(t, callArgs(db, "acme", "u-3", "send_notification", notifyArgs)...); code != 5 {
		t.Fatalf("retry: exit %d", code)
	}
	// u-4's only lookup found nothing (written as another process's
	// lookup would be; this run asks again, and the provider agrees: the
	// caller gave up before the slow provider took it). It is made after
	// the triage: a lookup that found it earlier would still bind (a
	// provider never takes a delivery back).
	if _, _, code := cli(t, callArgs(db, "acme", "u-4", "send_notification", notifyArgs, "--fault", "delay=1s", "--timeout", "300ms")...); code != 5 {
		t.Fatalf("setup u-4: exit %d", code)
	}
	recordHasNothing(t, db, "acme", "u-4")
	show := func(key string) model.Detail {
		t.Helper()
		out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key, "--json")
		var d model.Detail
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}

	applied := []string{"ops", "resolve", "--db", db, "--state", "unknown", "--finding", "has-it", "--as", "applied",
		"--reason", "triage: the provider has it", "--operator", "alice"}
	if _, errText, code := cli(t, applied...); code != 2 || !strings.Contains(errText, "--dry-run") {
		t.Fatalf("no mode: exit %d %q", code, errText)
	}
	before := digest(t, db)
	out, errText, code := cli(t, append(applied, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "evidence: sbx_") || strings.Contains(out, "not decided") ||
		strings.Contains(out, "u-4") || !strings.Contains(out, "dry run: mark applied 3 operations") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	if digest(t, db) != before {
		t.Fatal("the dry run wrote")
	}
	out, errText, code = cli(t, append(applied, "--yes")...)
	if code != 0 || strings.Count(out, " written ") != 3 {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, errText)
	}
	for _, k := range []string{"u-1", "u-2", "u-3"} {
		d := show(k)
		if d.Operation.State != model.StateApplied || len(d.Decisions) != 1 || d.Operation.Finding == nil ||
			d.Decisions[0].Evidence != d.Operation.Finding.Ref || !strings.HasPrefix(d.Decisions[0].Evidence, "sbx_") {
			t.Errorf("%s: %s, decisions %+v, finding %+v; want applied on its own reference", k, d.Operation.State, d.Decisions, d.Operation.Finding)
		}
	}

	// Has nothing: only from a provider whose lookup is declared
	// authoritative. The same ledger under a config that does not declare
	// it decides nothing.
	def, err := os.ReadFile(filepath.Join("..", "..", "config", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	notAuth := filepath.Join(t.TempDir(), "tools.toml")
	if err := os.WriteFile(notAuth, []byte(strings.Replace(string(def), "authoritative_lookup = true", "authoritative_lookup = false", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	nothing := []string{"ops", "resolve", "--db", db, "--state", "unknown", "--finding", "has-nothing", "--as", "not-applied",
		"--reason", "triage: the provider never took it", "--operator", "alice"}
	out, errText, code = cli(t, append(nothing, "--config", notAuth, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "not decided: provider sandbox's lookup is not declared authoritative") || !strings.Contains(out, "mark not applied 0 operations") {
		t.Fatalf("not authoritative, dry run: exit %d\n%s%s", code, out, errText)
	}
	if out, errText, code = cli(t, append(nothing, "--config", notAuth, "--yes")...); code != 2 || !strings.Contains(out, "illegal") {
		t.Fatalf("not authoritative, --yes: exit %d\n%s%s", code, out, errText)
	}
	// The run asked u-4's provider again (a lookup is recorded, not a
	// decision): nothing was decided.
	if d := show("u-4"); d.Operation.State != model.StateUnknown || len(d.Decisions) != 0 {
		t.Fatalf("a has nothing from a provider that is not authoritative decided something: %s, %+v", d.Operation.State, d.Decisions)
	}
	if out, errText, code = cli(t, append(nothing, "--yes")...); code != 0 || strings.Count(out, " written ") != 1 {
		t.Fatalf("authoritative, --yes: exit %d\n%s%s", code, out, errText)
	}
	if d := show("u-4"); d.Operation.State != model.StateNotApplied || len(d.Decisions) != 1 || !strings.Contains(d.Decisions[0].Evidence, "holds no delivery") {
		t.Errorf("u-4: %s, decisions %+v; want not applied on the lookup", d.Operation.State, d.Decisions)
	}

	// With typed evidence, or a finding that does not support the action,
	// --finding is only a filter: the usual rules apply.
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--finding", "has-it", "--as", "not-applied", "--reason", "r", "--dry-run"); code != 2 || !strings.Contains(errText, "needs evidence") {
		t.Errorf("has-it as not-applied without evidence: exit %d %q", code, errText)
	}
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--finding", "maybe", "--as", "applied", "--reason", "r", "--dry-run"); code != 2 || !strings.Contains(errText, "--finding") {
		t.Errorf("--finding maybe: exit %d %q", code, errText)
	}
}

// ops resolve --as not-applied over several operations asks their
// providers first, as the console's bulk review does: a row whose provider
// has the effect is refused on its own (the dry run says so and names the
// finding), the others are written; --against-finding decides against it.
func TestOpsResolveSeveralNotAppliedLooksFirst(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"h-1", "h-2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	// n-1's provider was asked and holds nothing (recorded as another
	// process's lookup is; this run asks again): the caller gave up
	// before the slow provider took it.
	if _, _, code := cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs, "--fault", "delay=1s", "--timeout", "300ms")...); code != 5 {
		t.Fatalf("setup n-1: exit %d", code)
	}
	recordHasNothing(t, db, "acme", "n-1")
	decisions := func(key string) int {
		t.Helper()
		st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		d, err := st.Detail(context.Background(), "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		return len(d.Decisions)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"keys", []string{"--key", "h-1", "--key", "n-1"}},
		{"filter", []string{"--state", "unknown"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := append([]string{"ops", "resolve", "--db", db, "--tenant", "acme", "--as", "not-applied",
				"--reason", "customer says nothing arrived", "--evidence", "ticket 9", "--operator", "alice"}, c.args...)
			out, errText, code := cli(t, append(base, "--dry-run")...)
			if code != 0 || !strings.Contains(out, "would be refused: the provider check found the effect") ||
				!strings.Contains(out, "mark not applied 1 operation;") {
				t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
			}
			out, _, _ = cli(t, append(base, "--dry-run", "--json")...)
			var rows []map[string]any
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatal(err, out)
			}
			for _, r := range rows {
				if has := r["key"] != "n-1"; r["legal"] == has || (r["against_finding"] != nil) != has || r["finding"] == nil {
					t.Fatalf("dry-run row %v", r)
				}
			}
			if n := decisions("h-1"); n != 0 {
				t.Fatalf("the dry run wrote %d decisions", n)
			}
		})
	}
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--as", "not-applied",
		"--reason", "customer says nothing arrived", "--evidence", "ticket 9", "--operator", "alice", "--key", "h-1", "--key", "n-1"}
	out, errText, code := cli(t, append(base, "--yes")...)
	if code != 2 || !strings.Contains(out, "illegal") || !strings.Contains(out, "the provider check found the effect") || !strings.Contains(errText, "1 of 2 written") {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, errText)
	}
	if decisions("h-1") != 0 || decisions("n-1") != 1 {
		t.Fatalf("decisions: h-1 %d, n-1 %d", decisions("h-1"), decisions("n-1"))
	}
	out, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--as", "not-applied",
		"--reason", "customer says nothing arrived", "--evidence", "ticket 9", "--operator", "alice", "--key", "h-2", "--yes", "--against-finding")
	if code != 2 || !strings.Contains(errText, "bare --against-finding confirms none") || decisions("h-2") != 0 {
		t.Fatalf("bare --against-finding: exit %d\n%s%s", code, out, errText)
	}
	dry, _, _ := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--as", "not-applied",
		"--reason", "customer says nothing arrived", "--evidence", "ticket 9", "--operator", "alice", "--key", "h-2", "--dry-run")
	out, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--as", "not-applied",
		"--reason", "customer says nothing arrived", "--evidence", "ticket 9", "--operator", "alice", "--key", "h-2", "--yes", "--against-finding="+digestIn(t, dry))
	if code != 0 || decisions("h-2") != 1 {
		t.Fatalf("--against-finding: exit %d\n%s%s", code, out, errText)
	}
}

// ops show names the finding a decision is checked against when it is not
// the last lookup (has it, then has nothing), and says a "has it" a retry
// made stale binds all the same — what the console's "has it (earlier)"
// says, so an operator on the command line is not pointed at "not applied".
func TestOpsShowNamesTheBindingFinding(t *testing.T) {
	db := newLedgerFile(t)
	for _, k := range []string{"later-nothing", "retried"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	if _, errText, code := cli(t, "triage", "--db", db, "--operator", "oncall"); code != 0 {
		t.Fatalf("triage: exit %d %s", code, errText)
	}
	recordHasNothing(t, db, "acme", "later-nothing")
	if _, _, code := cli(t, callArgs(db, "acme", "retried", "send_notification", notifyArgs)...); code != 5 {
		t.Fatalf("retry: exit %d", code)
	}
	// The refused retry sent nothing; a late provider answer makes the
	// "has it" stale.
	recordLateAnswer(t, db, "acme", "retried")
	for key, want := range map[string][]string{
		"later-nothing": {"finding", "has nothing", "binding ", "earlier lookup #", "has it · sbx_", "checked against it, not the last"},
		"retried":       {"stale (an attempt that may have reached the provider came after it", "binding ", "has it · sbx_", "binds all the same"},
	} {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", key, code, errText)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("ops show %s lacks %q:\n%s", key, w, out)
			}
		}
	}
}
