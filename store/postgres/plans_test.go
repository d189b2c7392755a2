package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A key lookup planned on a new, empty ledger — as every pooled connection
// plans its prepared statements in a new ledger's first second — takes the
// (tenant, id) index and filters a tenant's every row by key, and a cached
// plan is not made again as the table grows. A writer gives the planner
// statistics while the ledger is young, which replaces the cached plans:
// the same prepared lookup then walks the unique (tenant, op_key) index.
func TestKeyLookupPlannedOnANewLedgerIsReplannedAsItGrows(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	postgres.FoldEvery(s, time.Millisecond)
	ctx := context.Background()
	// force_generic_plan: the plan is made at the first EXPLAIN, on the
	// empty table, and cached as a connection's is after five runs.
	conn := genericPlanConn(t, url)
	if _, err := conn.Exec(ctx, `PREPARE lookup(text, text) AS SELECT id FROM operations WHERE tenant = $1 AND op_key = $2 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	plan := func() string {
		t.Helper()
		return explainExecute(t, conn, "lookup('t0', 'k')")
	}
	t.Logf("planned on the empty ledger:\n%s", plan())
	n := 0
	insert := func(count int) {
		t.Helper()
		if err := s.WithTx(ctx, func(tx store.Tx) error {
			for i := 0; i < count; i++ {
				n++
				if err := tx.InsertOperation(&model.Operation{Tenant: "t" + strconv.Itoa(n%8), Key: "k" + strconv.Itoa(n),
					Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64),
					State: model.StateUnknown}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	insert(3000)
	// Each commit wakes the writer's notifier, which looks at the
	// planner's statistics at most once per fold.
	for deadline := time.Now().Add(15 * time.Second); ; {
		p := plan()
		if strings.Contains(p, "operations_tenant_op_key_key") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with %d operations the cached key lookup still plans:\n%s", n, p)
		}
		insert(1)
		time.Sleep(20 * time.Millisecond)
	}
}

// The unknown tab sorted by tool, over many applied operations whose tools
// sort before the unknown ones': the page walks the partial index on
// (state, tool, id) (migration 10) — the state spelled as a literal, so a
// prepared page's generic plan can use it too — instead of walking every
// row in tool order and filtering by state.
func TestAStateTabSortedByToolWalksTheStateToolIndex(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// 20,000 applied operations of an early tool, 50 unknown of a late one.
	if err := postgres.Exec(ctx, s, `INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at)
		SELECT 't', 'k' || i, CASE WHEN i % 400 = 0 THEN 'z_late' ELSE 'a_early' END, 1, '{}', repeat('a', 64),
			CASE WHEN i % 400 = 0 THEN 'unknown' ELSE 'applied' END, '{}', i, i
		FROM generate_series(1, 20000) i;
		ANALYZE operations`); err != nil {
		t.Fatal(err)
	}
	page, err := s.List(ctx, store.ListQuery{State: model.StateUnknown, Sort: model.SortTool, Limit: 10})
	if err != nil || len(page) != 10 || page[0].Tool != "z_late" || page[0].Key != "k400" || page[9].Key != "k4000" {
		t.Fatalf("first page: %d rows (%v)", len(page), err)
	}
	var plan string
	if err := postgres.QueryRow(ctx, s, `EXPLAIN (FORMAT JSON) SELECT id FROM operations WHERE state = 'unknown'
		ORDER BY tool COLLATE "C", id LIMIT 10`, &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "operations_state_tool_id") {
		t.Errorf("the unknown tab sorted by tool does not use operations_state_tool_id:\n%s", plan)
	}
}

// genericPlanConn is a connection of its own to url whose prepared
// statements are planned once for every argument (plan_cache_mode =
// force_generic_plan), as a pooled connection's are after five runs.
func genericPlanConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// explainExecute is the plan of EXECUTE call (a prepared statement with
// its arguments) on conn, one line per node.
func explainExecute(t *testing.T, conn *pgx.Conn, call string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `EXPLAIN EXECUTE `+call, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("EXPLAIN EXECUTE %s: %v", call, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
