package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
)

// TableSource is a ledger of another driver whose rows Load copies:
// ExportRows hands every row of one table to fn, with its column names.
type TableSource interface {
	ExportRows(ctx context.Context, table string, fn func(cols []string, row []any) error) error
}

// loadTables are the ledger's tables Load fills, each before the tables
// whose rows point at it. The counts follow from the operations; tokens
// and schema_migrations are the ledger's own, and so are its identity
// (ledger_meta) and the provider files it records (provider_files): the
// loaded ledger keeps its id, and the caller ties it to the provider file
// that holds the source's deliveries — `gen` opens it to dispatch before
// the load, as a first call would, and carries the source's marks over.
var loadTables = []string{"operations", "attempts", "decisions", "tombstones", "tasks", "report_jobs", "local_effects"}

// countTriggers keep state_counts (migration 1).
var countTriggers = []string{"operations_count_insert", "operations_count_update", "operations_count_delete"}

// LoadReport says what Load copied.
type LoadReport struct {
	Rows    map[string]int `json:"rows"`
	Copy    time.Duration  `json:"copy_ns"`    // the transaction with the COPYs
	Analyze time.Duration  `json:"analyze_ns"` // VACUUM ANALYZE afterwards
}

// Load copies every row of src's ledger tables into this ledger, which must
// hold no operations yet: one transaction, one COPY per table (pgx
// CopyFrom, streamed — the rows are never all in memory), the ids kept as
// they were and each identity moved past its table's largest. The counts
// are computed from the copied operations in the same transaction.
// Then VACUUM ANALYZE, so the planner and index-only scans know the new
// rows. It is how `gen` builds a large PostgreSQL ledger: the rows are
// generated on SQLite through the call path and moved here as they are.
func (s *Store) Load(ctx context.Context, src TableSource) (LoadReport, error) {
	rep := LoadReport{Rows: map[string]int{}}
	if s.ro {
		return rep, model.Errorf(model.CodeInvalid, "ledger %s is open read-only", s.where)
	}
	start := time.Now()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return rep, s.translate(err, "load")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `LOCK TABLE operations IN ACCESS EXCLUSIVE MODE`); err != nil {
		return rep, s.translate(err, "load")
	}
	var any bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM operations)`).Scan(&any); err != nil {
		return rep, s.translate(err, "load")
	}
	if any {
		return rep, model.Errorf(model.CodeInvalid, "ledger %s holds operations already; a load fills a new one", s.where)
	}
	// The counts triggers would update the same few rows once per copied
	// operation, in one transaction: every update adds a row version that
	// none can prune yet, and the next walks them all (a million
	// operations did not finish in ten minutes). They are off for this
	// transaction only — ALTER TABLE is transactional, and its lock keeps
	// every other writer out until the commit — and the counts are then
	// computed from the rows in one statement.
	for _, trg := range countTriggers {
		if _, err := tx.Exec(ctx, `ALTER TABLE operations DISABLE TRIGGER `+trg); err != nil {
			return rep, s.translate(err, "load")
		}
	}
	for _, table := range loadTables {
		n, hasID, err := s.copyTable(ctx, tx, table, src)
		if err != nil {
			return rep, err
		}
		rep.Rows[table] = n
		if n > 0 && hasID {
			if err := s.moveIdentity(ctx, tx, table); err != nil {
				return rep, err
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO state_counts (tenant, state, slot, n) SELECT tenant, state, 0, COUNT(*) FROM operations GROUP BY tenant, state`); err != nil {
		return rep, s.translate(err, "load counts")
	}
	for _, trg := range countTriggers {
		if _, err := tx.Exec(ctx, `ALTER TABLE operations ENABLE TRIGGER `+trg); err != nil {
			return rep, s.translate(err, "load")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rep, s.translate(err, "load")
	}
	s.committed()
	rep.Copy = time.Since(start)
	start = time.Now()
	vacuum := `VACUUM (ANALYZE) state_counts`
	for _, t := range loadTables {
		vacuum += ", " + t
	}
	if _, err := s.pool.Exec(ctx, vacuum); err != nil {
		return rep, s.translate(err, "vacuum")
	}
	rep.Analyze = time.Since(start)
	return rep, nil
}

