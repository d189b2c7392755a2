package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// BaselineResult is the write rate of bare SQLite on one file system: the
// yardstick `retrysafe bench` holds the call path against.
type BaselineResult struct {
	Transactions int             `json:"transactions"`
	Workers      int             `json:"workers"`
	Elapsed      time.Duration   `json:"elapsed_ns"`
	PerSecond    float64         `json:"tx_per_sec"`
	P50          time.Duration   `json:"p50_ns"`
	P99          time.Duration   `json:"p99_ns"`
	Latencies    []time.Duration `json:"-"` // sorted
}

// Baseline runs n single-row write transactions (BEGIN IMMEDIATE, one
// INSERT, COMMIT) from workers goroutines against a new file at path, with
// exactly the connection settings a ledger gets (WAL, the same synchronous
// level, one writer connection that in-process writers queue for). It is the
// cost of a durable commit on this file system and nothing else, so the
// ratio of the call path's rate to it says what retrysafe's own work costs.
// The file must not exist; it is removed afterwards.
func Baseline(ctx context.Context, path string, n, workers int, d store.Durability) (BaselineResult, error) {
	res := BaselineResult{Transactions: n, Workers: workers}
	if n < 1 || workers < 1 {
		return res, model.Errorf(model.CodeInvalid, "baseline needs at least one transaction and one worker")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return res, model.Errorf(model.CodeInvalid, "baseline file %s exists already; refusing to overwrite it", path)
	}
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(path + suffix)
		}
	}()
	db, err := sql.Open("sqlite", dsn(path, options{Options: store.Options{BusyTimeout: 5 * time.Second, Durability: d}, newFile: true}, false))
	if err != nil {
		return res, model.Wrap(model.CodeInternal, err, "baseline %s: %v", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE baseline (id INTEGER PRIMARY KEY, v TEXT NOT NULL, at INTEGER NOT NULL)`); err != nil {
		return res, model.Wrap(model.CodeInternal, err, "baseline %s: %v", path, err)
	}
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				err := func() error {
					tx, err := db.BeginTx(ctx, nil) // _txlock=immediate, as the ledger's writer
					if err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO baseline (v, at) VALUES (?, ?)`, "row", t0.UnixMilli()); err != nil {
						tx.Rollback()
						return err
					}
					return tx.Commit()
				}()
				lat[i] = time.Since(t0)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if firstErr != nil {
		return res, model.Wrap(model.CodeInternal, firstErr, "baseline %s: %v", path, firstErr)
	}
	res.PerSecond = float64(n) / res.Elapsed.Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.P50, res.P99 = Percentile(lat, 0.50), Percentile(lat, 0.99)
	res.Latencies = lat
	return res, nil
}

// Percentile returns the q-quantile (0..1) of sorted latencies, nearest rank.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}
