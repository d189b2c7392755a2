package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func TestBaselineRunsItsTransactionsAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "baseline.db")
	res, err := Baseline(context.Background(), path, 200, 4, store.Durable)
	if err != nil {
		t.Fatal(err)
	}
	if res.Transactions != 200 || res.Workers != 4 || res.PerSecond <= 0 || res.P50 <= 0 || res.P50 > res.P99 {
		t.Errorf("implausible result %+v", res)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("baseline left files behind: %v", entries)
	}
}

func TestBaselineRefusesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "precious.db")
	os.WriteFile(path, []byte("keep me"), 0o644)
	if _, err := Baseline(context.Background(), path, 10, 1, store.Durable); !model.IsCode(err, model.CodeInvalid) {
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
