package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"sort"
	"strconv"
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

// BareWrites is what each of Baseline's transactions writes.
type BareWrites int

const (
	// BareCallWrites is what a new call of a local tool writes, on bare
	// tables without triggers or extra indexes: insert the operation
	// (unique tenant and key), insert its effect row, store the receipt
	// naming it, append the attempt — the same four writes as the
	// PostgreSQL baseline (postgres.Baseline).
	BareCallWrites BareWrites = iota
	// BareOneRow is one INSERT of a short row: the floor, the cost of a
	// durable commit on this file system and nothing else.
	BareOneRow
)

// bareSchema and bareStatements are each kind's tables and the statements
// of one transaction, in order.
var bareSchema = map[BareWrites]string{
	BareOneRow: `CREATE TABLE baseline (id INTEGER PRIMARY KEY, v TEXT NOT NULL, at INTEGER NOT NULL)`,
	BareCallWrites: `CREATE TABLE ops (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, op_key TEXT NOT NULL,
			args TEXT NOT NULL, state TEXT NOT NULL, receipt TEXT, created_at INTEGER NOT NULL, UNIQUE (tenant, op_key));
		CREATE TABLE effects (id INTEGER PRIMARY KEY, operation_id INTEGER NOT NULL UNIQUE, subject TEXT NOT NULL);
		CREATE TABLE tries (id INTEGER PRIMARY KEY, operation_id INTEGER NOT NULL, seq INTEGER NOT NULL,
			outcome TEXT NOT NULL, started_at INTEGER NOT NULL, UNIQUE (operation_id, seq))`,
}

// Baseline runs n write transactions (BEGIN IMMEDIATE, what writes says,
// COMMIT) from workers goroutines against a new file at path, with
// exactly the connection settings a ledger gets (WAL, the same synchronous
// level, one writer connection that in-process writers queue for). It is the
// cost of a durable commit of those writes on this file system, one
// transaction each (no group commit), so the ratio of the call path's rate
// to it says what retrysafe's own work costs and what sharing commits buys.
// The statements are prepared once, as a ledger's writer keeps them. The
// file must not exist; it is removed afterwards.
func Baseline(ctx context.Context, path string, n, workers int, d store.Durability, writes BareWrites) (BaselineResult, error) {
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
	schema, ok := bareSchema[writes]
	if !ok {
		return res, model.Errorf(model.CodeInvalid, "baseline: unknown kind of writes %d", writes)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return res, model.Wrap(model.CodeInternal, err, "baseline %s: %v", path, err)
	}
	write, err := bareWriter(ctx, db, writes)
	if err != nil {
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
					if err := write(tx, i, t0); err != nil {
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

// bareWriter prepares writes' statements on db and returns what one
// transaction (the i-th) runs with them.
func bareWriter(ctx context.Context, db *sql.DB, writes BareWrites) (func(tx *sql.Tx, i int, t0 time.Time) error, error) {
	if writes == BareOneRow {
		ins, err := db.PrepareContext(ctx, `INSERT INTO baseline (v, at) VALUES (?, ?)`)
		if err != nil {
			return nil, err
		}
		return func(tx *sql.Tx, _ int, t0 time.Time) error {
			_, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "row", t0.UnixMilli())
			return err
		}, nil
	}
	var st [4]*sql.Stmt
	for i, q := range []string{
		`INSERT INTO ops (tenant, op_key, args, state, created_at) VALUES (?, ?, ?, 'applied', ?) RETURNING id`,
		`INSERT INTO effects (operation_id, subject) VALUES (?, ?) RETURNING id`,
		`UPDATE ops SET receipt = ? WHERE id = ?`,
		`INSERT INTO tries (operation_id, seq, outcome, started_at) VALUES (?, 1, 'created', ?)`,
	} {
		var err error
		if st[i], err = db.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
	}
	return func(tx *sql.Tx, i int, t0 time.Time) error {
		var opID, effID int64
		at := t0.UnixMilli()
		if err := tx.StmtContext(ctx, st[0]).QueryRowContext(ctx, "bench", "k"+strconv.Itoa(i), `{"subject":"s"}`, at).Scan(&opID); err != nil {
			return err
		}
		if err := tx.StmtContext(ctx, st[1]).QueryRowContext(ctx, opID, "s").Scan(&effID); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, st[2]).ExecContext(ctx, `{"result":{"task_id":`+strconv.FormatInt(effID, 10)+`}}`, opID); err != nil {
			return err
		}
		_, err := tx.StmtContext(ctx, st[3]).ExecContext(ctx, opID, at)
		return err
	}, nil
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
