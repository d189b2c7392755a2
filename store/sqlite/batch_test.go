package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Concurrent transactions share commits (group commit);
// each caller must still see exactly its own outcome: its rows commit when
// its fn succeeds, vanish when its fn fails or panics — whatever the others
// in the same commit did — and its panic is raised in its own goroutine.
func TestGroupCommitKeepsEachCallersOutcome(t *testing.T) {
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

// queueBehindTheWriter holds the writer with one transaction until every fn
// has queued behind it, then lets go: the queued fns run as one batch.
func queueBehindTheWriter(t *testing.T, s *Store, fns []func(store.Tx) error) []error {
	t.Helper()
	ctx := context.Background()
	release := make(chan struct{})
	holding := make(chan struct{})
	go s.WithTx(ctx, func(store.Tx) error {
		close(holding)
		<-release
		return nil
	})
	<-holding
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.WithTx(ctx, fn) }()
	}
	for queued := 0; queued < len(fns); {
		time.Sleep(time.Millisecond)
		s.qmu.Lock()
		queued = len(s.queue)
		s.qmu.Unlock()
	}
	close(release)
	wg.Wait()
	return errs
}

// When SQLite rolls the whole batch back under one fn (here a trigger's
// RAISE(ROLLBACK); a full disk or an I/O error does the same), that fn gets
// its error and every other fn of the batch is run again, and commits: none
// is lost, none half-written.
func TestALostBatchRunsTheOthersAgain(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	plainExec(t, path, `CREATE TRIGGER boom BEFORE INSERT ON operations WHEN NEW.op_key = 'boom'
		BEGIN SELECT RAISE(ROLLBACK, 'boom rolls back the whole transaction'); END`)
	keys := []string{"a", "b", "boom", "c", "d"}
	var fns []func(store.Tx) error
	runs := make([]int, len(keys))
	for i, k := range keys {
		fns = append(fns, func(tx store.Tx) error { runs[i]++; return insertOp(tx, k) })
	}
	errs := queueBehindTheWriter(t, s, fns)
	for i, k := range keys {
		_, getErr := s.Get(context.Background(), "t", k)
		if k == "boom" {
			if errs[i] == nil {
				t.Error("boom: no error")
			}
			if getErr == nil {
				t.Error("boom's row committed")
			}
			continue
		}
		if errs[i] != nil || getErr != nil {
			t.Errorf("%s: err %v, read %v; want committed", k, errs[i], getErr)
		}
	}
	// A fn before boom ran three times: without savepoints (boom failed
	// there), in its savepoint (boom lost the batch), and again.
	again := 0
	for i, k := range keys {
		if k != "boom" && runs[i] > 2 {
			again++
		}
	}
	if again == 0 {
		t.Error("no fn ran again: the batch was not lost (the test did not reach the branch)")
	}
}

// A COMMIT that fails (here a deferred foreign key; a full disk does the
// same) is the failure of every fn in the batch that had succeeded: each
// gets the error, and none of their rows is there.
func TestAFailedCommitFailsEveryCallerInTheBatch(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	keys := []string{"a", "b", "dangling", "c"}
	var fns []func(store.Tx) error
	for _, k := range keys {
		fns = append(fns, func(tx store.Tx) error {
			if err := insertOp(tx, k); err != nil {
				return err
			}
			if k != "dangling" {
				return nil
			}
			// Checked at COMMIT, not here: an attempt of an operation
			// that does not exist.
			raw := tx.(*Tx)
			if _, err := raw.tx.ExecContext(raw.ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
				return err
			}
			_, err := raw.tx.ExecContext(raw.ctx, `INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at)
				VALUES (999999, 1, 'created', 'f', 0)`)
			return err
		})
	}
	errs := queueBehindTheWriter(t, s, fns)
	for i, k := range keys {
		if errs[i] == nil || !strings.Contains(errs[i].Error(), "commit") {
			t.Errorf("%s: err %v; want the failed commit", k, errs[i])
		}
		if _, err := s.Get(context.Background(), "t", k); !model.IsCode(err, model.CodeNotFound) {
			t.Errorf("%s: its row is there after a failed commit (%v)", k, err)
		}
	}
}

// A batch in which no fn fails runs each fn once (with no savepoints); one
// in which a fn fails runs again with a savepoint for each: the failing fn
// gets its own error and nothing of it commits, every other fn commits
// once, and no fn runs more than twice.
func TestAFnThatFailsInABatchLeavesTheOthersCommittedOnce(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"none fails", []string{"a", "b", "c", "d"}},
		{"one fails", []string{"a", "b", "fail", "c", "d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openLedger(t, store.Options{})
			var fns []func(store.Tx) error
			runs := make([]int, len(c.keys))
			for i, k := range c.keys {
				fns = append(fns, func(tx store.Tx) error {
					runs[i]++
					if err := insertOp(tx, k); err != nil {
						return err
					}
					if k == "fail" {
						return model.Errorf(model.CodeInvalid, "%s changed its mind", k)
					}
					return nil
				})
			}
			var batches []int // only the writer calls it, one batch at a time
			s.ObserveBatches(func(n int) { batches = append(batches, n) })
			errs := queueBehindTheWriter(t, s, fns)
			for i, k := range c.keys {
				_, getErr := s.Get(context.Background(), "t", k)
				if k == "fail" {
					if !model.IsCode(errs[i], model.CodeInvalid) || getErr == nil {
						t.Errorf("fail: err %v, read %v; want its own error and no row", errs[i], getErr)
					}
				} else if errs[i] != nil || getErr != nil {
					t.Errorf("%s: err %v, read %v; want committed", k, errs[i], getErr)
				}
				if max := map[bool]int{false: 1, true: 2}[c.name == "one fails"]; runs[i] > max {
					t.Errorf("%s ran %d times; want at most %d", k, runs[i], max)
				}
			}
			if got := batches[len(batches)-1]; got != len(c.keys) {
				t.Errorf("the last batch carried %d fns, want %d (the test did not batch them)", got, len(c.keys))
			}
		})
	}
}
