package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// A local effect that fails rolls the whole call back: no operation, no
// attempt, no row; the next call of the key runs it afresh. The ledger's
// own audit holds on what the effects left.
func TestLocalEffectCommitsWithItsOperationOrNotAtAll(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	fail := true
	l, err := ledger.Open(ctx, path, ledger.Options{
		Schema: []string{`CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`},
		Tools: []ledger.Tool{{Name: "start_job", Summary: "name",
			Schema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
			Local: func(tx ledger.Tx, c ledger.LocalCall) (json.RawMessage, error) {
				if _, err := tx.Exec(`INSERT INTO jobs (name) VALUES (?)`, c.Args["name"]); err != nil {
					return nil, err
				}
				if fail {
					return nil, errors.New("queue full")
				}
				return json.RawMessage(`{"queued":true}`), nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Call(ctx, "t", "k", "start_job", json.RawMessage(`{"name":"nightly"}`)); err == nil {
		t.Fatal("the failing effect was not reported")
	}
	if _, err := l.Get(ctx, "t", "k"); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("a rolled-back call left its operation: %v", err)
	}
	fail = false
	res, err := l.Call(ctx, "t", "k", "start_job", json.RawMessage(`{"name":"nightly"}`))
	if err != nil || res.Class != model.ClassDone {
		t.Fatalf("%+v %v", res, err)
	}
	st, err := sqlite.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	problems, err := st.Audit(ctx)
	if err != nil || len(problems) > 0 {
		t.Errorf("audit: %v %v", problems, err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil || n != 1 {
		t.Errorf("jobs: %d (%v), want 1: the failed attempt's row must be gone", n, err)
	}
}

func TestOpenRefusesBadToolsAndCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	for name, tool := range map[string]ledger.Tool{
		"no effect":        {Name: "x", Schema: `{"type":"object"}`},
		"unknown provider": {Name: "x", Schema: `{"type":"object"}`, Provider: "nope"},
		"bad schema":       {Name: "x", Schema: `{"type":`, Local: func(ledger.Tx, ledger.LocalCall) (json.RawMessage, error) { return nil, nil }},
	} {
		if _, err := ledger.Open(context.Background(), filepath.Join(dir, "l.db"), ledger.Options{Tools: []ledger.Tool{tool}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) > 0 {
		t.Errorf("refused Opens left %v", m)
	}
}
