package sqlite

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// With LeaveWAL, a store that only appended attempts (a replay) closes
// without merging its small WAL into the file, and the next opener — a
// writer or a reader — sees every row. A durable commit, or a log over the
// limit, is checkpointed on close as before.
func TestLeaveWALKeepsASmallLogOfAttemptsOnlyAndLosesNothing(t *testing.T) {
	ctx := context.Background()
	s, path := openLedger(t, store.Options{})
	var opID int64
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op := newOp("k", model.StateApplied)
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		opID = op.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if walSize(t, path) != 0 {
		t.Fatalf("a store without LeaveWAL left a WAL of %d bytes", walSize(t, path))
	}

	replay := func(o store.Options) {
		t.Helper()
		s, err := Open(path, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WithAttemptTx(ctx, func(tx store.Tx) error {
			return tx.InsertAttempt(&model.Attempt{OperationID: opID, Outcome: model.OutcomeReplayed,
				Fingerprint: strings.Repeat("0", 64), StartedAt: time.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	replay(store.Options{LeaveWAL: true})
	replay(store.Options{LeaveWAL: true})
	if walSize(t, path) == 0 {
		t.Fatal("replays with LeaveWAL: the WAL was checkpointed and removed on close")
	}
	for _, ro := range []bool{false, true} {
		r, err := Open(path, store.Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.Detail(ctx, "t", "k")
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Attempts) != 2 {
			t.Errorf("read-only=%v: %d attempts after two replays that left the WAL, want 2", ro, len(d.Attempts))
		}
	}

	// A durable commit is merged into the file on close, LeaveWAL or not.
	s, err := Open(path, store.Options{LeaveWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "k2") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := walSize(t, path); n != 0 {
		t.Errorf("a durable commit with LeaveWAL left a WAL of %d bytes; want it checkpointed", n)
	}

	// So is a log over the limit.
	replay(store.Options{LeaveWAL: true})
	if err := os.Truncate(path+"-wal", leaveWALMaxBytes+1); err != nil {
		t.Fatal(err)
	}
	replay(store.Options{LeaveWAL: true})
	if n := walSize(t, path); n != 0 {
		t.Errorf("a WAL over %d bytes was left (%d bytes); want it checkpointed", leaveWALMaxBytes, n)
	}
	r, err := Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if d, err := r.Detail(ctx, "t", "k"); err != nil || len(d.Attempts) != 4 {
		t.Errorf("after the checkpoint: %v attempts (err %v), want 4", d, err)
	}
}

// walSize is the size of path's -wal, 0 when there is none.
func walSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
