package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func TestBaselineRunsItsTransactionsAndCleansUp(t *testing.T) {
	for _, writes := range []BareWrites{BareCallWrites, BareOneRow} {
		dir := t.TempDir()
		path := filepath.Join(dir, "baseline.db")
		res, err := Baseline(context.Background(), path, 200, 4, store.Durable, writes)
		if err != nil {
			t.Fatal(err)
		}
		if res.Transactions != 200 || res.Workers != 4 || res.PerSecond <= 0 || res.P50 <= 0 || res.P50 > res.P99 {
			t.Errorf("writes %d: implausible result %+v", writes, res)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("writes %d: baseline left files behind: %v", writes, entries)
		}
	}
	if _, err := Baseline(context.Background(), filepath.Join(t.TempDir(), "b.db"), 1, 1, store.Durable, BareWrites(9)); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("an unknown kind of writes: %v", err)
	}
}

// The goal's yardstick does what a new call writes, no less: per
// transaction an operation, its effect, the receipt naming the effect, and
// the attempt.
func TestBaselineCallWritesAreANewCallsFourWrites(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, bareSchema[BareCallWrites]); err != nil {
		t.Fatal(err)
	}
	write, err := bareWriter(ctx, db, BareCallWrites)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(tx, i, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var ops, effects, tries, named int
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM ops), (SELECT count(*) FROM effects), (SELECT count(*) FROM tries),
		(SELECT count(*) FROM ops JOIN effects e ON e.operation_id = ops.id WHERE ops.receipt = '{"result":{"task_id":' || e.id || '}}')`).Scan(&ops, &effects, &tries, &named)
	if err != nil || ops != 3 || effects != 3 || tries != 3 || named != 3 {
		t.Errorf("three transactions wrote %d operations, %d effects, %d attempts, %d receipts naming their effect (%v); want 3 each", ops, effects, tries, named, err)
	}
}

func TestBaselineRefusesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "precious.db")
	os.WriteFile(path, []byte("keep me"), 0o644)
	if _, err := Baseline(context.Background(), path, 10, 1, store.Durable, BareOneRow); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("Baseline over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Error("Baseline touched an existing file")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0: 1} {
		if got := Percentile(d, q); got != want {
			t.Errorf("Percentile(1..100, %v) = %v, want %v", q, got, want)
		}
	}
	if Percentile(nil, 0.5) != 0 || Percentile([]time.Duration{7}, 0.99) != 7 {
		t.Error("edge cases")
	}
}
