package cli

// The commands on a PostgreSQL ledger: --db (and $RETRYSAFE_DB) take a
// postgres:// URL; the contract is the one the SQLite tests check.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

func TestCommandsOnPostgreSQL(t *testing.T) {
	url := pgURL(t)
	pdb := filepath.Join(t.TempDir(), "provider.db")
	call := func(tenant, key, tool, args string, extra ...string) (callLine, int) {
		t.Helper()
		out, errText, code := cli(t, callArgs(url, tenant, key, tool, args, append([]string{"--provider-db", pdb}, extra...)...)...)
		if out == "" {
			t.Fatalf("call %s: exit %d, %s", key, code, errText)
		}
		return parseCallLine(t, out), code
	}
	first, code := call("acme", "op-1", "create_support_task", taskArgs("printer on fire"))
	if code != 0 || first.Status != "created" {
		t.Fatalf("first call: %+v exit %d", first, code)
	}
	again, code := call("acme", "op-1", "create_support_task", taskArgs("printer on fire"))
	if code != 0 || again.Status != "replayed" || string(again.Receipt.Result) != string(first.Receipt.Result) {
		t.Errorf("retry: %+v exit %d; want the stored receipt replayed", again, code)
	}
	if out, errText, code := cli(t, callArgs(url, "acme", "op-1", "create_support_task", taskArgs("another subject"), "--provider-db", pdb)...); code != 3 || out != "" {
		t.Errorf("changed arguments: exit %d %q %q; want a conflict (exit 3)", code, out, errText)
	}
	if _, errText, code := cli(t, callArgs(url, "acme", "op-lost", "send_notification", notifyArgs, "--provider-db", pdb, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("lost reply: exit %d %s; want unknown (exit 5)", code, errText)
	}
	call("globex", "op-g", "create_support_task", taskArgs("theirs"))

	// ops through $RETRYSAFE_DB, tenant-scoped.
	t.Setenv("RETRYSAFE_DB", url)
	out, errText, code := cli(t, "ops", "list", "--tenant", "acme", "--json")
	var page struct{ Operations []model.Operation }
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Operations) != 2 {
		t.Fatalf("ops list: exit %d, %d operations, %v %s", code, len(page.Operations), err, errText)
	}
	if _, _, code := cli(t, "ops", "show", "--tenant", "globex", "--key", "op-lost"); code != 2 {
		t.Errorf("globex sees acme's key: exit %d", code)
	}
	if _, errText, code := cli(t, "ops", "check", "--tenant", "acme", "--key", "op-lost", "--provider-db", pdb); code != 0 {
		t.Errorf("ops check: exit %d %s", code, errText)
	}
	// The finding, in ops list's FINDING column and its filter.
	if out, errText, code := cli(t, "ops", "list", "--tenant", "acme", "--finding", "has-it"); code != 0 || !strings.Contains(out, "has it · sbx_") || strings.Contains(out, "op-1") {
		t.Errorf("ops list --finding has-it: exit %d %s%s", code, out, errText)
	}
	if _, errText, code := cli(t, "ops", "resolve", "--tenant", "acme", "--key", "op-lost", "--as", "applied",
		"--reason", "provider has it", "--evidence", "sbx_1", "--operator", "ana"); code != 0 {
		t.Fatalf("ops resolve: exit %d %s", code, errText)
	}
	out, _, _ = cli(t, "ops", "show", "--tenant", "acme", "--key", "op-lost", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.State != model.StateApplied || len(d.Decisions) != 1 {
		t.Errorf("after resolve: %+v %v", d.Operation, err)
	}
	if _, errText, code := cli(t, "sweep", "--provider-db", pdb); code != 0 {
		t.Errorf("sweep: exit %d %s", code, errText)
	}
	// A read-only console-side open and a wrong URL: one line, no password.
	_, errText, code = cli(t, "ops", "list", "--db", "postgres://ana:s3cret@127.0.0.1:1/nope?connect_timeout=2")
	if code != 1 || strings.Contains(errText, "s3cret") {
		t.Errorf("unreachable server: exit %d, %q; want 1 (an outage: retry later)", code, errText)
	}
	oneErrorLine(t, "unreachable server", errText)
}

func TestProviderFileOfAPostgreSQLLedgerIsNamedByItsSchema(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://h/db?search_path=acme":       "acme.provider.db",
		"postgresql://h/db":                      "retrysafe.provider.db",
		"/var/lib/retrysafe/ledger.db":           "/var/lib/retrysafe/ledger.provider.db",
		"postgres://h/db?search_path=b%2Cpublic": "b.provider.db",
	} {
		if got := providerPath(url); got != want {
			t.Errorf("providerPath(%q) = %q, want %q", url, got, want)
		}
	}
}

