package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

const tokenColumns = `id, tenant, name, hash, hint, created_at, revoked_at`

func scanToken(row pgx.Row) (*model.Token, error) {
	var t model.Token
	var created int64
	var revoked *int64
	if err := row.Scan(&t.ID, &t.Tenant, &t.Name, &t.Hash, &t.Hint, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt, t.RevokedAt = fromMS(&created), fromMS(revoked)
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
	return s.WithTx(ctx, func(stx store.Tx) error {
		tx := stx.(*Tx)
		if t.CreatedAt.IsZero() {
			t.CreatedAt = tx.Now()
		}
		// As the ledger keeps it (milliseconds, UTC): tokens create prints
		// the same time tokens list does.
		t.CreatedAt = time.UnixMilli(ms(t.CreatedAt)).UTC()
		return tx.queryRow(`INSERT INTO tokens (tenant, name, hash, hint, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			t.Tenant, t.Name, t.Hash, t.Hint, ms(t.CreatedAt)).Scan(&t.ID)
	})
}

// TokenByHash reads the token with this hash, revoked or not.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*model.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no such token")
	}
	return t, s.translate(err, "read token")
}

// ListTokens lists tokens oldest first, of one tenant or ("") all.
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]model.Token, error) {
	q, args := `SELECT `+tokenColumns+` FROM tokens ORDER BY id`, []any{}
	if tenant != "" {
		q, args = `SELECT `+tokenColumns+` FROM tokens WHERE tenant = $1 ORDER BY id`, append(args, tenant)
	}
	rows, err := s.pool.Query(ctx, q, args...)
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

// RevokeToken revokes a token for good (compare-and-set on revoked_at,
// the row locked while it is read).
func (s *Store) RevokeToken(ctx context.Context, id int64) (*model.Token, error) {
	var out *model.Token
	err := s.WithTx(ctx, func(stx store.Tx) error {
		tx := stx.(*Tx)
		t, err := scanToken(tx.queryRow(`SELECT `+tokenColumns+` FROM tokens WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return model.Errorf(model.CodeNotFound, "no token #%d", id)
		}
		if err != nil {
			return err
		}
		if t.Revoked() {
			return model.Errorf(model.CodeIllegal, "token #%d was already revoked at %s", id, t.RevokedAt.Format("2006-01-02 15:04:05Z07:00"))
		}
		t.RevokedAt = time.UnixMilli(ms(tx.Now())).UTC()
		if _, err := tx.exec(`UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, ms(t.RevokedAt), id); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// StateAges counts each tenant's operations in state, with the earliest
// last change among them (on the (tenant, state, id) index).
func (s *Store) StateAges(ctx context.Context, state model.State) ([]store.TenantStateAge, error) {
	rows, err := s.pool.Query(ctx, `SELECT tenant, COUNT(*), MIN(updated_at) FROM operations WHERE state = $1 GROUP BY tenant ORDER BY tenant`, string(state))
	if err != nil {
		return nil, s.translate(err, "count by tenant")
	}
	defer rows.Close()
	var out []store.TenantStateAge
	for rows.Next() {
		var a store.TenantStateAge
		var oldest *int64
		if err := rows.Scan(&a.Tenant, &a.Count, &oldest); err != nil {
			return nil, s.translate(err, "count by tenant")
		}
		a.Oldest = fromMS(oldest)
		out = append(out, a)
	}
	return out, s.translate(rows.Err(), "count by tenant")
}

// Decisions lists operator decisions newest first, with the operation each
// was about (the audit log), keyset paged on the decision id.
func (s *Store) Decisions(ctx context.Context, q store.DecisionQuery) ([]model.AuditEntry, error) {
	limit, err := store.PageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	q.Limit = limit
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Tenant != "" {
		where = append(where, "o.tenant = "+arg(q.Tenant))
	}
	if q.Operator != "" {
		where = append(where, "d.operator = "+arg(q.Operator))
	}
	if q.Action != "" {
		where = append(where, "d.action = "+arg(string(q.Action)))
	}
	if q.BeforeID > 0 {
		where = append(where, "d.id < "+arg(q.BeforeID))
	}
	text := `SELECT d.id, d.operation_id, d.operator, d.action, d.reason, d.evidence, d.from_state, d.to_state,
		d.from_version, d.new_key, d.at, o.tenant, o.op_key, o.tool
		FROM decisions d JOIN operations o ON o.id = d.operation_id`
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY d.id DESC LIMIT " + arg(q.Limit)
	rows, err := s.pool.Query(ctx, text, args...)
	if err != nil {
		return nil, s.translate(err, "list decisions")
	}
	defer rows.Close()
	var out []model.AuditEntry
	for rows.Next() {
		var e model.AuditEntry
		var evidence, newKey *string
		var action, from, to string
		var at int64
		if err := rows.Scan(&e.ID, &e.OperationID, &e.Operator, &action, &e.Reason, &evidence, &from,
			&to, &e.FromVersion, &newKey, &at, &e.Tenant, &e.Key, &e.Tool); err != nil {
			return nil, s.translate(err, "list decisions")
		}
		e.Action, e.FromState, e.ToState = model.Action(action), model.State(from), model.State(to)
		e.Evidence, e.NewKey = str(evidence), str(newKey)
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	return out, s.translate(rows.Err(), "list decisions")
}
