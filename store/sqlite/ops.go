package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

const opColumns = `id, tenant, op_key, tool, payload_version, args, summary, fingerprint,
	state, version, claim_no, receipt, provider, downstream_key, provider_ref,
	lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
	created_at, updated_at, expires_at, claim_honours_keys, claim_apply_by, claim_dispatch_id, claim_lookup_id, retry_not_before`

type scanner interface{ Scan(...any) error }

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

func nullJSON(b json.RawMessage) sql.NullString {
	return sql.NullString{String: string(b), Valid: len(b) > 0}
}

func scanOperation(sc scanner, extra ...any) (*model.Operation, error) {
	var (
		op                                        model.Operation
		args                                      string
		receipt, provider, dkey, pref, leaseOwner sql.NullString
		leaseUntil, supersedes, supersededBy, exp sql.NullInt64
		created, updated                          int64
		contradicted                              int
		honours                                   sql.NullBool
		applyBy, notBefore                        sql.NullInt64
		dispatchID, lookupID                      sql.NullString
	)
	dest := []any{&op.ID, &op.Tenant, &op.Key, &op.Tool, &op.PayloadVersion, &args, &op.Summary,
		&op.Fingerprint, &op.State, &op.Version, &op.ClaimNo, &receipt, &provider, &dkey, &pref,
		&leaseOwner, &leaseUntil, &contradicted, &supersedes, &supersededBy, &created, &updated, &exp, &honours,
		&applyBy, &dispatchID, &lookupID, &notBefore}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	op.Args = json.RawMessage(args)
	if receipt.Valid {
		op.Receipt = json.RawMessage(receipt.String)
	}
	op.Provider, op.DownstreamKey, op.ProviderRef, op.LeaseOwner = provider.String, dkey.String, pref.String, leaseOwner.String
	op.LeaseUntil = fromMS(leaseUntil)
	op.Contradicted = contradicted != 0
	op.SupersedesID, op.SupersededByID = supersedes.Int64, supersededBy.Int64
	op.CreatedAt = time.UnixMilli(created).UTC()
	op.UpdatedAt = time.UnixMilli(updated).UTC()
	op.ExpiresAt = fromMS(exp)
	op.ClaimHonoursKeys = claimKeysOf(honours)
	op.RetryNotBefore = fromMS(notBefore)
	op.ClaimApplyBy, op.ClaimDispatchID, op.ClaimLookupID = fromMS(applyBy), dispatchID.String, lookupID.String
	return &op, nil
}

