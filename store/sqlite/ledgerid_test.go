package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/store"
)

// What reading the ledger's id costs a command that opens the ledger and
// asks once (a call of an external tool ties its sandbox file with it):
// one query on the writer's connection, already open.
func BenchmarkLedgerIDFirstRead(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "l.db"), store.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.lid.id = "" // as a new process finds it
		if _, err := s.LedgerID(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
