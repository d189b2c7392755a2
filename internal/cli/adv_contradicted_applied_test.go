package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// contradict flags tenant/key contradicted, as a late provider answer that
// disagrees with its state does (reconcile's lateResult).
func contradict(t *testing.T, db, tenant, key, said string) {
	t.Helper()
	st, err := sqlite.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation(tenant, key)
		if err != nil {
			return err
		}
		if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLateResult, Fingerprint: op.Fingerprint,
			Error: "provider said " + said + " after the operation had moved to " + string(op.State), WorkerID: "w", StartedAt: tx.Now()}); err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.Contradicted = true
		return tx.UpdateOperation(op, from, ver)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An operation marked applied that a late provider answer says was
// rejected: its replays report done what may never have happened, and
// `ops supersede` refused it whatever was typed ("applied allows no
// decisions"). A new key is legal now — against its receipt, so only with
// --against-finding, as the console asks for its override.
func TestSupersedeAContradictedAppliedNeedsAgainstFinding(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d; want 5", code)
	}
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "applied",
		"--evidence", "the customer says it came", "--reason", "customer"); code != 0 {
		t.Fatalf("mark applied: exit %d: %s", code, errText)
	}
	contradict(t, db, "acme", "k", "rejected")
	before := digest(t, db)
	out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "k", "--reason", "send it deliberately")
	line := oneErrorLine(t, "supersede", errText)
	if code != 2 || out != "" || !strings.Contains(line, "receipt") || !strings.Contains(line, "--against-finding") {
		t.Errorf("supersede of a contradicted applied: exit %d, %q %q; want 2 naming the receipt and --against-finding", code, out, errText)
	}
	if digest(t, db) != before {
		t.Error("a refused supersede wrote to the ledger")
	}
	out, errText, code = cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "k", "--reason", "send it deliberately",
		"--against-finding="+shownDigest(t, db, "k"), "--new-key", "k2")
	if code != 0 || strings.TrimSpace(out) != "k2" {
		t.Fatalf("supersede --against-finding: exit %d, %q %q; want the new key", code, out, errText)
	}
}

// A failed operation a late "applied" contradicts: ops resolve --as
// applied is legal (it refused: "failed allows authorize a new key").
func TestResolveAContradictedFailedAsApplied(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "reject")...); code != 8 {
		t.Fatalf("setup call: exit %d; want 8", code)
	}
	contradict(t, db, "acme", "k", "applied")
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "applied",
		"--evidence", "sbx_1", "--reason", "the provider applied an earlier attempt"); code != 0 {
		t.Fatalf("mark a contradicted failed applied: exit %d: %s", code, errText)
	}
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs)...); code != 0 {
		t.Errorf("a retry after it: exit %d; want 0 (the replayed receipt)", code)
	}
}

// `ops resolve --as not-applied` over several operations, run with a
// config that does not name their provider (the agents' config left out,
// or the provider renamed since): it asked nothing and said nothing, and
// --yes wrote "not applied" on every row, the one the provider has too.
// Each row now says "cannot tell", and why, on the dry run — as for a
// provider that is down — and the summary says how many are written on
// the typed evidence alone.
func TestBulkNotAppliedUnderAConfigWithoutTheProviderSaysCannotTell(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"k1", "k2"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup call %s: exit %d; want 5", k, code)
		}
	}
	def, err := os.ReadFile(filepath.Join("..", "..", "config", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "renamed.toml")
	doc := strings.ReplaceAll(strings.ReplaceAll(string(def), "name = \"sandbox\"\n", "name = \"mail\"\n"), "provider = \"sandbox\"\n", "provider = \"mail\"\n")
	if err := os.WriteFile(renamed, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errText, code := cli(t, "ops", "resolve", "--db", db, "--config", renamed, "--state", "unknown", "--as", "not-applied",
		"--evidence", "INC-7", "--reason", "incident", "--dry-run")
	if code != 0 || strings.Count(out, `cannot tell — provider "sandbox" is not in this config (--config): nothing was asked`) != 2 ||
		!strings.Contains(out, "2 of them are on the typed evidence alone: the provider cannot tell") {
		t.Fatalf("dry run under a config without the provider: exit %d\n%s%s", code, out, errText)
	}
}
