package sandbox_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// fixedLedger is a ledger with an id that has sent nothing yet.
type fixedLedger string

func (l fixedLedger) LedgerID(context.Context) (string, error)        { return string(l), nil }
func (l fixedLedger) SentTo(context.Context, ...string) (bool, error) { return false, nil }

// What tying costs a call once the file serves its ledger: one indexed
// read of the sandbox file, no write.
func BenchmarkTieAlreadyTied(b *testing.B) {
	sb, err := sandbox.Open(filepath.Join(b.TempDir(), "p.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	ctx := context.Background()
	l := fixedLedger("0123456789abcdef0123456789abcdef")
	if err := sb.Tie(ctx, l); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sb.Tie(ctx, l); err != nil {
			b.Fatal(err)
		}
	}
}
