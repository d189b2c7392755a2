package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A ledger's files removed or replaced under an open store: what the store
// acknowledged must be in the files that bear the ledger's name, which are
// all that the next process (after a kill -9, a reboot) opens. Before, a
// removed -wal went unnoticed: every commit went on into the unlinked log,
// was acknowledged, and vanished with the process — and the next call of
// an acknowledged key made its effect a second time.
func TestCommitsAfterTheLedgersFilesAreRemovedAreNeverAcknowledgedAndLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		disturb func(t *testing.T, path string)
	}{
		{"write-ahead log removed", func(t *testing.T, path string) {
			if err := os.Remove(path + "-wal"); err != nil {
				t.Fatal(err)
			}
		}},
		{"ledger file replaced by a copy", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			copyFile(t, path+".old", path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openLedger(t, store.Options{})
			ctx := context.Background()
			write := func(key string) error {
				return s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, key) })
			}
			if err := write("before"); err != nil {
				t.Fatal(err)
			}
			tc.disturb(t, path)
			acked := map[string]bool{"before": true}
			for _, key := range []string{"after", "later", "last"} {
				err := write(key)
				switch {
				case err == nil:
					acked[key] = true
				case !model.IsCode(err, model.CodeInternal):
					t.Fatalf("write %s after the files changed: %v; want success or an internal (retry later) error", key, err)
				}
			}
			// What a new process finds under the ledger's name, now.
			dir := t.TempDir()
			copyFile(t, path, filepath.Join(dir, "ledger.db"))
			if _, err := os.Stat(path + "-wal"); err == nil {
				copyFile(t, path+"-wal", filepath.Join(dir, "ledger.db-wal"))
			}
			found, err := Open(filepath.Join(dir, "ledger.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer found.Close()
			for key := range acked {
				if _, err := found.Get(ctx, "t", key); err != nil {
					t.Errorf("%s was acknowledged, but the ledger's files do not have it: %v", key, err)
				}
			}
			if acked["last"] {
				t.Errorf("every write was acknowledged: the store never noticed its files changed")
			}
		})
	}
}
