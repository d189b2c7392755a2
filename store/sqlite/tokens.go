package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

const tokenColumns = `id, tenant, name, hash, hint, created_at, revoked_at`

func scanToken(sc scanner) (*model.Token, error) {
	var t model.Token
	var created, revoked sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Tenant, &t.Name, &t.Hash, &t.Hint, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt, t.RevokedAt = fromMS(created), fromMS(revoked)
	return &t, nil
}

// CreateToken stores a token's hash and hint (never its secret), durably.
func (s *Store) CreateToken(ctx context.Context, t *model.Token) error {
	if err := model.ValidateTenant(t.Tenant); err != nil {
		return err
	}
	if len(t.Hash) != 64 {
		return model.Errorf(model.CodeInvalid, "token hash must be a hex SHA-256")
	}
	return s.withTx(ctx, false, func(tx *Tx) error {
		if t.CreatedAt.IsZero() {
			t.CreatedAt = tx.Now()
		}
		// As the ledger keeps it (milliseconds, UTC): tokens create prints
		// the same time tokens list does.
		t.CreatedAt = time.UnixMilli(ms(t.CreatedAt)).UTC()
		res, err := tx.exec(`INSERT INTO tokens (tenant, name, hash, hint, created_at) VALUES (?, ?, ?, ?, ?)`,
			t.Tenant, t.Name, t.Hash, t.Hint, ms(t.CreatedAt))
		if err != nil {
			return err
		}
		t.ID, err = res.LastInsertId()
		return err
	})
}

// TokenByHash reads the token with this hash, revoked or not.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*model.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no such token")
	}
	return t, s.translate(err, "read token")
}

// ListTokens lists tokens oldest first, of one tenant or ("") all.
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]model.Token, error) {
	q, args := `SELECT `+tokenColumns+` FROM tokens ORDER BY id`, []any{}
	if tenant != "" {
		q, args = `SELECT `+tokenColumns+` FROM tokens WHERE tenant = ? ORDER BY id`, append(args, tenant)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.translate(err, "list tokens")
	}
	defer rows.Close()
	var out []model.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, s.translate(err, "list tokens")
		}
		out = append(out, *t)
	}
	return out, s.translate(rows.Err(), "list tokens")
}

// RevokeToken revokes a token for good (compare-and-set on revoked_at).
func (s *Store) RevokeToken(ctx context.Context, id int64) (*model.Token, error) {
	var out *model.Token
	err := s.withTx(ctx, false, func(tx *Tx) error {
		t, err := scanToken(tx.queryRow(`SELECT `+tokenColumns+` FROM tokens WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return model.Errorf(model.CodeNotFound, "no token #%d", id)
		}
		if err != nil {
			return err
		}
		if t.Revoked() {
			return model.Errorf(model.CodeIllegal, "token #%d was already revoked at %s", id, t.RevokedAt.Format("2006-01-02 15:04:05Z07:00"))
		}
		t.RevokedAt = time.UnixMilli(ms(tx.Now())).UTC()
		if _, err := tx.exec(`UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, ms(t.RevokedAt), id); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// StateAges counts each tenant's operations in state, with the earliest
// last change among them (walks the (tenant, state, id) index).
func (s *Store) StateAges(ctx context.Context, state model.State) ([]store.TenantStateAge, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tenant, COUNT(*), MIN(updated_at) FROM operations WHERE state = ? GROUP BY tenant ORDER BY tenant`, string(state))
	if err != nil {
		return nil, s.translate(err, "count by tenant")
	}
	defer rows.Close()
	var out []store.TenantStateAge
	for rows.Next() {
		var a store.TenantStateAge
		var oldest sql.NullInt64
		if err := rows.Scan(&a.Tenant, &a.Count, &oldest); err != nil {
			return nil, s.translate(err, "count by tenant")
		}
		a.Oldest = fromMS(oldest)
		out = append(out, a)
	}
	return out, s.translate(rows.Err(), "count by tenant")
}
