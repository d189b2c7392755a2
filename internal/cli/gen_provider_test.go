package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A generated ledger's sandbox file is its own, on either driver: `gen`
// leaves the ledger and the file beside it tied (the file serves the
// ledger, the ledger records the file), so a check or a triage of the
// generated history gets the answers that history holds — "has nothing"
// for the claims that were never sent, "has it" for the real call that was
// applied — never "cannot tell". On PostgreSQL the rows are made on a
// scratch SQLite ledger and copied; the file used to stay tied to that
// scratch ledger only, and every lookup of the PostgreSQL ledger could not
// tell. Another ledger's file is still refused.
func TestAGeneratedLedgersProviderFileAnswersForIt(t *testing.T) {
	const ops, tenants = 2000, 3
	// The last real call of the generation is applied (gen makes
	// min(ops/1000, 300) real calls: applied, rejected, not applied, …).
	realCalls := min(ops/1000, 300)
	appliedIdx := ops - realCalls
	appliedTenant, appliedKey := reconcile.BulkTenant(appliedIdx%tenants), fmt.Sprintf("op-%07d", appliedIdx)

	for _, c := range []struct {
		name string
		dbs  func(t *testing.T, dir string) (string, string) // the ledger and another one
	}{
		{"SQLite", func(t *testing.T, dir string) (string, string) {
			return filepath.Join(dir, "gen.db"), filepath.Join(dir, "other.db")
		}},
		{"PostgreSQL", func(t *testing.T, dir string) (string, string) {
			return pgURL(t), pgURL(t)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir) // a PostgreSQL ledger's provider file goes in the current directory
			// The lookups come after the claims' grace (a claim made a
			// moment ago may still be on its way: cannot tell).
			t.Setenv(reconcile.GraceEnv, "0")
			db, other := c.dbs(t, dir)
			for _, d := range []string{db, other} {
				if _, errText, code := cli(t, "gen", "--db", d, "--ops", fmt.Sprint(ops), "--tenants", fmt.Sprint(tenants), "--quiet"); code != 0 {
					t.Fatalf("gen --db %s: exit %d %s", d, code, errText)
				}
			}

			// The ledger records the file beside it, and how far the file
			// went (the scratch ledger's record, on PostgreSQL): read
			// before any lookup, which records the file's newest delivery.
			tiedTo(t, db, providerPath(db))

			// Triage of every unknown operation: each was claimed and never
			// sent, so the file has nothing under its key.
			out, errText, code := cli(t, "triage", "--db", db, "--json", "--operator", "oncall")
			var rep triageJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitTriageOK || rep.Candidates == 0 ||
				rep.Totals.HasNothing != rep.Candidates || rep.Totals.CannotTell != 0 || rep.Totals.HasIt != 0 || rep.Totals.Errors != 0 {
				t.Fatalf("triage: exit %d %v %+v %s; want every unknown operation has nothing", code, err, rep.Totals, errText)
			}
			unknown := rep.Findings[0]

			check := func(tenant, key string, extra ...string) (model.FindingKind, string, int) {
				t.Helper()
				out, errText, code := cli(t, append([]string{"ops", "check", "--db", db, "--tenant", tenant, "--key", key, "--json"}, extra...)...)
				var res struct{ Finding model.Finding }
				json.Unmarshal([]byte(out), &res)
				return res.Finding.Kind, out + errText, code
			}
			for _, w := range []struct {
				tenant, key string
				want        model.FindingKind
			}{
				{unknown.Tenant, unknown.Key, model.FindingHasNothing},
				{appliedTenant, appliedKey, model.FindingHasIt},
			} {
				if kind, said, code := check(w.tenant, w.key); code != 0 || kind != w.want {
					t.Errorf("ops check %s/%s: exit %d, %s %s; want %s", w.tenant, w.key, code, kind, said, w.want)
				}
			}

			// The other generated ledger's file never served this one.
			kind, said, code := check(unknown.Tenant, unknown.Key, "--provider-db", providerPath(other))
			if code != 2 || kind != model.FindingCannotTell || !strings.Contains(said, "never served this ledger") {
				t.Errorf("ops check through another ledger's file: exit %d, %s %s; want cannot tell", code, kind, said)
			}
		})
	}
}

// tiedTo checks that the sandbox file at pdb serves the ledger at db for
// provider sandbox, that the ledger records that file, and that its mark
// is the file's newest delivery.
func tiedTo(t *testing.T, db, pdb string) {
	t.Helper()
	ctx := context.Background()
	st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sb, err := sandbox.Open(pdb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	id, err := st.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	serves, err1 := sb.Serves(ctx, id, "sandbox")
	fileID, mark, err2 := st.ProviderFileMark(ctx, "sandbox")
	newest, err3 := sb.Mark(ctx)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if !serves || fileID != sb.FileID() || newest.Seq == 0 || mark.Seq != newest.Seq || mark.Check != newest.Check {
		t.Errorf("the file serves ledger %s: %v; the ledger records file %s at %+v; the file is %s at %+v",
			id, serves, fileID, mark, sb.FileID(), newest)
	}
}
