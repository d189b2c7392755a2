package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// On PostgreSQL a new local call draws its effect row's id with the key's
// read (store.EffectHinter) and inserts the row with its operation, in the
// commit's round trip: for each effect table the receipt names the row
// that belongs to the operation, a replay returns the same receipt, a
// second call in one table gets a row of its own, and the audit finds
// nothing amiss.
func TestNewLocalCallsOnPostgreSQLNameTheirOwnEffectRows(t *testing.T) {
	cfg, err := config.Parse("tools.toml", []byte(`
[[tools]]
name = "open_task"
summary = "title"
local = "tasks"
arguments = '{"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}'
[[tools]]
name = "run_report"
summary = "title"
local = "report_jobs"
arguments = '{"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}'
[[tools]]
name = "open_ticket"
summary = "title"
local = "local_effects"
arguments = '{"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}'
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	url := pgtest.URL(t)
	st, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	svc := reconcile.New(st, cfg.Tools, provider.Registry{})
	ctx := context.Background()
	cases := []struct{ tool, table, idKey string }{
		{"open_task", "tasks", "task_id"},
		{"run_report", "report_jobs", "job_id"},
		{"open_ticket", "local_effects", "effect_id"},
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			seen := map[int64]bool{}
			for _, key := range []string{"k1", "k2"} {
				req := model.Request{Tenant: "t", Key: c.tool + "-" + key, Tool: c.tool, PayloadVersion: 1, Args: []byte(`{"title":"x"}`)}
				res, err := svc.Call(ctx, req, reconcile.CallOptions{})
				if err != nil || res.Outcome != model.OutcomeCreated {
					t.Fatalf("%s: %v %+v", req.Key, err, res)
				}
				var result map[string]json.RawMessage
				var rowID int64
				if err := json.Unmarshal(res.Receipt.Result, &result); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(result[c.idKey], &rowID); err != nil {
					t.Fatalf("%s: receipt %s: %v", req.Key, res.Receipt.Result, err)
				}
				var opID int64
				if err := conn.QueryRow(ctx, `SELECT operation_id FROM `+c.table+` WHERE id = $1`, rowID).Scan(&opID); err != nil || opID != res.Op.ID {
					t.Fatalf("%s: receipt %s names %s row %d, which belongs to operation %d (%v); want %d", req.Key, res.Receipt.Result, c.table, rowID, opID, err, res.Op.ID)
				}
				if seen[rowID] {
					t.Fatalf("%s: row %d named twice", req.Key, rowID)
				}
				seen[rowID] = true
				again, err := svc.Call(ctx, req, reconcile.CallOptions{})
				if err != nil || again.Outcome != model.OutcomeReplayed || string(again.Receipt.Result) != string(res.Receipt.Result) {
					t.Fatalf("%s replayed: %v %+v; want the receipt %s", req.Key, err, again, res.Receipt.Result)
				}
			}
		})
	}
	if problems, err := st.Audit(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("audit: %v %v", problems, err)
	}
}
