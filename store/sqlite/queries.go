package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// List returns one page of operations with their attempt counts. It never
// reads more rows than the page needs (keyset pagination on the id, or on
// the sort columns and the id).
func (s *Store) List(ctx context.Context, q store.ListQuery) ([]model.Operation, error) {
	limit, err := store.PageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	q.Limit = limit
	var where []string
	var args []any
	if q.Tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, q.Tenant)
	}
	if q.State != "" {
		where, args = append(where, "state = ?"), append(args, string(q.State))
	}
	if q.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, q.Tool)
	}
	if q.Provider != "" {
		where, args = append(where, "provider = ?"), append(args, q.Provider)
	}
	if !q.CreatedBefore.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, ms(q.CreatedBefore))
	}
	if !q.CreatedAfter.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, ms(q.CreatedAfter))
	}
	if q.Contradicted {
		where = append(where, "contradicted = 1")
	}
	switch q.Finding {
	case model.FilterAnyFinding:
	case model.FilterNotChecked:
		where = append(where, `NOT EXISTS (SELECT 1 FROM attempts WHERE operation_id = operations.id AND outcome = 'lookup')`)
	default:
		if !model.FindingKind(q.Finding).Valid() {
			return nil, model.Errorf(model.CodeInvalid, "unknown finding filter %q", q.Finding)
		}
		where = append(where, shownFindingSQL+` = ?`)
		args = append(args, string(q.Finding))
	}
	if q.Search != "" {
		like := "%" + escapeLike(q.Search) + "%"
		// Trace ids are opaque: matched by exact id or prefix, through an
		// index, on every attempt of the operation.
		where = append(where, `(op_key LIKE ? ESCAPE '\' OR summary LIKE ? ESCAPE '\'
			OR id IN (SELECT operation_id FROM attempts WHERE trace_id >= ? AND trace_id < ?))`)
		args = append(args, like, like, q.Search, q.Search+string(rune(0x10FFFF)))
	}
	if !q.Sort.Valid() {
		return nil, model.Errorf(model.CodeInvalid, "unknown sort column %q", q.Sort)
	}
	// Keyset paging in the chosen order: the cursor row's own values bound
	// the page (a row value against the row read by id), so a page deep in
	// a sorted list costs what the first one does.
	cols := store.SortColumns(q.Sort)
	keyset := func(cmp string, id int64, row *model.Operation) {
		if row != nil {
			// The row as the caller read it: where it was, wherever it is.
			vals := store.SortValues(q.Sort, row)
			where = append(where, "("+strings.Join(cols, ", ")+") "+cmp+" ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
			args = append(args, vals...)
			return
		}
		if len(cols) == 1 {
			where, args = append(where, "id "+cmp+" ?"), append(args, id)
			return
		}
		list := strings.Join(cols, ", ")
		where = append(where, "("+list+") "+cmp+" (SELECT "+list+" FROM operations WHERE id = ?)")
		args = append(args, id)
	}
	bounds, dir, flip := store.Keyset(q)
	for _, b := range bounds {
		keyset(b.Cmp, b.ID, b.Row)
	}
	orderBy := make([]string, len(cols))
	for i, c := range cols {
		orderBy[i] = c + " " + dir
	}
	from := "operations"
	if q.Contradicted {
		// Contradicted operations are rare: walk their small partial index
		// and filter, rather than a tenant's or state's large one.
		from = "operations INDEXED BY operations_contradicted"
	}
	// The attempts, and of them the provider lookups (one step down the
	// partial index attempts_lookup): the console counts them apart.
	sqlText := `SELECT ` + opColumns + `, (SELECT COUNT(*) FROM attempts a WHERE a.operation_id = operations.id),
		(SELECT COUNT(*) FROM attempts a WHERE a.operation_id = operations.id AND a.outcome = 'lookup'),
		` + latestLookupColumn + `, ` + bindingLookupColumn + `
		FROM ` + from
	if len(where) > 0 {
		sqlText += " WHERE " + strings.Join(where, " AND ")
	}
	sqlText += " ORDER BY " + strings.Join(orderBy, ", ") + " LIMIT ?"
	args = append(args, q.Limit)
	rows, err := s.r.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, s.translate(err, "list operations")
	}
	defer rows.Close()
	var out []model.Operation
	var lookupIDs, bindings []sql.NullInt64
	for rows.Next() {
		var n, lookups int
		var lookup, binding sql.NullInt64
		op, err := scanOperation(rows, &n, &lookups, &lookup, &binding)
		if err != nil {
			return nil, s.translate(err, "list operations")
		}
		op.AttemptCount, op.LookupCount = n, lookups
		out = append(out, *op)
		lookupIDs, bindings = append(lookupIDs, lookup), append(bindings, binding)
	}
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "list operations")
	}
	rows.Close()
	if err := s.fillFindings(ctx, out, lookupIDs, bindings); err != nil {
		return nil, err
	}
	if flip {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// latestLookupOf is the id of the newest lookup attempt of the operation
// whose id is opID (an SQL expression; NULL: never checked): one step down
// attempts_lookup — model.LatestFinding's choice.
func latestLookupOf(opID string) string {
	return `(SELECT id FROM attempts WHERE operation_id = ` + opID + ` AND outcome = 'lookup'
	ORDER BY seq DESC LIMIT 1)`
}

// bindingLookupOf is the id of the lookup a decision on the operation
// whose id is opID is checked against: any "has it" first, then the
// newest "has nothing" (NULL: neither) — LatestConclusiveFinding's choice.
func bindingLookupOf(opID string) string {
	return `(SELECT id FROM attempts WHERE operation_id = ` + opID + ` AND outcome = 'lookup'
	AND finding IN ('has_it', 'has_nothing') ORDER BY finding = 'has_it' DESC, seq DESC LIMIT 1)`
}

// latestLookupColumn and bindingLookupColumn are, in a statement that reads
// operations, each one's two lookups' ids; fillFindings reads those
// attempts afterwards.
var (
	latestLookupColumn  = latestLookupOf("operations.id")
	bindingLookupColumn = bindingLookupOf("operations.id")
)

// shownFindingSQL is the kind of the finding an operation's FINDING column
// shows (model.Operation.Shown): "has another request" if the latest
// lookup found another request under the key (an earlier "has it" may
// have been about it); "has it" if any lookup found the effect; "has
// nothing" if the latest lookup cannot tell and a "has nothing" no later
// attempt made stale is there; else the latest lookup's.
var shownFindingSQL = `(CASE
	WHEN (SELECT finding FROM attempts WHERE operation_id = operations.id AND outcome = 'lookup' ORDER BY seq DESC LIMIT 1) = 'has_other' THEN 'has_other'
	WHEN EXISTS (SELECT 1 FROM attempts WHERE operation_id = operations.id AND outcome = 'lookup' AND finding = 'has_it') THEN 'has_it'
	WHEN (SELECT finding FROM attempts WHERE operation_id = operations.id AND outcome = 'lookup' ORDER BY seq DESC LIMIT 1) = 'cannot_tell'
		AND EXISTS (SELECT 1 FROM attempts h WHERE h.operation_id = operations.id AND h.outcome = 'lookup' AND h.finding = 'has_nothing'
			AND NOT ` + store.LaterAttemptStalesSQL("h") + `) THEN 'has_nothing'
	ELSE (SELECT finding FROM attempts WHERE operation_id = operations.id AND outcome = 'lookup' ORDER BY seq DESC LIMIT 1) END)`

// findingsSQL reads lookup attempts by id (a JSON array of ids, so one
// statement serves a page of any size), each with whether an attempt
// that may have reached the provider came after it:
// model.LatestFinding's rule in SQL (store.LaterAttemptStalesSQL).
var findingsSQL = `SELECT a.id, a.finding, a.provider_ref, a.detail, a.started_at, a.seq, a.worker_id,
	` + store.LaterAttemptStalesSQL("a") + `
	FROM attempts a WHERE a.id IN (SELECT value FROM json_each(?))`

// fillFindings sets the finding of each operation whose latest lookup
// attempt lookups names (the same index; NULL: never checked), and its
// binding finding from the lookup bindings names, reading them all in one
// statement: a page costs two queries, not one per checked row.
func (s *Store) fillFindings(ctx context.Context, ops []model.Operation, lookups, bindings []sql.NullInt64) error {
	ids := make([]string, 0, 2*len(ops))
	for i, l := range lookups {
		if l.Valid {
			ids = append(ids, strconv.FormatInt(l.Int64, 10))
		}
		if b := bindings[i]; b.Valid && b != l {
			ids = append(ids, strconv.FormatInt(b.Int64, 10))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.r.QueryContext(ctx, findingsSQL, "["+strings.Join(ids, ",")+"]")
	if err != nil {
		return s.translate(err, "read findings")
	}
	defer rows.Close()
	found := make(map[int64]*model.Finding, len(ids))
	for rows.Next() {
		var id int64
		var f model.Finding
		var ref, detail, by sql.NullString
		var at int64
		var stale int
		if err := rows.Scan(&id, &f.Kind, &ref, &detail, &at, &f.Seq, &by, &stale); err != nil {
			return s.translate(err, "read findings")
		}
		f.Ref, f.Detail, f.By = ref.String, detail.String, by.String
		f.At = time.UnixMilli(at).UTC()
		f.Stale = stale != 0
		found[id] = &f
	}
	if err := rows.Err(); err != nil {
		return s.translate(err, "read findings")
	}
	for i, l := range lookups {
		if !l.Valid {
			continue
		}
		// An attempt gone in between (compacted) is shown as not checked.
		if f := found[l.Int64]; f != nil {
			cp := *f
			cp.Provider = ops[i].Provider
			ops[i].Finding = &cp
			if f := found[bindings[i].Int64]; bindings[i].Valid && f != nil {
				b := *f
				b.Provider = ops[i].Provider
				// A "has it" binds however many attempts came after it.
				b.Stale = b.Stale && b.Kind != model.FindingHasIt
				ops[i].BindingFinding = model.EarlierBinding(ops[i].Finding, &b)
			}
		}
	}
	return nil
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// Counts reads the trigger-kept counts: constant time whatever the ledger's
// size. tenant "" counts every tenant.
func (s *Store) Counts(ctx context.Context, tenant string) (store.Counts, error) {
	c := store.Counts{ByState: map[model.State]int{}}
	q := `SELECT state, SUM(n) FROM state_counts GROUP BY state`
	var args []any
	if tenant != "" {
		q = `SELECT state, n FROM state_counts WHERE tenant = ?`
		args = append(args, tenant)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return c, s.translate(err, "count operations")
	}
	defer rows.Close()
	for rows.Next() {
		var st model.State
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return c, s.translate(err, "count operations")
		}
		c.ByState[st] += n
		c.Total += n
	}
	if err := rows.Err(); err != nil {
		return c, s.translate(err, "count operations")
	}
	cq := `SELECT COUNT(*) FROM operations WHERE contradicted = 1`
	if tenant != "" {
		// "+tenant" keeps SQLite on the small partial index of contradicted
		// rows; on the tenant index it read a tenant's every row (~100 ms
		// for 50,000, against the console's 50 ms for the counts).
		cq += ` AND +tenant = ?`
	}
	if err := s.r.QueryRowContext(ctx, cq, args...).Scan(&c.Contradicted); err != nil {
		return c, s.translate(err, "count operations")
	}
	// Claims whose lease ended with no result (the worker is gone): on the
	// partial index of in_progress leases, which holds only claims.
	// INDEXED BY: left to itself the planner walks the state index and
	// reads every in_progress row (220 ms at a million, against 0.08 ms).
	// Of those, the claims released to be sent again (model.LeaseReleased):
	// their owner is read from the row, for the few ended leases only —
	// and of those the claims a busy provider's Retry-After still holds,
	// with the earliest end of such a hold.
	held := `lease_owner = '` + model.LeaseReleased + `' AND retry_not_before > ?`
	eq := `SELECT COUNT(*), COALESCE(SUM(lease_owner = '` + model.LeaseReleased + `'), 0), COALESCE(SUM(` + held + `), 0),
		MIN(CASE WHEN ` + held + ` THEN retry_not_before END)
		FROM operations INDEXED BY operations_lease WHERE state = 'in_progress' AND lease_until < ?`
	now := ms(s.now())
	eargs := []any{now, now, now}
	if tenant != "" {
		eq += ` AND +tenant = ?`
		eargs = append(eargs, tenant)
	}
	var holdEnd sql.NullInt64
	if err := s.r.QueryRowContext(ctx, eq, eargs...).Scan(&c.ExpiredLeases, &c.ReleasedClaims, &c.HeldClaims, &holdEnd); err != nil {
		return c, s.translate(err, "count operations")
	}
	c.NextHoldEnd = fromMS(holdEnd)
	eargs = eargs[2:] // now and the tenant, for the next query
	// The next lease to end: one step on the same index.
	nq := `SELECT MIN(lease_until) FROM operations INDEXED BY operations_lease WHERE state = 'in_progress' AND lease_until >= ?`
	if tenant != "" {
		nq += ` AND +tenant = ?`
	}
	var next sql.NullInt64
	if err := s.r.QueryRowContext(ctx, nq, eargs...).Scan(&next); err != nil {
		return c, s.translate(err, "count operations")
	}
	c.NextLeaseEnd = fromMS(next)
	return c, nil
}

// Tenants lists the tenants that have operations, sorted.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tenant FROM state_counts GROUP BY tenant HAVING SUM(n) > 0 ORDER BY tenant`)
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

// SentTo reports whether any operation names one of providers.
func (s *Store) SentTo(ctx context.Context, providers ...string) (bool, error) {
	if len(providers) == 0 {
		return false, nil
	}
	args := make([]any, len(providers))
	for i, p := range providers {
		args[i] = p
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(providers)), ",")
	var found bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM operations WHERE provider IN (`+marks+`))`, args...).Scan(&found)
	return found, s.translate(err, "look for operations sent to a provider")
}

// Get reads one operation of a tenant. Another tenant's key is simply not
// found: the error never reveals that it exists elsewhere.
// Its latest finding comes with it, as in a list: the statement names the
// newest lookup attempt (one index step), read only if there is one.
func (s *Store) Get(ctx context.Context, tenant, key string) (*model.Operation, error) {
	var lookup, binding sql.NullInt64
	op, err := scanOperation(s.r.QueryRowContext(ctx, `SELECT `+opColumns+`, `+latestLookupColumn+`, `+bindingLookupColumn+` FROM operations WHERE tenant = ? AND op_key = ?`, tenant, key), &lookup, &binding)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", key, tenant)
	}
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	if lookup.Valid {
		ops := []model.Operation{*op}
		if err := s.fillFindings(ctx, ops, []sql.NullInt64{lookup}, []sql.NullInt64{binding}); err != nil {
			return nil, err
		}
		op = &ops[0]
	}
	return op, nil
}

// Detail reads an operation with its attempts, decisions and links, in one
// read transaction so the parts agree.
func (s *Store) Detail(ctx context.Context, tenant, key string) (*model.Detail, error) {
	return s.detail(ctx, `tenant = ? AND op_key = ?`, tenant, key)
}

// DetailByID is Detail by row id (following links).
func (s *Store) DetailByID(ctx context.Context, id int64) (*model.Detail, error) {
	return s.detail(ctx, `id = ?`, id)
}

func (s *Store) detail(ctx context.Context, where string, args ...any) (*model.Detail, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	defer tx.Rollback()
	op, err := scanOperation(tx.QueryRowContext(ctx, `SELECT `+opColumns+` FROM operations WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		if len(args) == 2 {
			return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", args[1], args[0])
		}
		return nil, model.Errorf(model.CodeNotFound, "no operation #%v", args[0])
	}
	if err != nil {
		return nil, s.translate(err, "read operation")
	}
	d := &model.Detail{Operation: *op}
	rows, err := tx.QueryContext(ctx, `SELECT id, operation_id, seq, outcome, fingerprint, trace_id, worker_id,
		provider_ref, error, started_at, duration_us, finding, detail FROM attempts WHERE operation_id = ? ORDER BY seq`, op.ID)
	if err != nil {
		return nil, s.translate(err, "read attempts")
	}
	for rows.Next() {
		var a model.Attempt
		var trace, worker, pref, errText, finding, detail sql.NullString
		var started, dur int64
		if err := rows.Scan(&a.ID, &a.OperationID, &a.Seq, &a.Outcome, &a.Fingerprint, &trace, &worker, &pref,
			&errText, &started, &dur, &finding, &detail); err != nil {
			rows.Close()
			return nil, s.translate(err, "read attempts")
		}
		a.TraceID, a.WorkerID, a.ProviderRef, a.Error = trace.String, worker.String, pref.String, errText.String
		a.Finding, a.Detail = model.FindingKind(finding.String), detail.String
		a.StartedAt = time.UnixMilli(started).UTC()
		a.Duration = time.Duration(dur) * time.Microsecond
		d.Attempts = append(d.Attempts, a)
	}
	// An error that ended the loop early (I/O, a damaged page) must not
	// pass for a shorter history.
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, s.translate(err, "read attempts")
	}
	rows.Close()
	d.Operation.AttemptCount = len(d.Attempts)
	d.Operation.LookupCount = model.Lookups(d.Attempts)
	d.Operation.Finding = model.LatestFinding(op.Provider, d.Attempts)
	d.Operation.BindingFinding = model.EarlierBinding(d.Operation.Finding, model.BindingFinding(op.Provider, d.Attempts))
	rows, err = tx.QueryContext(ctx, `SELECT id, operation_id, operator, action, reason, evidence, from_state,
		to_state, from_version, new_key, at FROM decisions WHERE operation_id = ? ORDER BY id`, op.ID)
	if err != nil {
		return nil, s.translate(err, "read decisions")
	}
	for rows.Next() {
		var dc model.Decision
		var evidence, newKey sql.NullString
		var at int64
		if err := rows.Scan(&dc.ID, &dc.OperationID, &dc.Operator, &dc.Action, &dc.Reason, &evidence, &dc.FromState,
			&dc.ToState, &dc.FromVersion, &newKey, &at); err != nil {
			rows.Close()
			return nil, s.translate(err, "read decisions")
		}
		dc.Evidence, dc.NewKey = evidence.String, newKey.String
		dc.At = time.UnixMilli(at).UTC()
		d.Decisions = append(d.Decisions, dc)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, s.translate(err, "read decisions")
	}
	rows.Close()
	// A link whose row is gone (compacted with its chain) is no link; any
	// other error is an error, not a missing link.
	link := func(id int64) (*model.LinkRef, error) {
		if id == 0 {
			return nil, nil
		}
		var l model.LinkRef
		err := tx.QueryRowContext(ctx, `SELECT id, op_key, state FROM operations WHERE id = ?`, id).Scan(&l.ID, &l.Key, &l.State)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, s.translate(err, "read linked operation")
		}
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

