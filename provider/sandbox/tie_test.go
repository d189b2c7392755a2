package sandbox_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
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
	if err := sb.Tie(ctx, l, "sandbox"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sb.Tie(ctx, l, "sandbox"); err != nil {
			b.Fatal(err)
		}
	}
}

// sentLedger is a ledger with an id that has sent to the providers named.
type sentLedger struct {
	id   string
	sent map[string]bool
}

func (l sentLedger) LedgerID(context.Context) (string, error) { return l.id, nil }
func (l sentLedger) SentTo(_ context.Context, ps ...string) (bool, error) {
	for _, p := range ps {
		if l.sent[p] {
			return true, nil
		}
	}
	return false, nil
}

// A tie is for the provider names it was made for: a file tied for "mail"
// serves none of the ledger's "sandbox" deliveries; a name the ledger has
// sent to is refused (nothing written), one it has not is tied.
func TestTieIsPerProviderName(t *testing.T) {
	ctx := t.Context()
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	id := "0123456789abcdef0123456789abcdef"
	if err := sb.Tie(ctx, sentLedger{id, nil}, "mail"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want bool
	}{{"mail", true}, {"sandbox", false}, {"sandbox-idem", false}} {
		if got, err := sb.Serves(ctx, id, c.name); err != nil || got != c.want {
			t.Errorf("after tying mail: Serves(%s) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	l := sentLedger{id, map[string]bool{"mail": true, "sandbox": true}}
	if err := sb.Tie(ctx, l, "mail", "sandbox-idem", "sandbox"); !errors.Is(err, sandbox.ErrNotThisLedgers) || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("tying sandbox, which the ledger sent to elsewhere: %v; want ErrNotThisLedgers naming it", err)
	}
	if got, _ := sb.Serves(ctx, id, "sandbox-idem"); got {
		t.Errorf("a refused tie tied sandbox-idem")
	}
	if err := sb.Tie(ctx, l, "mail", "sandbox-idem"); err != nil {
		t.Errorf("tying sandbox-idem, never sent to: %v", err)
	}
	if got, _ := sb.Serves(ctx, id, "sandbox-idem"); !got {
		t.Errorf("sandbox-idem not tied")
	}
}

// A file made before ties named their providers (a ledgers table of ids)
// serves its ledgers for the providers it holds deliveries of, and no
// other.
func TestAnOldTieStandsForTheProvidersTheFileDelivered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE deliveries (id INTEGER PRIMARY KEY, provider TEXT NOT NULL, downstream_key TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, created_at INTEGER NOT NULL)`,
		`CREATE TABLE ledgers (ledger_id TEXT PRIMARY KEY, since INTEGER NOT NULL)`,
		`INSERT INTO ledgers VALUES ('aaaa', 1), ('bbbb', 2)`,
		`INSERT INTO deliveries (provider, downstream_key, tool, args, created_at) VALUES ('mail', 'rs-1', 'notify', '{}', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for range 2 { // opened again: nothing changes
		sb, err := sandbox.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id, name string
			want     bool
		}{{"aaaa", "mail", true}, {"bbbb", "mail", true}, {"aaaa", "sandbox", false}, {"cccc", "mail", false}} {
			if got, err := sb.Serves(t.Context(), c.id, c.name); err != nil || got != c.want {
				t.Errorf("Serves(%s, %s) = %v, %v; want %v", c.id, c.name, got, err, c.want)
			}
		}
		sb.Close()
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
func (l racingLedger) SentTo(ctx context.Context, ps ...string) (bool, error) {
	if l.other != nil {
		if err := l.other.Tie(ctx, fixedLedger(l.id), ps...); err != nil {
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
