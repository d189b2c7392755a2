package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// replayOnce is a replay's transaction (read the operation, append a
// replayed attempt), relaxed as the ledger runs it.
func replayOnce(t *testing.T, l store.Ledger, tenant, key string) (*model.Operation, error) {
	t.Helper()
	var got *model.Operation
	err := l.WithAttemptTx(ctxT(t), func(tx store.Tx) error {
		op, err := tx.GetOperation(tenant, key)
		if err != nil {
			return err
		}
		got = op
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: op.Fingerprint})
	})
	return got, err
}

// A replay answers with the operation as it is now, whoever changed it
// between two replays on one long-lived handle: another process (a
// decision, a compaction), another handle in this process (the
// console's), this handle durably — and never with a change that was
// rolled back, alone or as one savepoint of several concurrent callers.
func testReplaysSeeEveryChangeAndNoRolledBackOne(t *testing.T, h *harness) {
	op := newOp("acme", "k", model.StateApplied)
	op.ExpiresAt = h.now.Add(time.Hour) // long past for a worker on the real clock
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	replay := func(what string) *model.Operation {
		t.Helper()
		var got *model.Operation
		for i := 0; i < 3; i++ { // more than once: a cache would be filled
			o, err := replayOnce(t, h.L, "acme", "k")
			if err != nil {
				t.Fatalf("%s: replay: %v", what, err)
			}
			if got != nil && (o.Version != got.Version || o.State != got.State || string(o.Receipt) != string(got.Receipt)) {
				t.Fatalf("%s: replays disagree with nothing changed: %d %s then %d %s", what, got.Version, got.State, o.Version, o.State)
			}
			got = o
		}
		return got
	}
	want := func(what string, got *model.Operation, ver int64, st model.State, receipt string) {
		t.Helper()
		if got.Version != ver || got.State != st || string(got.Receipt) != receipt {
			t.Errorf("%s: replay read version %d %s %s; want version %d %s %s", what, got.Version, got.State, got.Receipt, ver, st, receipt)
		}
	}
	first := replay("start")
	want("start", first, 1, model.StateApplied, `{"status":"created"}`)

	// A rolled-back change on this handle: the replay still reads the row.
	boom := errors.New("rolled back on purpose")
	err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
		cur, err := tx.GetOperation("acme", "k")
		if err != nil {
			return err
		}
		next := *cur
		next.Receipt = []byte(`{"status":"rolled_back"}`)
		if err := tx.UpdateOperation(&next, cur.State, cur.Version); err != nil {
			return err
		}
		if _, err := tx.GetOperation("acme", "k"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("rolled-back change: %v", err)
	}
	want("after a rollback", replay("after a rollback"), 1, model.StateApplied, `{"status":"created"}`)

	// A failing change among concurrent replays (one batch, savepoints).
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := replayOnce(t, h.L, "acme", "k"); err != nil {
				t.Errorf("concurrent replay: %v", err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = h.L.WithTx(ctxT(t), func(tx store.Tx) error {
			cur, err := tx.GetOperation("acme", "k")
			if err != nil {
				return err
			}
			next := *cur
			next.Receipt = []byte(`{"status":"savepoint_rolled_back"}`)
			if err := tx.UpdateOperation(&next, cur.State, cur.Version); err != nil {
				return err
			}
			return boom
		})
	}()
	wg.Wait()
	want("after a failed savepoint", replay("after a failed savepoint"), 1, model.StateApplied, `{"status":"created"}`)

	// Another handle in this process (the console's) decides.
	other := h.open(t, store.Options{})
	if err := other.WithTx(ctxT(t), func(tx store.Tx) error {
		cur, err := tx.GetOperation("acme", "k")
		if err != nil {
			return err
		}
		next := *cur
		next.Receipt = []byte(`{"status":"console"}`)
		return tx.UpdateOperation(&next, cur.State, cur.Version)
	}); err != nil {
		t.Fatal(err)
	}
	want("after the console's change", replay("after the console's change"), 2, model.StateApplied, `{"status":"console"}`)

	// Another process decides it failed.
	if code, rep := runChildProcess(t, childSpec{Location: h.loc, Mode: "decide", Tenant: "acme", Keys: []string{"k"}}); code != 0 || len(rep.Errors) > 0 {
		t.Fatalf("supersede worker: exit %d %+v", code, rep)
	}
	want("after another process's decision", replay("after another process's decision"), 3, model.StateFailed, `{"status":"failed_by_decision"}`)

	// Another process compacts it: the key has no operation any more.
	if code, rep := runChildProcess(t, childSpec{Location: h.loc, Mode: "compact"}); code != 0 || len(rep.Errors) > 0 || rep.Bumps != 1 {
		t.Fatalf("compaction worker: exit %d %+v; want one operation compacted", code, rep)
	}
	for i := 0; i < 3; i++ {
		_, err := replayOnce(t, h.L, "acme", "k")
		mustCode(t, "replay of a compacted key", err, model.CodeNotFound)
	}
	var ts *model.Tombstone
	if err := h.L.WithTx(ctxT(t), func(tx store.Tx) (err error) { ts, err = tx.GetTombstone("acme", "k"); return err }); err != nil || ts.FinalState != model.StateFailed {
		t.Errorf("tombstone %+v, %v; want one of a failed operation", ts, err)
	}
}
