package sqlite

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// Seen is a hint read beside the writer: an operation or a tombstone under
// the key in the tenant, nothing for another tenant's or a new key.
// With ReadOnWriter (a one-call process) it gives the same answers on the
// writer's connection and never opens a reader.
func TestSeenFindsOperationsAndTombstonesOfTheTenantOnly(t *testing.T) {
	for _, onWriter := range []bool{false, true} {
		t.Run(map[bool]string{false: "readers", true: "ReadOnWriter"}[onWriter], func(t *testing.T) {
			testSeen(t, onWriter)
		})
	}
}

func testSeen(t *testing.T, onWriter bool) {
	s, _ := openLedger(t, store.Options{ReadOnWriter: onWriter})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		if err := insertOp(tx, "op"); err != nil {
			return err
		}
		_, err := tx.(*Tx).tx.Exec(`INSERT INTO tombstones VALUES ('t', 'gone', 'x', 'f', 'applied', 0, 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var _ store.Peeker = s
	for _, c := range []struct {
		tenant, key string
		want        bool
	}{
		{"t", "op", true},
		{"t", "op", true}, // remembered
		{"t", "gone", true},
		{"t", "new", false},
		{"other", "op", false},
		{"other", "gone", false},
	} {
		got, err := s.Seen(ctx, c.tenant, c.key)
		if err != nil || got != c.want {
			t.Errorf("Seen(%q, %q) = %v, %v; want %v", c.tenant, c.key, got, err, c.want)
		}
	}
	if n := s.r.Stats().OpenConnections; onWriter && n != 0 {
		t.Errorf("ReadOnWriter: Seen opened %d reader connection(s), want none", n)
	} else if !onWriter && n == 0 {
		t.Error("without ReadOnWriter Seen opened no reader connection: the test no longer tells the two apart")
	}
}
