package cli

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// A key an older build recorded from a request this build refuses — a
// number a double cannot hold exactly, a key stacking more than 3
// combining marks — retried by `call` with the very bytes it sent, just
// after the upgrade (the ledger still at the older build's schema): its
// receipt replayed, exit 0 — not exit 2 "send it as a string" or "must
// not stack", after which the caller changes the request under a new key
// and the effect is made a second time. The same bytes under a new key
// are refused, exit 2, as always.
func TestCallRetriesARequestAnOlderBuildRecorded(t *testing.T) {
	marks := "k" + strings.Repeat("\u0301", 5)
	cases := []struct{ name, key, args string }{
		{"more precision than a double", "kb18b1f", `{"subject":"x","amount":10.000000000000001}`},
		{"a longer spelling of 0.30000000000000004", "k03", `{"subject":"x","amount":0.3000000000000000444}`},
		{"5 stacked marks", marks, `{"subject":"x"}`},
	}
	drivers := []struct {
		name string
		// older makes a ledger holding the older build's rows for key,
		// at the schema that build left (13: before retry_not_before).
		older func(t *testing.T, key, args string) string
	}{
		{"sqlite", func(t *testing.T, key, args string) string {
			db := filepath.Join(t.TempDir(), "old.db")
			st, err := sqlite.Open(db, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			testledger.RecordOlder(t, st, config.Default().Tools, testledger.Older{Tenant: "acme", Key: key,
				Tool: "create_support_task", Args: args, State: model.StateApplied})
			st.Close()
			olderSchema(t, db)
			return db
		}},
		{"postgres", func(t *testing.T, key, args string) string {
			url := pgtest.URL(t)
			st, err := postgres.Open(url, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			testledger.RecordOlder(t, st, config.Default().Tools, testledger.Older{Tenant: "acme", Key: key,
				Tool: "create_support_task", Args: args, State: model.StateApplied})
			st.Close()
			for _, q := range []string{`ALTER TABLE operations DROP COLUMN retry_not_before`,
				`DROP INDEX operations_supersedes`, `DROP INDEX tombstones_forget`, `DELETE FROM schema_migrations WHERE version >= 14`} {
				if err := pgtest.Exec(t, url, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			return url
		}},
	}
	for _, d := range drivers {
		for _, c := range cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				db := d.older(t, c.key, c.args)
				if out, errText, code := cli(t, callArgs(db, "acme", c.key, "create_support_task", c.args)...); code != 0 || !strings.Contains(out, `"status":"replayed"`) {
					t.Fatalf("the same bytes: exit %d %q %q; want 0, replayed", code, out, errText)
				}
				if out, errText, code := cli(t, callArgs(db, "acme", c.key+"-new", "create_support_task", c.args)...); code != 2 {
					t.Fatalf("the same bytes under a new key: exit %d %q %q; want 2", code, out, errText)
				}
				if _, _, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key+"-new"); code == 0 {
					t.Fatal("a refused new key was written")
				}
			})
		}
	}
}

// olderSchema takes the ledger file at db back to schema 13, as the builds
// before retry_not_before (migration 14) left it.
func olderSchema(t *testing.T, db string) {
	t.Helper()
	d, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range []string{"ALTER TABLE operations DROP COLUMN retry_not_before",
		"DROP INDEX operations_supersedes", "DROP INDEX operations_superseded_by", "DROP INDEX tombstones_forget", "PRAGMA user_version = 13"} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
