package sandbox_test

import (
	"context"
	"errors"
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

// racingLedger is a ledger that another process of the same ledger ties
// and sends through when Tie asks it whether it has sent (between Tie's
// two reads); or, when other is nil, a ledger that sent through another
// file long ago.
type racingLedger struct {
	id    string
	other *sandbox.Sandbox
}

func (l racingLedger) LedgerID(context.Context) (string, error) { return l.id, nil }
func (l racingLedger) SentTo(ctx context.Context, _ ...string) (bool, error) {
	if l.other != nil {
		if err := l.other.Tie(ctx, fixedLedger(l.id)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Concurrent first calls of one new ledger: the one that finds the ledger
// has sent must not refuse the file another of them tied meanwhile (every
// sender ties before it sends); a ledger that sent through another file is
// still refused.
func TestTieAfterAConcurrentFirstCallTiedTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	sb, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	other, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const id = "0123456789abcdef0123456789abcdef"
	if err := sb.Tie(ctx, racingLedger{id: id, other: other}, "sandbox"); err != nil {
		t.Errorf("Tie after a concurrent tie: %v", err)
	}
	if err := sb.Tie(ctx, racingLedger{id: "fedcba9876543210fedcba9876543210"}, "sandbox"); !errors.Is(err, sandbox.ErrNotThisLedgers) {
		t.Errorf("Tie of a ledger that sent elsewhere: %v; want ErrNotThisLedgers", err)
	}
}
