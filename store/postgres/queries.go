package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// List returns one page of operations with their attempt counts, newest
// first. It never reads more rows than the page needs (keyset pagination on
// the id, over the same indexes as SQLite's).
func (s *Store) List(ctx context.Context, q store.ListQuery) ([]model.Operation, error) {
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
		where = append(where, "tenant = "+arg(q.Tenant))
	}
	switch {
	case q.State.Valid():
		// A literal, not a parameter: the plan of a prepared page, generic
		// ones too, can then use the partial index on (state, tool, id)
		// (migration 10), which a parameter could not prove it may.
		where = append(where, "state = '"+string(q.State)+"'")
	case q.State != "":
		where = append(where, "state = "+arg(string(q.State)))
	}
	if q.Tool != "" {
		where = append(where, "tool = "+arg(q.Tool))
	}
	if q.Provider != "" {
		where = append(where, "provider = "+arg(q.Provider))
	}
	if !q.CreatedBefore.IsZero() {
		where = append(where, "created_at < "+arg(ms(q.CreatedBefore)))
	}
	if !q.CreatedAfter.IsZero() {
		where = append(where, "created_at >= "+arg(ms(q.CreatedAfter)))
	}
	if q.Contradicted {
		where = append(where, "contradicted")
	}
	switch q.Finding {
	case model.FilterAnyFinding:
	case model.FilterNotChecked:
		// Every lookup attempt carries a finding (a CHECK), so no latest
		// finding means no lookup recorded.
		where = append(where, "lf.lf_kind IS NULL")
	default:
		if !model.FindingKind(q.Finding).Valid() {
			return nil, model.Errorf(model.CodeInvalid, "unknown finding filter %q", q.Finding)
		}
		where = append(where, shownFindingSQL+" = "+arg(string(q.Finding)))
	}
	if q.Search != "" {
		like := arg("%" + escapeLike(q.Search) + "%")
		// Trace ids are opaque: matched by exact id or prefix, through an
		// index, on every attempt of the operation.
		lo, hi := arg(q.Search), arg(q.Search+string(rune(0x10FFFF)))
		where = append(where, `(op_key LIKE `+like+` ESCAPE '\' OR summary LIKE `+like+` ESCAPE '\'
			OR id IN (SELECT operation_id FROM attempts WHERE trace_id >= `+lo+` AND trace_id < `+hi+`))`)
	}
	if !q.Sort.Valid() {
		return nil, model.Errorf(model.CodeInvalid, "unknown sort column %q", q.Sort)
	}
	// Keyset paging in the chosen order: the cursor row's own values bound
	// the page (a row comparison against the row read by id). The tool
	// compares bytewise, as in SQLite (tenant and key are COLLATE "C" in
	// the table; the states' names order alike in every collation).
	var cols []string
	for _, c := range store.SortColumns(q.Sort) {
		if c == "tool" {
			c = `tool COLLATE "C"`
		}
		cols = append(cols, c)
	}
	keyset := func(cmp string, id int64, row *model.Operation) {
		if row != nil {
			// The row as the caller read it: where it was, wherever it is.
			outer, vals := make([]string, len(cols)), make([]string, len(cols))
			for i, v := range store.SortValues(q.Sort, row) {
				outer[i], vals[i] = "operations."+cols[i], arg(v)
			}
			where = append(where, "("+strings.Join(outer, ", ")+") "+cmp+" ("+strings.Join(vals, ", ")+")")
			return
		}
		if len(cols) == 1 {
			where = append(where, "operations.id "+cmp+" "+arg(id))
			return
		}
		outer, inner := make([]string, len(cols)), make([]string, len(cols))
		for i, c := range cols {
			outer[i], inner[i] = "operations."+c, "c."+c
		}
		where = append(where, "("+strings.Join(outer, ", ")+") "+cmp+
			" (SELECT "+strings.Join(inner, ", ")+" FROM operations c WHERE c.id = "+arg(id)+")")
	}
	bounds, dir, flip := store.Keyset(q)
	for _, b := range bounds {
		keyset(b.Cmp, b.ID, b.Row)
	}
	orderBy := make([]string, len(cols))
	for i, c := range cols {
		orderBy[i] = "operations." + c + " " + dir
	}
	// The attempts, and of them the provider lookups (one step down the
	// partial index attempts_lookup): the console counts them apart.
	sqlText := `SELECT ` + opColumns + `, (SELECT COUNT(*) FROM attempts a WHERE a.operation_id = operations.id),
		(SELECT COUNT(*) FROM attempts a WHERE a.operation_id = operations.id AND a.outcome = 'lookup'),
		` + latestFindingColumnList + `, ` + bindingFindingColumnList + `
		FROM operations ` + latestFindingJoin("operations.id") + ` ` + bindingFindingJoin("operations.id")
	if len(where) > 0 {
		sqlText += " WHERE " + strings.Join(where, " AND ")
	}
	sqlText += " ORDER BY " + strings.Join(orderBy, ", ") + " LIMIT " + arg(q.Limit)
	rows, err := s.pool.Query(ctx, sqlText, args...)
	if err != nil {
		return nil, s.translate(err, "list operations")
	}
	defer rows.Close()
	var out []model.Operation
	for rows.Next() {
		var n, lookups int
		var f, b findingScan
		op, err := scanOperation(rows, append(append([]any{&n, &lookups}, f.dest()...), b.dest()...)...)
		if err != nil {
			return nil, s.translate(err, "list operations")
		}
		op.AttemptCount, op.LookupCount = n, lookups
		op.Finding = f.finding(op.Provider)
		op.BindingFinding = model.EarlierBinding(op.Finding, b.finding(op.Provider))
		out = append(out, *op)
	}
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "list operations")
	}
	if flip {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// heldCols count, of the ended leases, the released claims a busy
// provider's Retry-After still holds ($1 is now), and the earliest end of
// such a hold.
const heldCols = `COUNT(*) FILTER (WHERE lease_owner = '` + model.LeaseReleased + `' AND retry_not_before > $1),
	MIN(retry_not_before) FILTER (WHERE lease_owner = '` + model.LeaseReleased + `' AND retry_not_before > $1)`

// countRows are the trigger-kept counts: the folded ones and the deltas
// not folded yet (migration 8), which sum to the same whenever read.
const countRows = `(SELECT tenant, state, n FROM state_counts UNION ALL SELECT tenant, state, n FROM state_count_deltas)`

// Counts sums the trigger-kept counts: a bounded number of rows whatever
// the ledger's size (the deltas of about a second of writes, and the
// folded counts). tenant "" counts every tenant. Contradicted operations
// are rare and counted on their partial index.
func (s *Store) Counts(ctx context.Context, tenant string) (store.Counts, error) {
	c := store.Counts{ByState: map[model.State]int{}}
	b := &pgx.Batch{}
	// Claims whose lease ended with no result (the worker is gone) are
	// counted on the partial index of in_progress leases, and of them the
	// claims released to be sent again (model.LeaseReleased).
	now := ms(s.now())
	if tenant == "" {
		b.Queue(`SELECT state, SUM(n)::bigint FROM ` + countRows + ` c GROUP BY state`)
		b.Queue(`SELECT COUNT(*) FROM operations WHERE contradicted`)
		b.Queue(`SELECT COUNT(*), COUNT(*) FILTER (WHERE lease_owner = '`+model.LeaseReleased+`'), `+heldCols+` FROM operations WHERE state = 'in_progress' AND lease_until < $1`, now)
		b.Queue(`SELECT MIN(lease_until) FROM operations WHERE state = 'in_progress' AND lease_until >= $1`, now)
	} else {
		b.Queue(`SELECT state, SUM(n)::bigint FROM `+countRows+` c WHERE tenant = $1 GROUP BY state`, tenant)
		b.Queue(`SELECT COUNT(*) FROM operations WHERE contradicted AND tenant = $1`, tenant)
		b.Queue(`SELECT COUNT(*), COUNT(*) FILTER (WHERE lease_owner = '`+model.LeaseReleased+`'), `+heldCols+` FROM operations WHERE state = 'in_progress' AND lease_until < $1 AND tenant = $2`, now, tenant)
		b.Queue(`SELECT MIN(lease_until) FROM operations WHERE state = 'in_progress' AND lease_until >= $1 AND tenant = $2`, now, tenant)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return c, s.translate(err, "count operations")
	}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return c, s.translate(err, "count operations")
		}
		c.ByState[model.State(st)] += int(n)
		c.Total += int(n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, s.translate(err, "count operations")
	}
	if err := br.QueryRow().Scan(&c.Contradicted); err != nil {
		return c, s.translate(err, "count operations")
	}
	var holdEnd *int64
	if err := br.QueryRow().Scan(&c.ExpiredLeases, &c.ReleasedClaims, &c.HeldClaims, &holdEnd); err != nil {
		return c, s.translate(err, "count operations")
	}
	c.NextHoldEnd = fromMS(holdEnd)
	// The next lease to end (a console recounts then).
	var next *int64
	if err := br.QueryRow().Scan(&next); err != nil {
		return c, s.translate(err, "count operations")
	}
	c.NextLeaseEnd = fromMS(next)
	return c, nil
}

