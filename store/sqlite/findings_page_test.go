package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// countFindingReads makes every statement the store's readers compile
// from now on count in n when it reads a lookup's words (attempts.detail):
// a statement that reads findings. The readers are narrowed to one
// connection, so the counting authorizer sees all of them.
func countFindingReads(t *testing.T, s *Store) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	s.r.SetMaxOpenConns(1)
	conn, err := s.r.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		reg, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("the driver's connection has no authorizer")
		}
		return reg.RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, table, column, _, _ string) sqlite.AuthorizerReturnCode {
			if action == sqlite.AuthRead && table == "attempts" && column == "detail" {
				n.Add(1)
			}
			return sqlite.AuthorizerOK
		})
	}); err != nil {
		t.Fatal(err)
	}
	return &n
}

// A page's findings are read in one statement, not one per checked row
// (the console's list and ops list read 50 to 100 rows a page); Get reads
// its operation's finding, and none for an operation never checked.
func TestAListPageReadsItsFindingsInOneStatement(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	const n = 60
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		for i := range n {
			op := newOp(fmt.Sprintf("k%02d", i), model.StateUnknown)
			op.Provider = "sandbox"
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			if i == 0 {
				continue // never checked
			}
			for j, f := range []model.FindingKind{model.FindingCannotTell, model.FindingHasIt} {
				if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
					Finding: f, ProviderRef: fmt.Sprintf("sbx_%d_%d", i, j), Detail: fmt.Sprintf("lookup %d of k%02d", j, i),
					StartedAt: time.UnixMilli(int64(i*10 + j)).UTC()}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reads := countFindingReads(t, s)
	ops, err := s.List(ctx, store.ListQuery{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got := reads.Load(); len(ops) != 50 || got > 1 {
		t.Fatalf("a page of %d checked operations compiled %d statements reading findings; want 1", len(ops), got)
	}
	for _, op := range ops {
		var i int
		fmt.Sscanf(op.Key, "k%02d", &i)
		if f := op.Finding; f == nil || f.Kind != model.FindingHasIt || f.Ref != fmt.Sprintf("sbx_%d_1", i) || f.Provider != "sandbox" || f.Seq != 2 {
			t.Fatalf("%s: finding %+v; want its second lookup's has it", op.Key, f)
		}
	}

	reads.Store(0)
	op, err := s.Get(ctx, "t", "k00")
	if err != nil || op.Finding != nil || reads.Load() != 0 {
		t.Fatalf("Get of a never-checked operation: %+v, %v, %d finding reads", op, err, reads.Load())
	}
	op, err = s.Get(ctx, "t", "k07")
	if err != nil || op.Finding == nil || op.Finding.Ref != "sbx_7_1" {
		t.Fatalf("Get of a checked operation: finding %+v, %v", op, err)
	}
}

// BenchmarkListCheckedPage: one page of 50 operations that all have a
// recorded finding (a console tab after a triage run).
func BenchmarkListCheckedPage(b *testing.B) {
	s, _ := openLedger(b, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		for i := range 500 {
			op := newOp(fmt.Sprintf("k%03d", i), model.StateUnknown)
			op.Provider = "sandbox"
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
				Finding: model.FindingHasIt, ProviderRef: "sbx", Detail: "found", StartedAt: time.UnixMilli(int64(i)).UTC()}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if ops, err := s.List(ctx, store.ListQuery{Limit: 50}); err != nil || len(ops) != 50 {
			b.Fatal(len(ops), err)
		}
	}
}
