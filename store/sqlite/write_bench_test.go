package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// newOperationWrites is what the writer does for one new operation of a
// local tool (reconcile.CallLocalTx): the key and its tombstone looked up
// and not found, the operation, its task, its receipt and its attempt.
func newOperationWrites(tx store.Tx, key string) error {
	if _, err := tx.GetOperation("bench", key); !model.IsCode(err, model.CodeNotFound) {
		return fmt.Errorf("key %s: %v", key, err)
	}
	if _, err := tx.GetTombstone("bench", key); !model.IsCode(err, model.CodeNotFound) {
		return fmt.Errorf("tombstone %s: %v", key, err)
	}
	op := &model.Operation{Tenant: "bench", Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: json.RawMessage(`{"subject":"printer on fire"}`), Summary: "printer on fire",
		Fingerprint: strings.Repeat("a", 64), State: model.StateApplied, Receipt: json.RawMessage(`{}`),
		ClaimNo: 1, ExpiresAt: tx.Now().Add(24 * time.Hour)}
	if err := tx.InsertOperation(op); err != nil {
		return err
	}
	res, err := tx.InsertLocalEffect(store.LocalEffect{Table: model.TableTasks, Tool: op.Tool, Tenant: op.Tenant,
		OperationID: op.ID, Text: "printer on fire"})
	if err != nil {
		return err
	}
	if err := tx.SetReceipt(op.ID, append(append([]byte(`{"status":"created","result":`), res...), '}')); err != nil {
		return err
	}
	return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeCreated,
		Fingerprint: op.Fingerprint, TraceID: "trace-" + key, WorkerID: "bench"})
}

// BenchmarkNewOperationWrites is the writer's own work per new operation
// (ns/op), 16 operations to a transaction as the gateway's group commit
// carries them at 32 clients, on a ledger of 20,000 operations, without
// the fsync (Durability Fast): the CPU a new call costs the one writer,
// which bounds the rate of new calls once the fsync is shared.
func BenchmarkNewOperationWrites(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "l.db"), store.Options{Create: true, Durability: store.Fast})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const perTx = 16
	n := 0
	batch := func(count int) {
		if err := s.WithTx(ctx, func(tx store.Tx) error {
			for j := 0; j < count; j++ {
				if err := newOperationWrites(tx, fmt.Sprintf("key-%d", n+j)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		n += count
	}
	for n < 20_000 {
		batch(500)
	}
	b.ResetTimer()
	cpu0 := processCPU(b)
	for done := 0; done < b.N; done += perTx {
		batch(min(perTx, b.N-done))
	}
	// The machine is shared: CPU time per operation is what a loaded
	// machine disturbs least, more than ns/op (wall time).
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
