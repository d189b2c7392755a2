package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
)

// seedExpired fills a new ledger with n applied operations whose replay
// window ended long ago, each with its attempt, every tenth one the
// successor of a superseded operation (a chain of two, compacted
// together): what a sweep finds on a ledger nobody swept for a while.
func seedExpired(tb testing.TB, n int) *Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "l.db")
	s, err := Open(path, store.Options{Create: true, Durability: store.Fast})
	if err != nil {
		tb.Fatal(err)
	}
	fp := strings.Repeat("a", 64)
	if err := s.WithTx(context.Background(), func(tx store.Tx) error {
		for _, q := range []string{
			`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ` + fmt.Sprint(n) + `)
				INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at, expires_at)
				SELECT 't', 'k' || i, 'create_support_task', 1, '{}', '` + fp + `', 'applied', '{}', 1, 1, 2 FROM n`,
			`INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, superseded_by_id, created_at, updated_at)
				SELECT 't', 'old' || id, tool, 1, '{}', '` + fp + `', 'superseded', id, 1, 1 FROM operations WHERE id % 10 = 0 AND state = 'applied'`,
			`UPDATE operations SET supersedes_id = (SELECT p.id FROM operations p WHERE p.tenant = 't' AND p.op_key = 'old' || operations.id)
				WHERE id % 10 = 0 AND state = 'applied'`,
			`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) SELECT id, 1, 'created', fingerprint, 1 FROM operations`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	// Closed and opened again: the seed is checkpointed into the ledger,
	// not left in the WAL for the first compaction to copy.
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	s, err = Open(path, store.Options{Durability: store.Fast})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkCompactExpired is one sweep's compaction of every expired
// receipt of a ledger (ms/op), in the sweep's batches, on ledgers of 2,000
// and 20,000: with every statement on an index the cost per receipt
// (ns/receipt; cpu-ns/receipt, which a shared machine disturbs least)
// stays flat as the ledger grows, and so does the longest transaction
// (max-tx-ms), the longest a call waits for the writer.
func BenchmarkCompactExpired(b *testing.B) {
	for _, n := range []int{2_000, 20_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			var longest, cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := seedExpired(b, n)
				b.StartTimer()
				cpu0 := processCPU(b)
				total := 0
				for {
					var c int
					start := time.Now()
					if err := s.WithTx(context.Background(), func(tx store.Tx) error {
						var err error
						c, _, err = tx.CompactExpired(time.Hour, compactBatch)
						return err
					}); err != nil {
						b.Fatal(err)
					}
					longest = max(longest, time.Since(start))
					total += c
					if c < compactBatch {
						break
					}
				}
				b.StopTimer()
				cpu += processCPU(b) - cpu0
				if total != n {
					b.Fatalf("compacted %d of %d", total, n)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/receipt")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/receipt")
			b.ReportMetric(float64(longest.Microseconds())/1000, "max-tx-ms")
		})
	}
}

// compactBatch is the sweep's batch (reconcile.CompactBatch).
const compactBatch = 200