// GetOperation reads (tenant, key) under the write lock, or a not-found
// error. A relaxed transaction reads it from the writer's cache when the
// cache has it (see opCache: it is exactly what the row holds).
func (t *Tx) GetOperation(tenant, key string) (*model.Operation, error) {
	if t.ops != nil {
		if op, ok := t.ops.get(tenant, key); ok {
			return op, nil
		}
	}
	op, err := scanOperation(t.tx.QueryRowContext(t.ctx,
		`SELECT `+opColumns+` FROM operations WHERE tenant = ? AND op_key = ?`, tenant, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", key, tenant)
	}
	if err == nil {
		if t.ops != nil {
			t.ops.put(op)
		}
		// Its next call needs no read to be told from a new key
		// (store.Recaller).
		t.tx.s.remember(opCacheKey(tenant, key))
	}
	return op, err
}

// GetOperationByID reads one operation by its row id.
func (t *Tx) GetOperationByID(id int64) (*model.Operation, error) {
	op, err := scanOperation(t.tx.QueryRowContext(t.ctx,
		`SELECT `+opColumns+` FROM operations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation #%d", id)
	}
	return op, err
}

// insertOperationSQL writes a new operation; its id is past every id an
// effect row still names (see InsertOperation).
const insertOperationSQL = `INSERT INTO operations (id, tenant, op_key, tool, payload_version,
	args, summary, fingerprint, state, version, claim_no, receipt, provider, downstream_key,
	provider_ref, lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
	created_at, updated_at, expires_at, claim_honours_keys, claim_apply_by, claim_dispatch_id, claim_lookup_id, retry_not_before)
	VALUES (` + nextOpIDSQL + `,
	?,?,?,?,?,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// InsertOperation writes a new operation and sets op.ID, op.Version and the
// times. A (tenant, key) that exists already is a conflict.
func (t *Tx) InsertOperation(op *model.Operation) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	now := t.now
	op.Version = 1
	op.CreatedAt, op.UpdatedAt = now.UTC().Truncate(time.Millisecond), now.UTC().Truncate(time.Millisecond)
	// The id is past every id an effect row still names: compaction deletes
	// operations but never their effects (tasks, jobs, local_effects rows),
	// and SQLite would otherwise hand a deleted newest id out again, tying
	// an old effect to a new operation (and tripping the effect tables'
	// UNIQUE operation_id).
	res, err := t.exec(insertOperationSQL,
		op.Tenant, op.Key, op.Tool, op.PayloadVersion, string(op.Args), op.Summary, op.Fingerprint,
		string(op.State), op.ClaimNo, nullJSON(op.Receipt), nullStr(op.Provider), nullStr(op.DownstreamKey),
		nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), boolInt(op.Contradicted),
		nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), ms(now), nullMS(op.ExpiresAt), claimKeysArg(op.ClaimHonoursKeys),
		nullMS(op.ClaimApplyBy), nullStr(op.ClaimDispatchID), nullStr(op.ClaimLookupID), nullMS(op.RetryNotBefore))
	if err != nil {
		return err
	}
	if op.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	// The id rule's next answer, for CreateLocal (see writerIDs).
	t.tx.s.ids.op = op.ID + 1
	t.tx.s.remember(opCacheKey(op.Tenant, op.Key)) // see GetOperation
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// UpdateOperation writes op's mutable fields if, and only if, the row still
// has the state and version given (compare-and-set). On success op.Version is
// bumped; if the row moved on, the error says what it is now (CodeStale).
func (t *Tx) UpdateOperation(op *model.Operation, fromState model.State, fromVersion int64) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	now := t.now
	res, err := t.exec(`UPDATE operations SET state = ?, version = version + 1,
		claim_no = ?, receipt = ?, provider = ?, downstream_key = ?, provider_ref = ?, lease_owner = ?,
		lease_until = ?, contradicted = ?, supersedes_id = ?, superseded_by_id = ?, updated_at = ?,
		expires_at = ?, claim_honours_keys = ?, claim_apply_by = ?, claim_dispatch_id = ?, claim_lookup_id = ?, retry_not_before = ?
		WHERE id = ? AND state = ? AND version = ?`,
		string(op.State), op.ClaimNo, nullJSON(op.Receipt), nullStr(op.Provider), nullStr(op.DownstreamKey),
		nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), boolInt(op.Contradicted),
		nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), nullMS(op.ExpiresAt), claimKeysArg(op.ClaimHonoursKeys),
		nullMS(op.ClaimApplyBy), nullStr(op.ClaimDispatchID), nullStr(op.ClaimLookupID), nullMS(op.RetryNotBefore),
		op.ID, string(fromState), fromVersion)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		cur, gerr := t.GetOperationByID(op.ID)
		if gerr != nil {
			return gerr
		}
		return model.Errorf(model.CodeStale, "operation %q changed since it was read: it was %s (version %d), it is now %s (version %d)",
			cur.Key, fromState, fromVersion, cur.State, cur.Version)
	}
	op.Version = fromVersion + 1
	op.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	return nil
}

// insertAttemptSQL appends an attempt, numbered in SQL.
const insertAttemptSQL = `INSERT INTO attempts (operation_id, seq, outcome, fingerprint,
	trace_id, worker_id, provider_ref, error, started_at, duration_us, finding, detail)
	VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE operation_id = ?), ?,?,?,?,?,?,?,?,?,?)`

// InsertAttempt appends an attempt to its operation's history, numbered
// 1..n per operation (Detail reads the numbers); a.ID is set.
func (t *Tx) InsertAttempt(a *model.Attempt) error {
	if !a.Outcome.Valid() {
		return model.Errorf(model.CodeInvalid, "unknown attempt outcome %q", a.Outcome)
	}
	if (a.Outcome == model.OutcomeLookup) != a.Finding.Valid() {
		return model.Errorf(model.CodeInvalid, "a lookup attempt needs a finding, and only a lookup has one (outcome %q, finding %q)", a.Outcome, a.Finding)
	}
	if a.StartedAt.IsZero() {
		a.StartedAt = t.now
	}
	// Exec, not RETURNING: a statement that returns rows costs a query's
	// machinery on the path every replay takes. seq is numbered in SQL.
	res, err := t.exec(insertAttemptSQL,
		a.OperationID, a.OperationID, string(a.Outcome), a.Fingerprint, nullStr(a.TraceID), nullStr(a.WorkerID),
		nullStr(a.ProviderRef), nullStr(a.Error), ms(a.StartedAt), a.Duration.Microseconds(),
		nullStr(string(a.Finding)), nullStr(a.Detail))
	if err != nil {
		return err
	}
	a.ID, err = res.LastInsertId()
	return err
}

