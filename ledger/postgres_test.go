package ledger_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A postgres:// URL is a ledger too, for both openers: a Go local effect
// writes the program's own table in the ledger's PostgreSQL transaction
// ($n placeholders), and OpenConfig reads what it did.
func TestOpenOnPostgreSQL(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	l, err := ledger.Open(ctx, url, ledger.Options{
		Schema: []string{`CREATE TABLE IF NOT EXISTS tickets (id BIGSERIAL PRIMARY KEY, tenant TEXT, title TEXT)`},
		Tools: []ledger.Tool{{Name: "open_ticket", Summary: "title",
			Schema: `{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`,
			Local: func(tx ledger.Tx, c ledger.LocalCall) (json.RawMessage, error) {
				if _, err := tx.Exec(`INSERT INTO tickets (tenant, title) VALUES ($1, $2)`, c.Tenant, c.Args["title"]); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"queued":true}`), nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"created", "replayed"} {
		res, err := l.Call(ctx, "acme", "k", "open_ticket", json.RawMessage(`{"title":"printer on fire"}`))
		if err != nil || res.Class != model.ClassDone || res.Receipt.Status != want {
			t.Fatalf("call: %+v %v; want done, %s", res, err, want)
		}
	}
	l.Close()
	if err := pgtest.Exec(t, url, `DO $$ BEGIN IF (SELECT count(*) FROM tickets) <> 1 THEN RAISE 'want one ticket'; END IF; END $$`); err != nil {
		t.Errorf("the effect: %v", err)
	}
	ro, err := ledger.OpenConfig(ctx, url, config.Default(), ledger.ConfigOptions{Store: store.Options{ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if op, err := ro.Get(ctx, "acme", "k"); err != nil || op.State != model.StateApplied {
		t.Fatalf("OpenConfig's Get: %+v %v", op, err)
	}
}