// demo --db URL builds the demo in a schema beside the target and renames
// it into place; a second run reuses it; --fresh rebuilds it.
func TestDemoOnPostgreSQL(t *testing.T) {
	const secret = "s3cret-demo-pw" // never printed
	url := withPassword(t, secret)
	t.Chdir(t.TempDir()) // the provider file goes in the current directory
	_, errText, code, _ := asBinary(t, "demo", "--db", url, "--no-console")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errText)
	}
	if strings.Contains(errText, secret) {
		t.Errorf("demo printed the ledger URL's password:\n%s", errText)
	}
	// The same hints the SQLite demo prints: where to start.
	for _, want := range []string{"  waiting for a person (unknown): ", "  in flight (in_progress, leases held until "} {
		if !strings.Contains(errText, want) {
			t.Errorf("demo on PostgreSQL lacks %q:\n%s", want, errText)
		}
	}
	schema := postgres.SchemaOf(url)
	if _, err := os.Stat(schema + ".provider.db"); err != nil {
		t.Errorf("no provider file beside: %v", err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ops int
	var leftovers int
	if err := conn.QueryRow(ctx, `SELECT (SELECT COALESCE(SUM(n), 0) FROM `+pgx.Identifier{schema}.Sanitize()+`.state_counts) + (SELECT COALESCE(SUM(n), 0) FROM `+pgx.Identifier{schema}.Sanitize()+`.state_count_deltas),
		(SELECT COUNT(*) FROM pg_namespace WHERE nspname LIKE $1)`, schema+"_building_%").Scan(&ops, &leftovers); err != nil {
		t.Fatal(err)
	}
	if ops < 200 || leftovers != 0 {
		t.Errorf("demo ledger has %d operations, %d half-built schemas left", ops, leftovers)
	}
	_, errText, code, _ = asBinary(t, "demo", "--db", url, "--no-console")
	if code != 0 || !strings.Contains(errText, "reusing the demo ledger") {
		t.Errorf("second demo: exit %d %s", code, errText)
	}
	if strings.Contains(errText, secret) {
		t.Errorf("second demo printed the ledger URL's password:\n%s", errText)
	}
}

// $RETRYSAFE_DB names a team's ledger: demo without --db builds beside it,
// in schema retrysafe_demo of that database, and leaves the ledger alone.
func TestDemoTakesAPostgreSQLURLFromTheEnvironmentIntoASchemaOfItsOwn(t *testing.T) {
	url := pgURL(t)
	t.Chdir(t.TempDir())
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) }) // after the drop below
	drop := func() {
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS retrysafe_demo CASCADE`); err != nil {
			t.Fatal(err)
		}
	}
	drop()
	t.Cleanup(drop)
	// The team's ledger, with one operation of its own.
	if _, errText, code := cli(t, callArgs(url, "acme", "op-1", "create_support_task", taskArgs("ours"))...); code != 0 {
		t.Fatalf("call: exit %d %s", code, errText)
	}
	t.Setenv("RETRYSAFE_DB", url)
	_, errText, code, _ := asBinary(t, "demo", "--no-console")
	if code != 0 || !strings.Contains(errText, "retrysafe_demo") {
		t.Fatalf("demo: exit %d\n%s", code, errText)
	}
	var demoOps int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM retrysafe_demo.operations`).Scan(&demoOps); err != nil || demoOps < 200 {
		t.Errorf("schema retrysafe_demo holds %d operations (%v); want the demo", demoOps, err)
	}
	out, _, _ := cli(t, "ops", "list", "--json")
	var page struct{ Operations []model.Operation }
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Operations) != 1 || page.Operations[0].Key != "op-1" {
		t.Errorf("the team's ledger changed: %v %s", err, out)
	}
}

