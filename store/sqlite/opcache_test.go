package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// replayRead is what a replay does in its relaxed transaction: read the
// operation, append an attempt row. It returns the operation as read.
func replayRead(t *testing.T, s *Store, key string) *model.Operation {
	t.Helper()
	var got *model.Operation
	err := s.WithAttemptTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation("t", key)
		if err != nil {
			return err
		}
		got = op
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: op.Fingerprint})
	})
	if err != nil {
		t.Fatalf("replay of %s: %v", key, err)
	}
	return got
}

// The writer's operation cache never answers with an operation another
// write has changed: whoever changed it — another connection or process
// on the file, or this store in a durable transaction — the next relaxed
// read sees the row as it is.
func TestTheOperationCacheNeverHidesAChange(t *testing.T) {
	const changed = `{"status":"created","changed":true}`
	update := func(tx store.Tx) error {
		op, err := tx.GetOperation("t", "k")
		if err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.State, op.Receipt = model.StateApplied, []byte(changed)
		return tx.UpdateOperation(op, from, ver)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, s *Store, path string)
	}{
		{"another store on the file", func(t *testing.T, s *Store, path string) {
			other, err := Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := other.WithTx(context.Background(), update); err != nil {
				t.Fatal(err)
			}
		}},
		{"a plain SQL connection (another process)", func(t *testing.T, s *Store, path string) {
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE operations SET state = 'applied', receipt = ?, version = version + 1
				WHERE tenant = 't' AND op_key = 'k'`, changed); err != nil {
				t.Fatal(err)
			}
		}},
		{"this store, durably", func(t *testing.T, s *Store, path string) {
			if err := s.WithTx(context.Background(), update); err != nil {
				t.Fatal(err)
			}
		}},
		{"this store, an attempt transaction that turns durable", func(t *testing.T, s *Store, path string) {
			if err := s.WithAttemptTx(context.Background(), update); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, path := openLedger(t, store.Options{})
			if err := s.WithTx(context.Background(), func(tx store.Tx) error { return insertOp(tx, "k") }); err != nil {
				t.Fatal(err)
			}
			before := replayRead(t, s, "k")
			if again := replayRead(t, s, "k"); again.Version != before.Version {
				t.Fatalf("version %d then %d with no change between", before.Version, again.Version)
			}
			if _, ok := s.opc.ops[opCacheKey("t", "k")]; !ok {
				t.Fatal("a relaxed read did not fill the cache: this test would prove nothing")
			}
			c.change(t, s, path)
			after := replayRead(t, s, "k")
			if after.Version != before.Version+1 || after.State != model.StateApplied || string(after.Receipt) != changed {
				t.Fatalf("after the change the replay read version %d, state %s, receipt %s; want version %d, applied, %s",
					after.Version, after.State, after.Receipt, before.Version+1, changed)
			}
		})
	}
}

// What a caller does with the operation it read never reaches the cache.
func TestTheOperationCacheHandsOutCopies(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "k") }); err != nil {
		t.Fatal(err)
	}
	first := replayRead(t, s, "k")
	want := string(first.Args)
	first.Args[0] = 'X'
	first.State, first.Fingerprint = model.StateUnknown, strings.Repeat("0", 64)
	second := replayRead(t, s, "k")
	second.Args[0] = 'Y'
	third := replayRead(t, s, "k")
	if string(third.Args) != want || third.State != model.StateNotApplied || third.Fingerprint != strings.Repeat("f", 64) {
		t.Fatalf("read %s %s %.8s after callers changed their copies; want %s not_applied ffffffff", third.Args, third.State, third.Fingerprint, want)
	}
}
