package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/retrysafe/retrysafe/store"
)

// ProviderFile is the provider file id recorded for provider, or "".
func (s *Store) ProviderFile(ctx context.Context, provider string) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT file_id FROM provider_files WHERE provider = ?`, provider).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, s.translate(err, "read the ledger's provider file")
}

// ProviderFileMark is the file recorded for provider and how far the
// ledger has seen it go, in one read.
func (s *Store) ProviderFileMark(ctx context.Context, provider string) (string, store.FileMark, error) {
	var id string
	var m store.FileMark
	err := s.r.QueryRowContext(ctx, `SELECT file_id, seen_seq, seen_check FROM provider_files WHERE provider = ?`, provider).Scan(&id, &m.Seq, &m.Check)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.FileMark{}, nil
	}
	return id, m, s.translate(err, "read the ledger's provider file")
}

// TieProviderFile records fileID for provider while the recorded one is
// replacing ("" = none), and returns the recorded one. Another file's
// history is its own: the mark starts again from none.
func (t *Tx) TieProviderFile(provider, fileID, replacing string) (string, error) {
	q := `UPDATE provider_files SET file_id = ?, seen_seq = 0, seen_check = '' WHERE provider = ? AND file_id = ? AND file_id <> ?`
	args := []any{fileID, provider, replacing, fileID}
	if replacing == "" {
		q, args = `INSERT INTO provider_files (provider, file_id) VALUES (?, ?) ON CONFLICT (provider) DO NOTHING`, []any{provider, fileID}
	}
	if _, err := t.exec(q, args...); err != nil {
		return "", err
	}
	var id string
	err := t.queryRow(`SELECT file_id FROM provider_files WHERE provider = ?`, provider).Scan(&id)
	return id, err
}

// MarkProviderFile raises provider's mark to m while fileID is recorded.
func (t *Tx) MarkProviderFile(provider, fileID string, m store.FileMark) (store.FileMark, error) {
	if _, err := t.exec(`UPDATE provider_files SET seen_seq = ?, seen_check = ? WHERE provider = ? AND file_id = ? AND seen_seq < ?`,
		m.Seq, m.Check, provider, fileID, m.Seq); err != nil {
		return store.FileMark{}, err
	}
	var got store.FileMark
	err := t.queryRow(`SELECT seen_seq, seen_check FROM provider_files WHERE provider = ? AND file_id = ?`, provider, fileID).Scan(&got.Seq, &got.Check)
	if errors.Is(err, sql.ErrNoRows) {
		return store.FileMark{}, nil
	}
	return got, err
}