// Tenants lists the tenants that have operations, sorted bytewise.
// SentTo reports whether any operation names one of providers.
func (s *Store) SentTo(ctx context.Context, providers ...string) (bool, error) {
	if len(providers) == 0 {
		return false, nil
	}
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM operations WHERE provider = ANY($1))`, providers).Scan(&found)
	return found, s.translate(err, "look for operations sent to a provider")
}

func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT tenant FROM `+countRows+` c GROUP BY tenant HAVING SUM(n) > 0 ORDER BY tenant`)
	if err != nil {
		return nil, s.translate(err, "list tenants")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, s.translate(err, "list tenants")
		}
		out = append(out, t)
	}
	return out, s.translate(rows.Err(), "list tenants")
}

// Get reads one operation of a tenant. Another tenant's key is simply not
// found: the error never reveals that it exists elsewhere.
// Its latest finding comes with it, as in a list, joined in the same
// statement.
func (s *Store) Get(ctx context.Context, tenant, key string) (*model.Operation, error) {
	var f, b findingScan
	op, err := scanOperation(s.pool.QueryRow(ctx, `SELECT `+opColumns+`, `+latestFindingColumnList+`, `+bindingFindingColumnList+`
		FROM operations `+latestFindingJoin("operations.id")+` `+bindingFindingJoin("operations.id")+` WHERE tenant = $1 AND op_key = $2`, tenant, key),
		append(f.dest(), b.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", key, tenant)
	}
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	op.Finding = f.finding(op.Provider)
	op.BindingFinding = model.EarlierBinding(op.Finding, b.finding(op.Provider))
	return op, nil
}

// Detail reads an operation with its attempts, decisions and links, in one
// read-only REPEATABLE READ transaction so the parts agree.
func (s *Store) Detail(ctx context.Context, tenant, key string) (*model.Detail, error) {
	return s.detail(ctx, `tenant = $1 AND op_key = $2`, tenant, key)
}

// DetailByID is Detail by row id (following links).
func (s *Store) DetailByID(ctx context.Context, id int64) (*model.Detail, error) {
	return s.detail(ctx, `id = $1`, id)
}

// Tombstone reads tenant's live tombstone under key on the pool (a plain
// read: it works on a read-only store), as Tx.GetTombstone does in a
// transaction.
func (s *Store) Tombstone(ctx context.Context, tenant, key string) (*model.Tombstone, error) {
	ts, err := scanTombstone(s.pool.QueryRow(ctx, tombstoneQuery, tenant, key, ms(s.now())))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no tombstone")
	}
	if err != nil {
		return nil, s.translate(err, "read tombstone")
	}
	return ts, nil
}

