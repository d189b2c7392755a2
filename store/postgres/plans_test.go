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
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// force_generic_plan: the plan is made at the first EXPLAIN, on the
	// empty table, and cached as a connection's is after five runs.
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE lookup(text, text) AS SELECT id FROM operations WHERE tenant = $1 AND op_key = $2 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	plan := func() string {
		t.Helper()
		rows, err := conn.Query(ctx, `EXPLAIN EXECUTE lookup('t0', 'k')`, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
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
