package postgres

import (
	"context"
	"time"

	"github.com/retrysafe/retrysafe/store"
)

// QueryRow runs one query on the store's pool.
func QueryRow(ctx context.Context, s *Store, q string, dest ...any) error {
	return s.pool.QueryRow(ctx, q).Scan(dest...)
}

// Translate is translate on a store with a placeholder location.
func Translate(err error) error {
	return (&Store{where: "postgres://test"}).translate(err, "")
}

// MigrationSQL is the text of the first n migrations, in order.
func MigrationSQL(n int) []string {
	var out []string
	for _, m := range migrations()[:n] {
		out = append(out, m.SQL)
	}
	return out
}

// BackendPID is the server process of the connection tx runs on.
func BackendPID(tx any) uint32 { return tx.(*Tx).conn.Conn().PgConn().PID() }

// NoAutoFold stops s's notifier from folding the counts' deltas (call it
// before s's first write).
func NoAutoFold(s *Store) { s.foldGap = 1 << 62 }

// Exec runs one statement on the store's pool.
func Exec(ctx context.Context, s *Store, q string) error {
	_, err := s.pool.Exec(ctx, q)
	return err
}

// FoldEvery sets the least time between s's folds (and its planner
// statistics check); call it before s's first write.
func FoldEvery(s *Store, d time.Duration) { s.foldGap = d }

// OpenWithHostClock is Open on a host whose clock is host (a skewed one).
func OpenWithHostClock(raw string, o store.Options, host func() time.Time) (*Store, error) {
	o.HostClock = host
	return Open(raw, o)
}

// CompactStatements are the statements of CompactExpired, each with
// arguments of its types written as SQL literals, for the test of their
// query plans.
var CompactStatements = []struct {
	SQL  string
	Args string
}{
	{compactExpiredSQL, `1, 500`},
	{compactTombstoneSQL, `'t', 'k', 'tool', 'fp', 'applied', 1, 2`},
	{compactChainSQL, `1`},
	{compactChainTombstoneSQL, `1, 2, '{1,2}', 1`},
	{compactUnlinkSQL, `'{1,2}'`},
	{compactDeleteSQL, `'{1,2}'`},
	{compactForgetSQL, `1`},
}