// copyTable streams one table of src into table with one COPY; hasID says
// whether the table has an id column.
func (s *Store) copyTable(ctx context.Context, tx pgx.Tx, table string, src TableSource) (n int, hasID bool, err error) {
	n, types, err := s.copyRows(ctx, tx, table, src)
	_, hasID = types["id"]
	return n, hasID, err
}

func (s *Store) copyRows(ctx context.Context, tx pgx.Tx, table string, src TableSource) (int, map[string]string, error) {
	types := map[string]string{}
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`, s.schema, table)
	if err != nil {
		return 0, types, s.translate(err, "load "+table)
	}
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			rows.Close()
			return 0, types, s.translate(err, "load "+table)
		}
		types[c] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, types, s.translate(err, "load "+table)
	}
	if len(types) == 0 {
		return 0, types, model.Errorf(model.CodeInternal, "load: ledger %s has no table %s", s.where, table)
	}

	// The source is read in a goroutine of its own and handed over a row
	// at a time: ExportRows pushes, CopyFrom pulls.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan []any, 1024)
	var cols []string
	colsReady := make(chan struct{})
	var srcErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		first := true
		srcErr = src.ExportRows(pctx, table, func(c []string, row []any) error {
			if first {
				first = false
				for _, name := range c {
					if _, ok := types[name]; !ok {
						return model.Errorf(model.CodeInternal, "load: column %s.%s has no place in ledger %s", table, name, s.where)
					}
				}
				cols = c
				close(colsReady)
			}
			for i, v := range row {
				row[i] = convert(types[cols[i]], v)
			}
			select {
			case ch <- row:
				return nil
			case <-pctx.Done():
				return pctx.Err()
			}
		})
	}()
	// The first row (or the end) says which columns the COPY names.
	var pending []any
	select {
	case pending = <-ch:
	case <-done:
	}
	if pending == nil {
		<-done
		if srcErr != nil {
			return 0, types, s.translate(srcErr, "load "+table)
		}
		if len(ch) == 0 {
			return 0, types, nil // an empty table
		}
		pending = <-ch
	}
	<-colsReady
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		if pending != nil {
			row := pending
			pending = nil
			return row, nil
		}
		row, ok := <-ch
		if !ok {
			return nil, srcErr // nil: the end
		}
		return row, nil
	}))
	cancel()
	<-done
	if err != nil {
		return 0, types, s.translate(err, "load "+table)
	}
	if srcErr != nil {
		return 0, types, s.translate(srcErr, "load "+table)
	}
	return int(n), types, nil
}

// convert makes a value the source driver scanned fit the column's type.
func convert(pgType string, v any) any {
	switch pgType {
	case "boolean":
		if n, ok := v.(int64); ok {
			return n != 0
		}
	case "text":
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	}
	return v
}

// moveIdentity sets table's id identity past its largest id, so the next
// row the ledger writes gets a new one.
func (s *Store) moveIdentity(ctx context.Context, tx pgx.Tx, table string) error {
	var seq *string
	qualified := quoteIdent(s.schema) + "." + quoteIdent(table)
	if err := tx.QueryRow(ctx, `SELECT pg_get_serial_sequence($1, 'id')`, qualified).Scan(&seq); err != nil {
		return s.translate(err, "load "+table)
	}
	if seq == nil {
		return nil // no id column (tombstones)
	}
	_, err := tx.Exec(ctx, `SELECT setval($1, (SELECT COALESCE(MAX(id), 0) + 1 FROM `+qualified+`), false)`, *seq)
	return s.translate(err, "load "+table+" identity")
}