// gen on PostgreSQL builds, with COPY, the ledger SQLite's gen builds with
// the same seed: the same operations in the same states, the same pages;
// the invariants hold, the next call gets a new id, and a schema that
// holds operations is refused.
func TestGenOnPostgreSQLBuildsWhatSQLiteBuilds(t *testing.T) {
	url := pgURL(t)
	t.Chdir(t.TempDir()) // the provider file goes in the current directory
	file := filepath.Join(t.TempDir(), "gen.db")
	for _, db := range []string{file, url} {
		if _, errText, code := cli(t, "gen", "--db", db, "--ops", "3000", "--tenants", "5", "--batch", "700", "--quiet"); code != 0 {
			t.Fatalf("gen --db %s: exit %d %s", db, code, errText)
		}
	}
	ctx := context.Background()
	lite, err := ledger.OpenStore(file, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := postgres.Open(url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, tenant := range []string{"", "acme", "hooli"} {
		want, err1 := lite.Counts(ctx, tenant)
		got, err2 := pg.Counts(ctx, tenant)
		nonZero := func(m map[model.State]int) string {
			var b strings.Builder
			for _, st := range model.AllStates {
				if m[st] != 0 {
					fmt.Fprintf(&b, "%s=%d ", st, m[st])
				}
			}
			return b.String()
		}
		if err1 != nil || err2 != nil || got.Total != want.Total || nonZero(got.ByState) != nonZero(want.ByState) {
			t.Errorf("counts of %q: PostgreSQL %+v (%v), SQLite %+v (%v)", tenant, got, err2, want, err1)
		}
	}
	shape := func(ops []model.Operation) string {
		var b strings.Builder
		for _, o := range ops {
			fmt.Fprintf(&b, "%d %s %s %s %s %s %d|", o.ID, o.Tenant, o.Key, o.Tool, o.State, o.Summary, o.Version)
		}
		return b.String()
	}
	for _, q := range []store.ListQuery{{Limit: 50}, {Tenant: "globex", State: model.StateUnknown, Limit: 20}, {BeforeID: 1500, Limit: 30}} {
		want, err1 := lite.List(ctx, q)
		got, err2 := pg.List(ctx, q)
		if err1 != nil || err2 != nil || shape(got) != shape(want) {
			t.Errorf("page %+v differs:\nPostgreSQL %s (%v)\nSQLite     %s (%v)", q, shape(got), err2, shape(want), err1)
		}
	}
	if problems, err := pg.Audit(ctx); err != nil || len(problems) > 0 {
		t.Errorf("audit: %v %v", problems, err)
	}
	// The identities moved past the copied rows: a new call is a new row.
	out, errText, code := cli(t, callArgs(url, "acme", "after-gen", "create_support_task", taskArgs("after"))...)
	if code != 0 {
		t.Fatalf("a call after gen: exit %d %s %s", code, out, errText)
	}
	if op, err := pg.Get(ctx, "acme", "after-gen"); err != nil || op.ID <= 3000 {
		t.Errorf("the call after gen: %+v %v; want a new id past the generated ones", op, err)
	}
	if problems, err := pg.Audit(ctx); err != nil || len(problems) > 0 {
		t.Errorf("audit after a call: %v %v", problems, err)
	}
	// gen never adds to a ledger.
	_, errText, code = cli(t, "gen", "--db", url, "--ops", "10", "--quiet")
	if code != 2 || !strings.Contains(errText, "new ledger") {
		t.Errorf("gen into a ledger with operations: exit %d %q; want refused", code, errText)
	}
}

// serve prints where its ledger is — on stdout, and in the log a shipper
// sends on — without the URL's password: it printed --db as given.
func TestServeNeverPrintsTheLedgersPassword(t *testing.T) {
	u, err := url.Parse(pgURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cretpw") // the test server trusts its socket: any password does
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	pdb := filepath.Join(t.TempDir(), "provider.db") // not SCHEMA.provider.db in the package directory
	code := runServe(ctx, []string{"--db", u.String(), "--provider-db", pdb, "--listen", "127.0.0.1:0"}, stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != 0 || !strings.Contains(stdout.String(), "listening on") || strings.Contains(out, "s3cretpw") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the address and the ledger without its password", code, stdout.String(), stderr.String())
	}
}

// cancelOnWrite is a stdout that stops the command once it has printed.
type cancelOnWrite struct {
	bytes.Buffer
	cancel func()
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	defer c.cancel()
	return c.Buffer.Write(p)
}