func (s *Store) readTx(ctx context.Context) (pgx.Tx, error) {
	return s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
}

func (s *Store) detail(ctx context.Context, where string, args ...any) (*model.Detail, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	op, err := scanOperation(tx.QueryRow(ctx, `SELECT `+opColumns+` FROM operations WHERE `+where, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		if len(args) == 2 {
			return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", args[1], args[0])
		}
		return nil, model.Errorf(model.CodeNotFound, "no operation #%v", args[0])
	}
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	d := &model.Detail{Operation: *op}
	rows, err := tx.Query(ctx, `SELECT id, operation_id, seq, outcome, fingerprint, trace_id, worker_id,
		provider_ref, error, started_at, duration_us, finding, detail FROM attempts WHERE operation_id = $1 ORDER BY seq`, op.ID)
	if err != nil {
		return nil, s.translate(err, "read attempts")
	}
	for rows.Next() {
		var a model.Attempt
		var trace, worker, pref, errText, finding, detail *string
		var started, dur int64
		var outcome string
		if err := rows.Scan(&a.ID, &a.OperationID, &a.Seq, &outcome, &a.Fingerprint, &trace, &worker, &pref,
			&errText, &started, &dur, &finding, &detail); err != nil {
			rows.Close()
			return nil, s.translate(err, "read attempts")
		}
		a.Outcome = model.Outcome(outcome)
		a.TraceID, a.WorkerID, a.ProviderRef, a.Error = str(trace), str(worker), str(pref), str(errText)
		a.Finding, a.Detail = model.FindingKind(str(finding)), str(detail)
		a.StartedAt = time.UnixMilli(started).UTC()
		a.Duration = time.Duration(dur) * time.Microsecond
		d.Attempts = append(d.Attempts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "read attempts")
	}
	d.Operation.AttemptCount = len(d.Attempts)
	d.Operation.LookupCount = model.Lookups(d.Attempts)
	d.Operation.Finding = model.LatestFinding(op.Provider, d.Attempts)
	d.Operation.BindingFinding = model.EarlierBinding(d.Operation.Finding, model.BindingFinding(op.Provider, d.Attempts))
	rows, err = tx.Query(ctx, `SELECT id, operation_id, operator, action, reason, evidence, from_state,
		to_state, from_version, new_key, at FROM decisions WHERE operation_id = $1 ORDER BY id`, op.ID)
	if err != nil {
		return nil, s.translate(err, "read decisions")
	}
	for rows.Next() {
		var dc model.Decision
		var evidence, newKey *string
		var action, from, to string
		var at int64
		if err := rows.Scan(&dc.ID, &dc.OperationID, &dc.Operator, &action, &dc.Reason, &evidence, &from,
			&to, &dc.FromVersion, &newKey, &at); err != nil {
			rows.Close()
			return nil, s.translate(err, "read decisions")
		}
		dc.Action, dc.FromState, dc.ToState = model.Action(action), model.State(from), model.State(to)
		dc.Evidence, dc.NewKey = str(evidence), str(newKey)
		dc.At = time.UnixMilli(at).UTC()
		d.Decisions = append(d.Decisions, dc)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "read decisions")
	}
	// A link whose row is gone (compacted with its chain) is no link; any
	// other error is an error, not a missing link.
	link := func(id int64) (*model.LinkRef, error) {
		if id == 0 {
			return nil, nil
		}
		var l model.LinkRef
		var st string
		err := tx.QueryRow(ctx, `SELECT id, op_key, state FROM operations WHERE id = $1`, id).Scan(&l.ID, &l.Key, &st)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, s.translate(err, "read linked operation")
		}
		l.State = model.State(st)
		return &l, nil
	}
	if d.Supersedes, err = link(op.SupersedesID); err != nil {
		return nil, err
	}
	if d.SupersededBy, err = link(op.SupersededByID); err != nil {
		return nil, err
	}
	return d, nil
}

