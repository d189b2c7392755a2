package sqlite

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// Seen is a hint read beside the writer: an operation or a tombstone under
// the key in the tenant, nothing for another tenant's or a new key.
func TestSeenFindsOperationsAndTombstonesOfTheTenantOnly(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
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
}
