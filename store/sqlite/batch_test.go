package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Concurrent transactions are combined into shared commits (group commit);
// each caller must still see exactly its own outcome: its rows commit when
// its fn succeeds, vanish when its fn fails or panics — whatever the others
// in the same commit did — and its panic is raised in its own goroutine.
func TestCombinedTransactionsKeepEachCallersOutcome(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	const n = 96
	var wg sync.WaitGroup
	errs := make([]error, n)
	panics := make([]any, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			fn := func(tx store.Tx) error {
				if err := insertOp(tx, fmt.Sprintf("k%d", i)); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return model.Errorf(model.CodeInvalid, "caller %d changed its mind", i)
				case 2:
					if i%8 == 2 {
						panic(fmt.Sprintf("caller %d panicked", i))
					}
				}
				return nil
			}
			if i%3 == 0 {
				errs[i] = s.WithAttemptTx(ctx, fn) // relaxed first, durable once it writes an operation
			} else {
				errs[i] = s.WithTx(ctx, fn)
			}
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		_, getErr := s.Get(ctx, "t", fmt.Sprintf("k%d", i))
		switch {
		case i%8 == 2:
			if panics[i] != fmt.Sprintf("caller %d panicked", i) {
				t.Errorf("caller %d: recovered %v; its own panic must reach it", i, panics[i])
			}
			if getErr == nil {
				t.Errorf("caller %d panicked but its row committed", i)
			}
		case i%4 == 1:
			if !model.IsCode(errs[i], model.CodeInvalid) || !strings.Contains(errs[i].Error(), fmt.Sprintf("caller %d ", i)) {
				t.Errorf("caller %d got %v; want its own error", i, errs[i])
			}
			if getErr == nil {
				t.Errorf("caller %d failed but its row committed", i)
			}
		default:
			if errs[i] != nil || panics[i] != nil || getErr != nil {
				t.Errorf("caller %d: err %v, panic %v, row %v; want committed", i, errs[i], panics[i], getErr)
			}
		}
	}
	if problems, err := s.Audit(ctx); err != nil || len(problems) > 0 {
		t.Errorf("audit: %v %v", problems, err)
	}
}

// A relaxed transaction may only append attempts: writing an operation
// sends it back to run durably, and it then commits exactly once.
func TestRelaxedTransactionThatWritesMoreRunsAgainDurably(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	runs, relaxedRuns := 0, 0
	err := s.WithAttemptTx(ctx, func(tx store.Tx) error {
		runs++
		if tx.(*Tx).relaxed {
			relaxedRuns++
		}
		return insertOp(tx, "k")
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || relaxedRuns != 1 {
		t.Errorf("fn ran %d times (%d relaxed); want once relaxed, refused, then once durably", runs, relaxedRuns)
	}
	c, _ := s.Counts(ctx, "")
	if c.Total != 1 {
		t.Errorf("%d operations, want 1", c.Total)
	}
}

// A caller whose deadline passed while it waited in the queue is not run.
func TestCombinedTransactionSkipsACallerWhoseDeadlinePassed(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := s.WithTx(ctx, func(tx store.Tx) error { ran = true; return insertOp(tx, "late") })
	if ran || !model.IsCode(err, model.CodeBusy) {
		t.Errorf("ran %v, err %v; want not run and a deadline error", ran, err)
	}
}