// EffectCount counts the rows of a local effect table, in one tenant or
// all (""); in the generic local_effects table, tool's rows only.
func (s *Store) EffectCount(ctx context.Context, table model.LocalTable, tool, tenant string) (int, error) {
	var q string
	var args []any
	switch table {
	case model.TableTasks, model.TableReportJobs:
		q = `SELECT COUNT(*) FROM ` + string(table) + ` WHERE true`
	case model.TableLocalEffects:
		q = `SELECT COUNT(*) FROM local_effects WHERE tool = $1`
		args = append(args, tool)
	default:
		return 0, model.Errorf(model.CodeInvalid, "no local effect table %q", table)
	}
	if tenant != "" {
		args = append(args, tenant)
		q += ` AND tenant = $` + strconv.Itoa(len(args))
	}
	var n int
	err := s.pool.QueryRow(ctx, q, args...).Scan(&n)
	return n, s.translate(err, "count effects")
}

// Audit checks the ledger's invariants and returns one line per violation
// (SQLite's checks, but its integrity_check): every applied local operation
// (one without a provider) has exactly one effect — task, report job or
// local_effects row — whose id its receipt names, no effect belongs to an
// operation that is not applied, and the trigger-kept counts agree with
// the rows.
func (s *Store) Audit(ctx context.Context) ([]string, error) {
	var problems []string
	checks := []struct{ what, q string }{
		{"applied local operations whose receipt names no effect", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND o.provider IS NULL
			AND (o.receipt::jsonb #>> '{result,task_id}') IS NULL AND (o.receipt::jsonb #>> '{result,job_id}') IS NULL
			AND (o.receipt::jsonb #>> '{result,effect_id}') IS NULL AND (o.receipt::jsonb #> '{result,effect}') IS NULL`},
		{"applied task operations without exactly one task", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND (o.receipt::jsonb #>> '{result,task_id}') IS NOT NULL
			AND (SELECT COUNT(*) FROM tasks t WHERE t.operation_id = o.id AND t.id::text = (o.receipt::jsonb #>> '{result,task_id}')) <> 1`},
		{"applied report operations without exactly one job", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND (o.receipt::jsonb #>> '{result,job_id}') IS NOT NULL
			AND (SELECT COUNT(*) FROM report_jobs j WHERE j.operation_id = o.id AND j.id::text = (o.receipt::jsonb #>> '{result,job_id}')) <> 1`},
		{"applied local-effect operations without exactly one effect", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND (o.receipt::jsonb #>> '{result,effect_id}') IS NOT NULL
			AND (SELECT COUNT(*) FROM local_effects e WHERE e.operation_id = o.id AND e.id::text = (o.receipt::jsonb #>> '{result,effect_id}')) <> 1`},
		{"tasks whose operation is not applied", `SELECT COUNT(*) FROM tasks t JOIN operations o ON o.id = t.operation_id WHERE o.state <> 'applied'`},
		{"report jobs whose operation is not applied", `SELECT COUNT(*) FROM report_jobs j JOIN operations o ON o.id = j.operation_id WHERE o.state <> 'applied'`},
		{"local effects whose operation is not applied", `SELECT COUNT(*) FROM local_effects e JOIN operations o ON o.id = e.operation_id WHERE o.state <> 'applied'`},
		{"state counts out of step", `SELECT COUNT(*) FROM (SELECT tenant, state, COUNT(*) n FROM operations GROUP BY tenant, state) x
			FULL JOIN (SELECT tenant, state, SUM(n) n FROM ` + countRows + ` c GROUP BY tenant, state HAVING SUM(n) <> 0) c
			USING (tenant, state) WHERE x.n IS DISTINCT FROM c.n`},
	}
	if !s.ro {
		// The deltas folded first: the check then compares the counts
		// the console reads after any fold with the rows (a read-only
		// store sums both tables, to the same effect).
		if err := s.foldCounts(ctx); err != nil {
			return nil, s.translate(err, "audit: fold the counts")
		}
	}
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, s.translate(err, "audit")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, c := range checks {
		var n int
		if err := tx.QueryRow(ctx, c.q).Scan(&n); err != nil {
			return nil, s.translate(err, "audit")
		}
		if n > 0 {
			problems = append(problems, c.what+": "+strconv.Itoa(n))
		}
	}
	return problems, nil
}

// Snapshot returns a digest of every row of every table of the ledger's
// schema, read in one REPEATABLE READ transaction: two equal digests mean
// nothing was written in between. For small ledgers (tests, the lab).
// The counts are digested by their sums: whether a count is folded yet,
// and in which slot, is bookkeeping, not content.
func (s *Store) Snapshot(ctx context.Context, skip ...string) (string, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return "", s.translate(err, "snapshot")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, s.schema)
	if err != nil {
		return "", s.translate(err, "snapshot")
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", s.translate(err, "snapshot")
	}
	h := sha256.New()
	skipped := map[string]bool{}
	for _, t := range skip {
		skipped[t] = true
	}
	for _, table := range tables {
		if skipped[table] {
			continue
		}
		q := `SELECT * FROM ` + quoteIdent(table)
		switch table {
		case "state_counts":
			q = `SELECT tenant, state, SUM(n) FROM ` + countRows + ` c GROUP BY tenant, state HAVING SUM(n) <> 0`
		case "state_count_deltas":
			continue // digested with state_counts
		}
		digests, err := tableRows(ctx, tx, q)
		if err != nil {
			return "", s.translate(err, "snapshot "+table)
		}
		sort.Strings(digests)
		fmt.Fprintf(h, "table %s %d\n", table, len(digests))
		for _, d := range digests {
			fmt.Fprintln(h, d)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tableRows(ctx context.Context, tx pgx.Tx, q string) ([]string, error) {
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		rh := sha256.New()
		for i, v := range vals {
			fmt.Fprintf(rh, "%s=%T:%v\x00", fields[i].Name, v, v)
		}
		out = append(out, hex.EncodeToString(rh.Sum(nil)))
	}
	return out, rows.Err()
}

// LedgerID is the ledger's identity (migration 6's random id), read once
// and kept.
func (s *Store) LedgerID(ctx context.Context) (string, error) {
	s.lidMu.Lock()
	defer s.lidMu.Unlock()
	if s.lid != "" {
		return s.lid, nil
	}
	var id string
	if err := s.pool.QueryRow(ctx, `SELECT ledger_id FROM ledger_meta`).Scan(&id); err != nil {
		return "", s.translate(err, "read the ledger's id")
	}
	s.lid = id
	return id, nil
}
