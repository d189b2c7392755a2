package sqlite

import (
	"context"
	"sync"
)

// ledgerID caches the ledger's identity: it never changes once made.
type ledgerID struct {
	mu sync.Mutex
	id string
}

// LedgerID is the ledger's identity (migration 7's random id), read once
// on the writer's connection — already open, so a command that asks costs
// no reader connection of its own — and kept.
func (s *Store) LedgerID(ctx context.Context) (string, error) {
	// The cache's lock is never held while the writer is waited for: a
	// transaction holding the writer reads the cache too (Tx.LedgerID).
	s.lid.mu.Lock()
	id := s.lid.id
	s.lid.mu.Unlock()
	if id != "" {
		return id, nil
	}
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-s.wsem }()
	if err := s.wc.QueryRowContext(ctx, `SELECT ledger_id FROM ledger_meta`).Scan(&id); err != nil {
		return "", s.translate(err, "read the ledger's id")
	}
	s.lid.mu.Lock()
	s.lid.id = id
	s.lid.mu.Unlock()
	return id, nil
}

// LedgerID is the ledger's identity read inside the transaction, on its
// connection (the writer's, already held: Store.LedgerID would wait for
// it), and kept as Store.LedgerID keeps it.
func (t *Tx) LedgerID() (string, error) {
	s := t.tx.s
	s.lid.mu.Lock()
	id := s.lid.id
	s.lid.mu.Unlock()
	if id != "" {
		return id, nil
	}
	if err := t.tx.QueryRowContext(t.ctx, `SELECT ledger_id FROM ledger_meta`).Scan(&id); err != nil {
		return "", s.translate(err, "read the ledger's id")
	}
	s.lid.mu.Lock()
	s.lid.id = id
	s.lid.mu.Unlock()
	return id, nil
}
