package sqlite

import (
	"context"
	"database/sql"

	"github.com/retrysafe/retrysafe/model"
)

// ExportRows reads every row of one of the ledger's tables (in the order of
// its rowid or, without one, its primary key) in one read transaction, and hands each to fn with the table's
// column names (the same slice every call; the row's values are fresh).
// Values are what the driver scans: int64, float64, string, []byte or nil.
// It is how `gen` moves a generated ledger into another driver.
func (s *Store) ExportRows(ctx context.Context, table string, fn func(cols []string, row []any) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.translate(err, "export")
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil {
		return s.translate(err, "export")
	}
	if n != 1 {
		return model.Errorf(model.CodeInvalid, "export: the ledger has no table %q", table)
	}
	rows, err := tx.QueryContext(ctx, `SELECT * FROM "`+table+`"`) // table is one of the ledger's, checked above
	if err != nil {
		return s.translate(err, "export "+table)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return s.translate(err, "export "+table)
	}
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return s.translate(err, "export "+table)
		}
		if err := fn(cols, row); err != nil {
			return err
		}
	}
	return s.translate(rows.Err(), "export "+table)
}
