package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// ProviderFile is the provider file id recorded for provider, or "".
func (s *Store) ProviderFile(ctx context.Context, provider string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT file_id FROM provider_files WHERE provider = $1`, provider).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, s.translate(err, "read the ledger's provider file")
}

// TieProviderFile records fileID for provider while the recorded one is
// replacing ("" = none), and returns the recorded one.
func (t *Tx) TieProviderFile(provider, fileID, replacing string) (string, error) {
	q := `UPDATE provider_files SET file_id = $1 WHERE provider = $2 AND file_id = $3`
	args := []any{fileID, provider, replacing}
	if replacing == "" {
		q, args = `INSERT INTO provider_files (provider, file_id) VALUES ($2, $1) ON CONFLICT (provider) DO NOTHING`, []any{fileID, provider}
	}
	if _, err := t.exec(q, args...); err != nil {
		return "", err
	}
	var id string
	err := t.queryRow(`SELECT file_id FROM provider_files WHERE provider = $1`, provider).Scan(&id)
	return id, err
}
