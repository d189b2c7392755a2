package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sort"
)

// Snapshot returns a digest of every row of every table of the ledger (and
// its schema version), read in one transaction. Two equal digests mean
// nothing was written in between: tests and the lab use it to show that a
// refused call or decision changed nothing. It reads the whole ledger; it is
// for small ledgers, not for the console.
//
// The tables named in skip are left out: "nothing changed but the attempt
// row" is Snapshot(ctx, "attempts") before and after.
func (s *Store) Snapshot(ctx context.Context, skip ...string) (string, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", s.translate(err, "snapshot")
	}
	defer tx.Rollback()
	var uv int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&uv); err != nil {
		return "", s.translate(err, "snapshot")
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return "", s.translate(err, "snapshot")
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return "", s.translate(err, "snapshot")
		}
		tables = append(tables, n)
	}
	rows.Close()
	h := sha256.New()
	fmt.Fprintf(h, "user_version=%d\n", uv)
	skipped := map[string]bool{}
	for _, t := range skip {
		skipped[t] = true
	}
	for _, table := range tables {
		if skipped[table] {
			continue
		}
		digests, err := tableRows(ctx, tx, table)
		if err != nil {
			return "", s.translate(err, "snapshot "+table)
		}
		// Row order is a detail of the scan; the set of rows is the content.
		sort.Strings(digests)
		fmt.Fprintf(h, "table %s %d\n", table, len(digests))
		for _, d := range digests {
			fmt.Fprintln(h, d)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tableRows(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		rh := sha256.New()
		for i, v := range vals {
			fmt.Fprintf(rh, "%s=%T:%v\x00", cols[i], v, v)
		}
		out = append(out, hex.EncodeToString(rh.Sum(nil)))
	}
	return out, rows.Err()
}
