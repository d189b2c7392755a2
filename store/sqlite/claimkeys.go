package sqlite

import "database/sql"

// claimKeysArg is model.Operation.ClaimHonoursKeys as its column
// (migration 12): NULL when not recorded, else 1 or 0.
func claimKeysArg(b *bool) sql.NullInt64 {
	if b == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(boolInt(*b)), Valid: true}
}

// claimKeysOf reads the column back; a fresh value, never shared with
// another operation (the writer's cache hands copies out).
func claimKeysOf(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	b := v.Bool
	return &b
}