// findingSQL reads the lookup attempt whose id is lookup (an SQL
// expression) as a finding, stale if an attempt that may have reached the
// provider came after it (store.LaterAttemptStalesSQL: not a replay,
// conflict, refusal or expiry) —
// except a "has it" when hasItStays: a provider never takes a delivery
// back, so neither a later "has nothing" (a provider file gone back in time
// unnoticed) nor a later attempt (the agent retrying the key) makes it
// untrue, and "not applied" or a new key against it needs the second
// confirmation — each sends it again.
func findingSQL(lookup string, hasItStays bool) string {
	stale := store.LaterAttemptStalesSQL("a")
	if hasItStays {
		stale = `a.finding <> 'has_it' AND ` + stale
	}
	return `SELECT a.finding, a.provider_ref, a.detail, a.started_at, a.seq, a.worker_id, ` + stale + `, o.provider
	FROM attempts a JOIN operations o ON o.id = a.operation_id
	WHERE a.id = ` + lookup
}

var (
	// latestFindingSQL is model.LatestFinding's rule in SQL.
	latestFindingSQL = findingSQL(latestLookupOf("?"), false)
	// latestConclusiveFindingSQL is the binding lookup
	// (bindingLookupOf), a "has it" never stale.
	latestConclusiveFindingSQL = findingSQL(bindingLookupOf("?"), true)
)

func scanFinding(sc scanner) (*model.Finding, error) {
	var f model.Finding
	var ref, detail, by, prov sql.NullString
	var at int64
	var stale int
	if err := sc.Scan(&f.Kind, &ref, &detail, &at, &f.Seq, &by, &stale, &prov); err != nil {
		return nil, err
	}
	f.Ref, f.Detail, f.By, f.Provider = ref.String, detail.String, by.String, prov.String
	f.At = time.UnixMilli(at).UTC()
	f.Stale = stale != 0
	return &f, nil
}

