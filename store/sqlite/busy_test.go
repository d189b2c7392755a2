package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// holdWriteLock takes the ledger's write lock from a connection of its own
// (the plain driver, as another process would) and returns its release.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	var once atomic.Bool
	release = func() {
		if once.CompareAndSwap(false, true) {
			conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

func insertOp(tx store.Tx, key string) error {
	return tx.InsertOperation(&model.Operation{Tenant: "t", Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{}`), Fingerprint: strings.Repeat("f", 64), State: model.StateNotApplied})
}

// Another writer holding the lock for a while is waited out inside the
// caller's deadline: the write happens, after the lock is released.
func TestBusyLedgerIsWaitedOutWithinTheDeadline(t *testing.T) {
	s, path := openLedger(t, store.Options{BusyTimeout: 50 * time.Millisecond})
	release := holdWriteLock(t, path)
	var released atomic.Bool
	go func() {
		time.Sleep(300 * time.Millisecond)
		released.Store(true)
		release()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runs := 0
	err := s.WithTx(ctx, func(tx store.Tx) error {
		runs++
		if !released.Load() {
			t.Error("the transaction ran while another connection held the write lock")
		}
		return insertOp(tx, "waited")
	})
	if err != nil {
		t.Fatalf("WithTx under a lock released within the deadline: %v", err)
	}
	if _, err := s.Get(context.Background(), "t", "waited"); err != nil {
		t.Errorf("the write is not there: %v", err)
	}
	if runs == 0 {
		t.Error("fn never ran")
	}
}

// A lock held past the deadline fails the call with CodeBusy and a message
// that says what happened — never SQLite's "database is locked" — and the
// deadline, not SQLite's busy timeout, decides when.
func TestBusyLedgerPastTheDeadlineFailsWithCodeBusy(t *testing.T) {
	for _, busyTimeout := range []time.Duration{20 * time.Millisecond, 5 * time.Second} {
		t.Run("busy timeout "+busyTimeout.String(), func(t *testing.T) {
			s, path := openLedger(t, store.Options{BusyTimeout: busyTimeout})
			holdWriteLock(t, path)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "never") })
			took := time.Since(start)
			if !model.IsCode(err, model.CodeBusy) {
				t.Fatalf("err = %v (code %q); want CodeBusy", err, model.CodeOf(err))
			}
			msg := oneLine(t, err)
			if strings.Contains(strings.ToLower(msg), "database is locked") {
				t.Errorf("message leaks the driver's text: %q", msg)
			}
			if !strings.Contains(msg, "locked by another writer") && !strings.Contains(msg, "deadline") {
				t.Errorf("message %q does not say the ledger stayed locked until the deadline", msg)
			}
			// Not a speed target: a 300 ms deadline must not turn into a
			// 5 s busy wait.
			if took > 3*time.Second {
				t.Errorf("gave up after %v; the deadline was 300ms", took)
			}
		})
	}
}

// Reads do not wait for writers: WAL readers see the last commit while
// another connection holds the write lock.
func TestReadsProceedWhileAWriterHoldsTheLock(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	if err := s.WithTx(context.Background(), func(tx store.Tx) error { return insertOp(tx, "before") }); err != nil {
		t.Fatal(err)
	}
	holdWriteLock(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.Get(ctx, "t", "before"); err != nil {
		t.Errorf("read blocked by a writer: %v", err)
	}
	if c, err := s.Counts(ctx, ""); err != nil || c.Total != 1 {
		t.Errorf("counts under a writer: %+v %v", c, err)
	}
}

// A caller whose deadline has passed never leaves the writer inside a
// transaction: however its cancellation races BEGIN IMMEDIATE, another
// connection (another process) can take the write lock right after.
func TestACancelledCallerNeverLeavesTheWriteLockHeld(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 2000; i++ {
		if err := s.WithTx(done, func(tx store.Tx) error { return insertOp(tx, "never") }); !model.IsCode(err, model.CodeBusy) {
			t.Fatalf("call %d with a cancelled context: %v; want busy", i, err)
		}
		if i%100 != 0 {
			continue
		}
		release := holdWriteLock(t, path)
		release()
	}
	// Deadlines that pass while BEGIN runs.
	for i := 0; i < 3000; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%40)*time.Microsecond)
		err := s.WithTx(ctx, func(tx store.Tx) error { return nil })
		cancel()
		if err != nil && !model.IsCode(err, model.CodeBusy) {
			t.Fatalf("call %d with a deadline of %dµs: %v; want done or busy", i, i%40, err)
		}
	}
	release := holdWriteLock(t, path)
	release()
	if err := s.WithTx(context.Background(), func(tx store.Tx) error { return insertOp(tx, "after") }); err != nil {
		t.Fatalf("a live caller after them: %v", err)
	}
}
