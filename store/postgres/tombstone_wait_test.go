package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// A call whose locked read waits for a compaction of its key must see the
// tombstone the compaction committed: the locked read then finds no row
// (deleted while it waited), and the tombstone is read by a statement whose
// snapshot is taken after that wait. Were the tombstone read in the locked
// read's own statement (its snapshot taken before the wait), the call would
// find neither and make the effect again.
func TestACallWaitingOnACompactionSeesItsTombstone(t *testing.T) {
	url := pgtest.URL(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := postgres.Open(url, store.Options{Create: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertOperation(&model.Operation{Tenant: "acme", Key: "k", Tool: "create_support_task", PayloadVersion: 1,
			Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64), State: model.StateApplied,
			Receipt: []byte(`{"status":"created"}`), ExpiresAt: now.Add(-time.Minute)})
	}); err != nil {
		t.Fatal(err)
	}

	compacting := make(chan uint32) // the compaction's server process
	release := make(chan struct{})
	compacted := make(chan error, 1)
	go func() {
		compacted <- s.WithTx(ctx, func(tx store.Tx) error {
			n, _, err := tx.CompactExpired(time.Hour, 10)
			if err != nil || n != 1 {
				close(compacting)
				return model.Errorf(model.CodeInternal, "compacted %d: %v", n, err)
			}
			compacting <- postgres.BackendPID(tx)
			<-release
			return nil
		})
	}()
	pid, ok := <-compacting
	if !ok {
		t.Fatal(<-compacted)
	}

	type seen struct {
		opErr error
		ts    *model.Tombstone
		tsErr error
	}
	called := make(chan seen, 1)
	go func() {
		var got seen
		err := s.WithTx(ctx, func(tx store.Tx) error {
			if h, ok := tx.(store.EffectHinter); ok {
				h.ExpectLocalEffect(model.TableTasks)
			}
			_, got.opErr = tx.GetOperation("acme", "k")
			got.ts, got.tsErr = tx.GetTombstone("acme", "k")
			return nil
		})
		if err != nil {
			got.opErr = err
		}
		called <- got
	}()

	// Commit the compaction only once the call waits for its row lock.
	for waiting := 0; waiting == 0; {
		if err := postgres.QueryRow(ctx, s, `SELECT COUNT(*) FROM pg_stat_activity WHERE `+
			strconv.FormatUint(uint64(pid), 10)+` = ANY(pg_blocking_pids(pid))`, &waiting); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatal("the call never waited for the compaction's lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	got := <-called
	if !model.IsCode(got.opErr, model.CodeNotFound) {
		t.Fatalf("the call read %v; want not found (compacted while it waited)", got.opErr)
	}
	if got.tsErr != nil || got.ts == nil || got.ts.FinalState != model.StateApplied || got.ts.Fingerprint != strings.Repeat("a", 64) {
		t.Fatalf("the call's tombstone: %+v, %v; want the compaction's (applied)", got.ts, got.tsErr)
	}
}