// LatestFinding is the operation's latest recorded finding, or nil.
func (t *Tx) LatestFinding(opID int64) (*model.Finding, error) {
	f, err := scanFinding(t.queryRow(latestFindingSQL, opID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return f, err
}

// LatestConclusiveFinding is the finding that binds a decision on the
// operation (model.BindingFinding's rule, bindingLookupOf), or nil.
func (t *Tx) LatestConclusiveFinding(opID int64) (*model.Finding, error) {
	f, err := scanFinding(t.queryRow(latestConclusiveFindingSQL, opID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return f, err
}

// UpdateAttempt records how a dispatched attempt ended.
func (t *Tx) UpdateAttempt(a *model.Attempt) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	_, err := t.exec(`UPDATE attempts SET outcome = ?, provider_ref = ?, error = ?,
		duration_us = ? WHERE id = ?`,
		string(a.Outcome), nullStr(a.ProviderRef), nullStr(a.Error), a.Duration.Microseconds(), a.ID)
	return err
}

// InsertDecision records an operator action.
func (t *Tx) InsertDecision(d *model.Decision) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	if d.At.IsZero() {
		d.At = t.now
	}
	res, err := t.exec(`INSERT INTO decisions (operation_id, operator, action, reason,
		evidence, from_state, to_state, from_version, new_key, at) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		d.OperationID, d.Operator, string(d.Action), d.Reason, nullStr(d.Evidence), string(d.FromState),
		string(d.ToState), d.FromVersion, nullStr(d.NewKey), ms(d.At))
	if err != nil {
		return err
	}
	d.ID, err = res.LastInsertId()
	return err
}

// InsertLocalEffect performs a local tool's effect — a row in the table the
// registry names — and returns the result a receipt carries.
func (t *Tx) InsertLocalEffect(e store.LocalEffect) (json.RawMessage, error) {
	if err := t.durableOnly(); err != nil {
		return nil, err
	}
	var (
		res sql.Result
		err error
		key string
	)
	switch e.Table {
	case model.TableTasks:
		res, err = t.exec(`INSERT INTO tasks (tenant, subject, operation_id, created_at) VALUES (?,?,?,?)`,
			e.Tenant, e.Text, e.OperationID, ms(t.now))
		key = "task_id"
	case model.TableReportJobs:
		res, err = t.exec(`INSERT INTO report_jobs (tenant, report, operation_id, created_at) VALUES (?,?,?,?)`,
			e.Tenant, e.Text, e.OperationID, ms(t.now))
		key = "job_id"
	case model.TableLocalEffects:
		res, err = t.exec(`INSERT INTO local_effects (tenant, tool, args, operation_id, created_at) VALUES (?,?,?,?,?)`,
			e.Tenant, e.Tool, string(e.Args), e.OperationID, ms(t.now))
		key = "effect_id"
	default:
		return nil, model.Errorf(model.CodeInvalid, "tool %q: no local table %q", e.Tool, e.Table)
	}
	if err != nil {
		return nil, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	// What the tables' next ids now are, if they were known (writerIDs).
	ids := &t.tx.s.ids
	if next := ids.effect(e.Table); *next != 0 {
		*next = max(*next, id+1)
	}
	if ids.op != 0 {
		ids.op = max(ids.op, e.OperationID+1)
	}
	return effectResult(key, id), nil
}

// GetTombstone returns the tombstone of (tenant, key), or not found.
func (t *Tx) GetTombstone(tenant, key string) (*model.Tombstone, error) {
	var ts model.Tombstone
	var exp, forget int64
	err := t.queryRow(`SELECT tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at
		FROM tombstones WHERE tenant = ? AND op_key = ? AND forget_at > ?`, tenant, key, ms(t.now)).
		Scan(&ts.Tenant, &ts.Key, &ts.Tool, &ts.Fingerprint, &ts.FinalState, &exp, &forget)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no tombstone")
	}
	if err != nil {
		return nil, err
	}
	ts.ExpiredAt, ts.ForgetAt = time.UnixMilli(exp).UTC(), time.UnixMilli(forget).UTC()
	return &ts, nil
}

// LongestReplayWindow: see store.Tx.
func (t *Tx) LongestReplayWindow() (time.Duration, error) {
	var w sql.NullInt64
	err := t.queryRow(`SELECT MAX(expires_at - updated_at) FROM operations WHERE expires_at IS NOT NULL AND expires_at <= ?
		AND state IN ('applied','failed') AND contradicted = 0`, ms(t.now)).Scan(&w)
	if err != nil || !w.Valid || w.Int64 < 0 {
		return 0, err
	}
	return time.Duration(w.Int64) * time.Millisecond, nil
}

// ExpiredLeases lists in_progress operations whose lease ended before the
// transaction's time.
func (t *Tx) ExpiredLeases(limit int) ([]*model.Operation, error) {
	return t.queryOps(`SELECT `+opColumns+` FROM operations WHERE state = 'in_progress' AND lease_until < ?
		ORDER BY lease_until LIMIT ?`, ms(t.now), limit)
}

func (t *Tx) queryOps(q string, args ...any) ([]*model.Operation, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*model.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, op)
	}
	return out, rows.Err()
}

// The statements of CompactExpired. Each finds its rows through an index
// (migration 16), never by scanning every operation: a sweep runs them for
// every receipt it compacts, holding the writer, and a scan made it grow
// with the square of the ledger. The links are cleared by id, the rows
// pointing at one found by a union of index lookups (an OR of the three
// columns defeats every index); the DELETE checks the foreign keys on
// supersedes_id and superseded_by_id through their indexes. The test of
// their query plans runs each (TestCompactionStatementsUseIndexes).
const (
	compactExpiredSQL = `SELECT ` + opColumns + ` FROM operations WHERE expires_at IS NOT NULL AND expires_at <= ?
		AND state IN ('applied','failed') AND contradicted = 0 LIMIT ?`
	compactTombstoneSQL = `INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT (tenant, op_key) DO UPDATE SET fingerprint = excluded.fingerprint,
		final_state = excluded.final_state, expired_at = excluded.expired_at, forget_at = excluded.forget_at`
	compactChainSQL          = `SELECT id FROM operations WHERE superseded_by_id = ?`
	compactChainTombstoneSQL = `INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
		SELECT tenant, op_key, tool, fingerprint, state, ?, ? FROM operations WHERE id = ?
		ON CONFLICT (tenant, op_key) DO NOTHING`
	compactUnlinkSQL = `UPDATE operations SET supersedes_id = NULL, superseded_by_id = NULL
		WHERE id IN (SELECT ? UNION SELECT id FROM operations WHERE supersedes_id = ?
			UNION SELECT id FROM operations WHERE superseded_by_id = ?)`
	compactDeleteSQL = `DELETE FROM operations WHERE id = ?`
	compactForgetSQL = `DELETE FROM tombstones WHERE forget_at <= ?`
)

// CompactExpired turns up to limit operations whose replay window ended into
// tombstones kept until tombstoneTTL past now, and drops tombstones past
// their own window. Effects (tasks, report jobs) are never deleted.
func (t *Tx) CompactExpired(tombstoneTTL time.Duration, limit int) (compacted, forgotten int, err error) {
	if err := t.durableOnly(); err != nil {
		return 0, 0, err
	}
	if tombstoneTTL <= 0 {
		// A tombstone that ends when it begins would be forgotten below, in
		// this very transaction, and the key's next call would make its
		// effect again.
		return 0, 0, model.Errorf(model.CodeInvalid, "tombstone window must be positive, got %v", tombstoneTTL)
	}
	now := ms(t.now)
	ops, err := t.queryOps(compactExpiredSQL, now, limit)
	if err != nil {
		return 0, 0, err
	}
	for _, op := range ops {
		if _, err = t.exec(compactTombstoneSQL,
			op.Tenant, op.Key, op.Tool, op.Fingerprint, string(op.State), now, forgetAt(now, tombstoneTTL, op)); err != nil {
			return 0, 0, err
		}
		// The operations this one superseded (a chain, if keys were
		// superseded more than once) go with it: their only purpose was to
		// point retries here, and tombstones now answer for them all.
		chain := []int64{op.ID}
		for frontier := []int64{op.ID}; len(frontier) > 0; {
			var next []int64
			for _, id := range frontier {
				rows, err := t.query(compactChainSQL, id)
				if err != nil {
					return 0, 0, err
				}
				for rows.Next() {
					var prev int64
					if err := rows.Scan(&prev); err != nil {
						rows.Close()
						return 0, 0, err
					}
					next = append(next, prev)
				}
				rows.Close()
			}
			chain, frontier = append(chain, next...), next
		}
		for _, id := range chain[1:] {
			if _, err = t.exec(compactChainTombstoneSQL, now, forgetAt(now, tombstoneTTL, op), id); err != nil {
				return 0, 0, err
			}
		}
		for _, id := range chain {
			if _, err = t.exec(compactUnlinkSQL, id, id, id); err != nil {
				return 0, 0, err
			}
		}
		for _, id := range chain {
			if _, err = t.exec(compactDeleteSQL, id); err != nil {
				return 0, 0, err
			}
		}
		compacted++
	}
	res, err := t.exec(compactForgetSQL, now)
	if err != nil {
		return 0, 0, err
	}
	n, _ := res.RowsAffected()
	return compacted, int(n), nil
}

// forgetAt is when op's tombstone may be forgotten: tombstoneTTL after now,
// and never sooner than the replay window op recorded (a retry may come
// that long after its receipt was compacted and must still hear
// "expired"), whatever window a sweep was given.
func forgetAt(now int64, tombstoneTTL time.Duration, op *model.Operation) int64 {
	f := now + tombstoneTTL.Milliseconds()
	if w := ms(op.ExpiresAt) - ms(op.UpdatedAt); now+w > f {
		f = now + w
	}
	return f
}

// SetReceipt stores the receipt of an operation created in this same
// transaction (its id is needed inside the receipt's effect, so the two are
// written in two statements of one transaction; the version does not move).
func (t *Tx) SetReceipt(opID int64, receipt []byte) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	_, err := t.exec(`UPDATE operations SET receipt = ? WHERE id = ?`, string(receipt), opID)
	return err
}

// SupersedingKey returns the key of the operation that superseded opID.
func (t *Tx) SupersedingKey(opID int64) (string, error) {
	var key string
	err := t.queryRow(`SELECT n.op_key FROM operations o JOIN operations n ON n.id = o.superseded_by_id WHERE o.id = ?`, opID).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", model.Errorf(model.CodeNotFound, "operation #%d has no successor", opID)
	}
	return key, err
}
