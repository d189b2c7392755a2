package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// insertApplied makes an applied operation with a receipt under key.
func insertApplied(t testing.TB, s *Store, key string) *model.Operation {
	t.Helper()
	op := &model.Operation{Tenant: "t", Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{}`), Fingerprint: strings.Repeat("f", 64), State: model.StateApplied, ClaimNo: 1,
		Receipt: json.RawMessage(`{"status":"created","key":"` + key + `"}`), ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.WithTx(context.Background(), func(tx store.Tx) error { return tx.InsertOperation(op) }); err != nil {
		t.Fatal(err)
	}
	return op
}

func attemptsOf(t testing.TB, s *Store, key string) []model.Attempt {
	t.Helper()
	d, err := s.Detail(context.Background(), "t", key)
	if err != nil {
		t.Fatal(err)
	}
	return d.Attempts
}

func replayAttempt(trace string) *model.Attempt {
	return &model.Attempt{Outcome: model.OutcomeReplayed, Fingerprint: strings.Repeat("f", 64), TraceID: trace, WorkerID: "w"}
}

// AppendReplay writes the attempt only while the operation is exactly as
// it was read — by this store or any other connection — and the cache of
// ReplayPeek never outlives a change: after a change the next peek reads
// the row again.
func TestAppendReplayWritesOnlyWhileTheOperationIsAsRead(t *testing.T) {
	ctx := context.Background()
	bump := func(other *Store, key string) {
		if err := other.WithTx(ctx, func(tx store.Tx) error {
			op, err := tx.GetOperation("t", key)
			if err != nil {
				return err
			}
			from, ver := op.State, op.Version
			op.Contradicted = true
			return tx.UpdateOperation(op, from, ver)
		}); err != nil {
			t.Fatal(err)
		}
	}
	compact := func(other *Store, key string) {
		if err := other.WithTx(ctx, func(tx store.Tx) error {
			_, err := tx.(*Tx).tx.Exec(`DELETE FROM operations WHERE tenant = 't' AND op_key = ?`, key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		change func(other *Store, key string) // nil: unchanged
		want   bool
	}{
		{"unchanged", nil, true},
		{"updated by another process", bump, false},
		{"compacted by another process", compact, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, path := openLedger(t, store.Options{})
			insertApplied(t, s, "k")
			op, err := s.ReplayPeek(ctx, "t", "k")
			if err != nil {
				t.Fatal(err)
			}
			if c.change != nil {
				other, err := Open(path, store.Options{})
				if err != nil {
					t.Fatal(err)
				}
				c.change(other, "k")
				other.Close()
			}
			cached, err := s.ReplayPeek(ctx, "t", "k")
			if err != nil || cached.Version != op.Version {
				t.Fatalf("second peek = %+v, %v; want the cached version %d", cached, err, op.Version)
			}
			a := replayAttempt("trace-1")
			ok, err := s.AppendReplay(ctx, op, a)
			if err != nil || ok != c.want {
				t.Fatalf("AppendReplay = %v, %v; want %v", ok, err, c.want)
			}
			if c.want {
				got := attemptsOf(t, s, "k")
				if len(got) != 1 || got[0].Outcome != model.OutcomeReplayed || got[0].TraceID != "trace-1" || got[0].Seq != 1 || a.ID == 0 {
					t.Fatalf("attempts = %+v (a.ID %d); want one replayed attempt, seq 1", got, a.ID)
				}
				return
			}
			// Nothing written, and the cache forgot the stale copy.
			again, err := s.ReplayPeek(ctx, "t", "k")
			if c.change == nil {
				return
			}
			if model.IsCode(err, model.CodeNotFound) {
				return // compacted: read again, gone
			}
			if err != nil || again.Version == op.Version {
				t.Fatalf("peek after a failed append = %+v, %v; want the row read again", again, err)
			}
			if got := attemptsOf(t, s, "k"); len(got) != 0 {
				t.Fatalf("attempts = %+v; want none", got)
			}
		})
	}
}

// Concurrent appends share transactions and number their attempts 1..n.
func TestAppendReplayConcurrentCallersNumberTheirAttempts(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	insertApplied(t, s, "k")
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, err := s.ReplayPeek(ctx, "t", "k")
			if err != nil {
				errs <- err
				return
			}
			if ok, err := s.AppendReplay(ctx, op, replayAttempt(fmt.Sprint("t", i))); err != nil || !ok {
				errs <- fmt.Errorf("append %d: %v %v", i, ok, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := attemptsOf(t, s, "k")
	if len(got) != n {
		t.Fatalf("%d attempts; want %d", len(got), n)
	}
	for i, a := range got {
		if a.Seq != i+1 {
			t.Fatalf("attempt %d has seq %d", i, a.Seq)
		}
	}
}

// BenchmarkAppendReplay is a replay's ledger work: peek (cached) and the
// attempt row, 32 callers at once.
func BenchmarkAppendReplay(b *testing.B) {
	s, _ := openLedger(b, store.Options{})
	const keys = 256
	for i := 0; i < keys; i++ {
		insertApplied(b, s, fmt.Sprint("k", i))
	}
	ctx := context.Background()
	var next sync.Mutex
	i := 0
	b.SetParallelism(16) // 32 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			next.Lock()
			key := fmt.Sprint("k", i%keys)
			i++
			next.Unlock()
			op, err := s.ReplayPeek(ctx, "t", key)
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := s.AppendReplay(ctx, op, replayAttempt("bench")); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
}
