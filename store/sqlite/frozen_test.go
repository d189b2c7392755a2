package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
)

// A read-only ledger in a directory this process may not write is read as
// an immutable file (open's fallback): SQLite takes no lock and never asks
// whether the file changed, so what it reads is a snapshot. The store says
// so (Frozen), reads it on one connection (pooled connections each kept
// their own stale pages: a console showed counts from one and rows from
// another), and its watcher reports the file changing on disk instead of
// "nothing changed" for ever.
func TestAnImmutableReadIsFrozenOnOneConnectionAndSaysWhenTheFileChanged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	made, err := Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := made.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "before") }); err != nil {
		t.Fatal(err)
	}
	made.Close()

	for _, opts := range []store.Options{{}, {ReadOnly: true}} {
		s, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.Frozen() {
			t.Errorf("Open(%+v).Frozen() = true; only the immutable fallback is", opts)
		}
		s.Close()
	}
	var _ store.FrozenReporter = (*Store)(nil)

	s, err := open(path, options{Options: store.Options{ReadOnly: true}, immutable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Frozen() {
		t.Fatal("the immutable open's Frozen() = false")
	}
	if n := s.r.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("immutable reader pool allows %d connections; want 1 (one view)", n)
	}
	w, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The watcher pins nothing the single reader needs.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := s.Get(rctx, "t", "before"); err != nil {
		t.Fatalf("read beside the watcher: %v", err)
	}
	if changed, err := w.Changed(ctx); changed || err != nil {
		t.Fatalf("Changed on an untouched file = %v, %v; want false, nil", changed, err)
	}

	// Another process (allowed to write here) commits: first into its
	// log only (LeaveWAL, no checkpoint yet), then, closing, into the
	// ledger file itself.
	other, err := Open(path, store.Options{LeaveWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "after") }); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"in the log", "checkpointed"} {
		if when == "checkpointed" {
			other.Close()
			plainExec(t, path, "PRAGMA wal_checkpoint(TRUNCATE)")
		}
		for range 2 { // and it keeps saying so
			_, err := w.Changed(ctx)
			if err == nil || !strings.Contains(err.Error(), "changed on disk") || !strings.Contains(err.Error(), "reopen") {
				t.Errorf("Changed after a commit %s = %v; want it to say the file changed on disk and to reopen", when, err)
			}
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