// EffectCount counts the rows of a local effect table in one tenant or all
// (""). In the generic local_effects table it counts tool's rows; the
// demo's tables (tasks, report_jobs) hold every tool that writes them.
func (s *Store) EffectCount(ctx context.Context, table model.LocalTable, tool, tenant string) (int, error) {
	var q string
	var args []any
	switch table {
	case model.TableTasks, model.TableReportJobs:
		q = `SELECT COUNT(*) FROM ` + string(table) + ` WHERE 1`
	case model.TableLocalEffects:
		q = `SELECT COUNT(*) FROM local_effects WHERE tool = ?`
		args = append(args, tool)
	default:
		return 0, model.Errorf(model.CodeInvalid, "no local effect table %q", table)
	}
	if tenant != "" {
		q += ` AND tenant = ?`
		args = append(args, tenant)
	}
	var n int
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, s.translate(err, "count effects")
}

// Audit checks the ledger's invariants and returns one line per violation:
// every applied local operation (one without a provider) has exactly one
// effect whose id its receipt names, no effect lacks its operation (unless
// compacted to a tombstone),
// and SQLite's own integrity_check passes.
func (s *Store) Audit(ctx context.Context) ([]string, error) {
	var problems []string
	checks := []struct{ what, q string }{
		{"applied local operations whose receipt names no effect", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND o.provider IS NULL
			AND json_extract(o.receipt, '$.result.task_id') IS NULL AND json_extract(o.receipt, '$.result.job_id') IS NULL
			AND json_extract(o.receipt, '$.result.effect_id') IS NULL AND json_type(o.receipt, '$.result.effect') IS NULL`},
		{"applied task operations without exactly one task", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND json_extract(o.receipt, '$.result.task_id') IS NOT NULL
			AND (SELECT COUNT(*) FROM tasks t WHERE t.operation_id = o.id AND t.id = json_extract(o.receipt, '$.result.task_id')) <> 1`},
		{"applied report operations without exactly one job", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND json_extract(o.receipt, '$.result.job_id') IS NOT NULL
			AND (SELECT COUNT(*) FROM report_jobs j WHERE j.operation_id = o.id AND j.id = json_extract(o.receipt, '$.result.job_id')) <> 1`},
		{"applied local-effect operations without exactly one effect", `SELECT COUNT(*) FROM operations o WHERE o.state = 'applied' AND json_extract(o.receipt, '$.result.effect_id') IS NOT NULL
			AND (SELECT COUNT(*) FROM local_effects e WHERE e.operation_id = o.id AND e.id = json_extract(o.receipt, '$.result.effect_id')) <> 1`},
		{"tasks whose operation is not applied", `SELECT COUNT(*) FROM tasks t JOIN operations o ON o.id = t.operation_id WHERE o.state <> 'applied'`},
		{"report jobs whose operation is not applied", `SELECT COUNT(*) FROM report_jobs j JOIN operations o ON o.id = j.operation_id WHERE o.state <> 'applied'`},
		{"local effects whose operation is not applied", `SELECT COUNT(*) FROM local_effects e JOIN operations o ON o.id = e.operation_id WHERE o.state <> 'applied'`},
		{"state counts out of step", `SELECT COUNT(*) FROM (SELECT tenant, state, COUNT(*) n FROM operations GROUP BY tenant, state) x
			LEFT JOIN state_counts c USING (tenant, state) WHERE c.n IS NOT x.n`},
	}
	for _, c := range checks {
		var n int
		if err := s.r.QueryRowContext(ctx, c.q).Scan(&n); err != nil {
			return nil, s.translate(err, "audit")
		}
		if n > 0 {
			problems = append(problems, c.what+": "+strconv.Itoa(n))
		}
	}
	var ic string
	if err := s.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ic); err != nil {
		return nil, s.translate(err, "integrity check")
	}
	if ic != "ok" {
		problems = append(problems, "integrity_check: "+ic)
	}
	return problems, nil
}

// Decisions lists decisions newest first with their operation's tenant,
// key and tool (the audit log).
func (s *Store) Decisions(ctx context.Context, q store.DecisionQuery) ([]model.AuditEntry, error) {
	limit, err := store.PageLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	q.Limit = limit
	var where []string
	var args []any
	if q.Tenant != "" {
		where, args = append(where, "o.tenant = ?"), append(args, q.Tenant)
	}
	if q.Operator != "" {
		where, args = append(where, "d.operator = ?"), append(args, q.Operator)
	}
	if q.Action != "" {
		where, args = append(where, "d.action = ?"), append(args, string(q.Action))
	}
	if q.BeforeID > 0 {
		where, args = append(where, "d.id < ?"), append(args, q.BeforeID)
	}
	text := `SELECT d.id, d.operation_id, d.operator, d.action, d.reason, d.evidence, d.from_state, d.to_state,
		d.from_version, d.new_key, d.at, o.tenant, o.op_key, o.tool
		FROM decisions d JOIN operations o ON o.id = d.operation_id`
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY d.id DESC LIMIT ?"
	args = append(args, q.Limit)
	rows, err := s.r.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, s.translate(err, "list decisions")
	}
	defer rows.Close()
	var out []model.AuditEntry
	for rows.Next() {
		var e model.AuditEntry
		var evidence, newKey sql.NullString
		var at int64
		if err := rows.Scan(&e.ID, &e.OperationID, &e.Operator, &e.Action, &e.Reason, &evidence, &e.FromState,
			&e.ToState, &e.FromVersion, &newKey, &at, &e.Tenant, &e.Key, &e.Tool); err != nil {
			return nil, s.translate(err, "list decisions")
		}
		e.Evidence, e.NewKey = evidence.String, newKey.String
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "list decisions")
	}
	return out, nil
}
