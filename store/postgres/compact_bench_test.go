package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// BenchmarkCompactExpired is one sweep's compaction of every expired
// receipt of a ledger (ms/op), in the sweep's batches of 200, on ledgers of
// 2,000 and 20,000, every tenth receipt superseding an older operation:
// with every statement on an index the cost per receipt (ns/receipt) and
// the longest transaction (max-tx-ms) stay flat as the ledger grows.
func BenchmarkCompactExpired(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{2_000, 20_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			var longest time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := postgres.Open(pgtest.URL(b), store.Options{Create: true})
				if err != nil {
					b.Fatal(err)
				}
				if err := postgres.Exec(ctx, s, fmt.Sprintf(`INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, receipt, created_at, updated_at, expires_at)
						SELECT 't', 'k' || i, 'create_support_task', 1, '{}', repeat('a', 64), 'applied', '{}', 1, 1, 2 FROM generate_series(1, %d) i;
					INSERT INTO operations (tenant, op_key, tool, payload_version, args, fingerprint, state, superseded_by_id, created_at, updated_at)
						SELECT 't', 'old' || id, tool, 1, '{}', repeat('a', 64), 'superseded', id, 1, 1 FROM operations WHERE id %% 10 = 0;
					UPDATE operations o SET supersedes_id = p.id FROM operations p WHERE p.superseded_by_id = o.id;
					INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) SELECT id, 1, 'created', fingerprint, 1 FROM operations;
					ANALYZE operations`, n)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				total := 0
				for {
					var c int
					start := time.Now()
					if err := s.WithTx(ctx, func(tx store.Tx) error {
						var err error
						c, _, err = tx.CompactExpired(time.Hour, 200)
						return err
					}); err != nil {
						b.Fatal(err)
					}
					longest = max(longest, time.Since(start))
					total += c
					if c < 200 {
						break
					}
				}
				b.StopTimer()
				if total != n {
					b.Fatalf("compacted %d of %d", total, n)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/receipt")
			b.ReportMetric(float64(longest.Microseconds())/1000, "max-tx-ms")
		})
	}
}
