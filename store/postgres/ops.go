package postgres

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

const opColumns = `id, tenant, op_key, tool, payload_version, args, summary, fingerprint,
	state, version, claim_no, receipt, provider, downstream_key, provider_ref,
	lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
	created_at, updated_at, expires_at, claim_honours_keys, claim_apply_by, claim_dispatch_id, claim_lookup_id, retry_not_before`

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func nullMS(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

func fromMS(v *int64) time.Time {
	if v == nil || *v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(*v).UTC()
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func nullJSON(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func id(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func scanOperation(row pgx.Row, extra ...any) (*model.Operation, error) {
	var (
		op                                        model.Operation
		args                                      string
		receipt, provider, dkey, pref, leaseOwner *string
		leaseUntil, supersedes, supersededBy, exp *int64
		created, updated                          int64
		state                                     string
		applyBy, notBefore                        *int64
		dispatchID, lookupID                      *string
	)
	dest := []any{&op.ID, &op.Tenant, &op.Key, &op.Tool, &op.PayloadVersion, &args, &op.Summary,
		&op.Fingerprint, &state, &op.Version, &op.ClaimNo, &receipt, &provider, &dkey, &pref,
		&leaseOwner, &leaseUntil, &op.Contradicted, &supersedes, &supersededBy, &created, &updated, &exp, &op.ClaimHonoursKeys,
		&applyBy, &dispatchID, &lookupID, &notBefore}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	op.State = model.State(state)
	op.Args = json.RawMessage(args)
	if receipt != nil {
		op.Receipt = json.RawMessage(*receipt)
	}
	op.Provider, op.DownstreamKey, op.ProviderRef, op.LeaseOwner = str(provider), str(dkey), str(pref), str(leaseOwner)
	op.LeaseUntil = fromMS(leaseUntil)
	op.SupersedesID, op.SupersededByID = id(supersedes), id(supersededBy)
	op.CreatedAt = time.UnixMilli(created).UTC()
	op.UpdatedAt = time.UnixMilli(updated).UTC()
	op.ExpiresAt = fromMS(exp)
	op.RetryNotBefore = fromMS(notBefore)
	op.ClaimApplyBy, op.ClaimDispatchID, op.ClaimLookupID = fromMS(applyBy), str(dispatchID), str(lookupID)
	return &op, nil
}

// lockKey is the advisory lock of one (tenant, key) in this schema: held
// to the end of the transaction, it makes the read-then-insert of a new
// operation one step across every connection, where no row exists yet to
// lock.
const lockKey = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/' || $1), hashtext($2))`

// GetOperation locks (tenant, key) for this transaction and reads it, or a
// not-found error. The lock is taken first, in its own statement, so the
// read sees whatever the previous holder committed. The same round trip
// reads ahead what the call goes on to need: the key's tombstone (a late
// retry of a compacted operation), an id for the operation when the key is
// new and one for the attempt the call records — so that inserting either
// waits for no answer and goes with the next round trip.
func (t *Tx) GetOperation(tenant, key string) (*model.Operation, error) {
	// The hint is for this read only: a later read in the same transaction
	// (a bulk generator's next call) draws no effect id unless told again.
	effectTable := t.effectTable
	t.effectTable = ""
	b, n := t.batch()
	b.Queue(lockKey, tenant, key)
	b.Queue(`SELECT `+opColumns+` FROM operations WHERE tenant = $1 AND op_key = $2 FOR UPDATE`, tenant, key)
	b.Queue(readAheadQuery[effectTable], tenant, key, ms(t.now))
	br, err := t.sendQueued(b, n)
	if err != nil {
		return nil, err
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, err
	}
	op, err := scanOperation(br.QueryRow())
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		br.Close()
		return nil, err
	}
	var (
		attemptID                    int64
		newID, effectID              *int64
		ts                           model.Tombstone
		tsTenant                     *string
		tsKey, tsTool, tsFP, tsFinal *string
		tsExp, tsForget              *int64
	)
	err2 := br.QueryRow().Scan(&attemptID, &newID, &effectID, &tsTenant, &tsKey, &tsTool, &tsFP, &tsFinal, &tsExp, &tsForget)
	if cerr := br.Close(); err2 == nil {
		err2 = cerr
	}
	if err2 != nil {
		return nil, err2
	}
	t.drawn = drawnIDs{attempt: attemptID}
	if op != nil {
		t.drawn.opID = op.ID
		return op, nil
	}
	var found *model.Tombstone
	if tsTenant != nil {
		ts.Tenant, ts.Key, ts.Tool, ts.Fingerprint = *tsTenant, str(tsKey), str(tsTool), str(tsFP)
		ts.FinalState = model.State(str(tsFinal))
		ts.ExpiredAt, ts.ForgetAt = time.UnixMilli(id(tsExp)).UTC(), time.UnixMilli(id(tsForget)).UTC()
		found = &ts
	}
	t.tomb = &tombLookup{tenant: tenant, key: key, ts: found}
	if newID != nil {
		t.drawn.tenant, t.drawn.key, t.drawn.newOp, t.drawn.opID = tenant, key, *newID, *newID
		if effectID != nil {
			t.drawn.effect, t.drawn.effectTable = *effectID, effectTable
		}
	}
	return nil, model.Errorf(model.CodeNotFound, "no operation %q in tenant %q", key, tenant)
}

// readAheadQuery is GetOperation's read-ahead, one row: an attempt id, the
// new operation's id when (tenant, key) has no operation (a sequence value
// is drawn only then), an id for its local effect row when the call named
// the effect's table (ExpectLocalEffect) and the key has neither an
// operation nor a tombstone — the one case that inserts it — and the key's
// live tombstone, if any. The key is locked, so nothing inserts it between
// this and the read before it. By effect table ("" none).
var readAheadQuery = func() map[model.LocalTable]string {
	q := func(effect string) string {
		return `SELECT nextval('attempts_id_seq'), n.id, ` + effect + `,
	ts.tenant, ts.op_key, ts.tool, ts.fingerprint, ts.final_state, ts.expired_at, ts.forget_at
	FROM (SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM operations WHERE tenant = $1 AND op_key = $2)
		THEN nextval('operations_id_seq') END AS id) n
	LEFT JOIN tombstones ts ON ts.tenant = $1 AND ts.op_key = $2 AND ts.forget_at > $3`
	}
	m := map[model.LocalTable]string{"": q(`NULL::bigint`)}
	for table, seq := range effectSeq {
		m[table] = q(`CASE WHEN n.id IS NOT NULL AND ts.tenant IS NULL THEN nextval('` + seq + `') END`)
	}
	return m
}()

// effectSeq is the id sequence of each local effect table.
var effectSeq = map[model.LocalTable]string{
	model.TableTasks: "tasks_id_seq", model.TableReportJobs: "report_jobs_id_seq", model.TableLocalEffects: "local_effects_id_seq",
}

// tombLookup is a tombstone read ahead by GetOperation (ts nil: none).
type tombLookup struct {
	tenant, key string
	ts          *model.Tombstone
}

// GetOperationByID reads and row-locks one operation by its id.
func (t *Tx) GetOperationByID(opID int64) (*model.Operation, error) {
	op, err := scanOperation(t.queryRow(`SELECT `+opColumns+` FROM operations WHERE id = $1 FOR UPDATE`, opID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, model.Errorf(model.CodeNotFound, "no operation #%d", opID)
	}
	return op, err
}

// InsertOperation writes a new operation and sets op.ID, op.Version and the
// times. A (tenant, key) that exists already is a conflict. Ids come from a
// sequence, which never hands out an id twice, so an effect row that
// outlived its compacted operation is never tied to a new one.
func (t *Tx) InsertOperation(op *model.Operation) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	now := t.now
	op.Version = 1
	op.CreatedAt, op.UpdatedAt = now.UTC().Truncate(time.Millisecond), now.UTC().Truncate(time.Millisecond)
	if d := &t.drawn; d.newOp != 0 && d.tenant == op.Tenant && d.key == op.Key {
		// GetOperation found the key missing, under its lock, and drew the
		// id: the insert answers nothing the caller waits for and goes with
		// the next round trip (its error, if any, with that statement's).
		op.ID, d.newOp, d.inserted = d.newOp, 0, true
		t.laterOp(op.ID, `INSERT INTO operations (id, tenant, op_key, tool, payload_version,
		args, summary, fingerprint, state, version, claim_no, receipt, provider, downstream_key,
		provider_ref, lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
		created_at, updated_at, expires_at, claim_honours_keys, claim_apply_by, claim_dispatch_id, claim_lookup_id, retry_not_before)
		VALUES ($22,$1,$2,$3,$4,$5,$6,$7,$8,1,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$23,$24,$25,$26,$27)`,
			op.Tenant, op.Key, op.Tool, op.PayloadVersion, string(op.Args), op.Summary, op.Fingerprint,
			string(op.State), op.ClaimNo, nullJSON(op.Receipt), nullStr(op.Provider), nullStr(op.DownstreamKey),
			nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), op.Contradicted,
			nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), ms(now), nullMS(op.ExpiresAt), op.ID, claimKeysArg(op.ClaimHonoursKeys),
			nullMS(op.ClaimApplyBy), nullStr(op.ClaimDispatchID), nullStr(op.ClaimLookupID), nullMS(op.RetryNotBefore))
		return nil
	}
	return t.queryRow(`INSERT INTO operations (tenant, op_key, tool, payload_version,
		args, summary, fingerprint, state, version, claim_no, receipt, provider, downstream_key,
		provider_ref, lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
		created_at, updated_at, expires_at, claim_honours_keys, claim_apply_by, claim_dispatch_id, claim_lookup_id, retry_not_before)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,1,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26) RETURNING id`,
		op.Tenant, op.Key, op.Tool, op.PayloadVersion, string(op.Args), op.Summary, op.Fingerprint,
		string(op.State), op.ClaimNo, nullJSON(op.Receipt), nullStr(op.Provider), nullStr(op.DownstreamKey),
		nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), op.Contradicted,
		nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), ms(now), nullMS(op.ExpiresAt), claimKeysArg(op.ClaimHonoursKeys),
		nullMS(op.ClaimApplyBy), nullStr(op.ClaimDispatchID), nullStr(op.ClaimLookupID), nullMS(op.RetryNotBefore)).Scan(&op.ID)
}

// receiptArg is the receipt's place among a queued operation insert's
// arguments ($10).
const receiptArg = 9

// laterOp queues the insert of the new operation opID.
func (t *Tx) laterOp(opID int64, sql string, args ...any) {
	t.pending = append(t.pending, queued{sql: sql, args: args, opID: opID})
}

// holdOps takes the queued operation inserts out of the queue, for a
// statement that may run before them; putBack returns them to its front.
func (t *Tx) holdOps() []queued {
	var held, rest []queued
	for _, q := range t.pending {
		if q.opID != 0 {
			held = append(held, q)
		} else {
			rest = append(rest, q)
		}
	}
	t.pending = rest
	return held
}

func (t *Tx) putBack(held []queued) {
	if len(held) > 0 {
		t.pending = append(held, t.pending...)
	}
}

// UpdateOperation writes op's mutable fields if, and only if, the row still
// has the state and version given (compare-and-set). On success op.Version
// is bumped; if the row moved on, the error says what it is now (CodeStale).
// Under READ COMMITTED a row changed by a concurrent commit is re-checked
// against the condition, so a stale writer never overwrites a newer row.
func (t *Tx) UpdateOperation(op *model.Operation, fromState model.State, fromVersion int64) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	now := t.now
	tag, err := t.exec(`UPDATE operations SET state = $1, version = version + 1,
		claim_no = $2, receipt = $3, provider = $4, downstream_key = $5, provider_ref = $6, lease_owner = $7,
		lease_until = $8, contradicted = $9, supersedes_id = $10, superseded_by_id = $11, updated_at = $12,
		expires_at = $13, claim_honours_keys = $17, claim_apply_by = $18, claim_dispatch_id = $19, claim_lookup_id = $20, retry_not_before = $21
		WHERE id = $14 AND state = $15 AND version = $16`,
		string(op.State), op.ClaimNo, nullJSON(op.Receipt), nullStr(op.Provider), nullStr(op.DownstreamKey),
		nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), op.Contradicted,
		nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), nullMS(op.ExpiresAt),
		op.ID, string(fromState), fromVersion, claimKeysArg(op.ClaimHonoursKeys),
		nullMS(op.ClaimApplyBy), nullStr(op.ClaimDispatchID), nullStr(op.ClaimLookupID), nullMS(op.RetryNotBefore))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
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

// InsertAttempt appends an attempt to its operation's history, numbered
// 1..n per operation; a.ID is set. The operation was locked when it was
// read, so no other transaction numbers an attempt of it meanwhile.
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
	if d := &t.drawn; d.attempt != 0 && d.opID == a.OperationID {
		// The operation is locked and its id was drawn ahead with it: queued.
		a.ID, d.attempt = d.attempt, 0
		// A new operation's first attempt is number 1: nothing to look up.
		seq := `(SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE operation_id = $1)`
		if d.inserted {
			seq = `1`
		}
		t.later(`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint,
		trace_id, worker_id, provider_ref, error, started_at, duration_us, finding, detail)
		VALUES ($12, $1, `+seq+`, $2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
			a.OperationID, string(a.Outcome), a.Fingerprint, nullStr(a.TraceID), nullStr(a.WorkerID),
			nullStr(a.ProviderRef), nullStr(a.Error), ms(a.StartedAt), a.Duration.Microseconds(),
			nullStr(string(a.Finding)), nullStr(a.Detail), a.ID)
		return nil
	}
	return t.queryRow(`INSERT INTO attempts (operation_id, seq, outcome, fingerprint,
		trace_id, worker_id, provider_ref, error, started_at, duration_us, finding, detail)
		VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE operation_id = $1), $2,$3,$4,$5,$6,$7,$8,$9,$10,$11)
		RETURNING id`,
		a.OperationID, string(a.Outcome), a.Fingerprint, nullStr(a.TraceID), nullStr(a.WorkerID),
		nullStr(a.ProviderRef), nullStr(a.Error), ms(a.StartedAt), a.Duration.Microseconds(),
		nullStr(string(a.Finding)), nullStr(a.Detail)).Scan(&a.ID)
}

// latestFindingJoin joins the newest lookup attempt of the operation whose
// id is opID (an SQL expression; one step down attempts_lookup) and whether
// an attempt that may have reached the provider came after it
// (store.LaterAttemptStalesSQL): model.LatestFinding's rule in SQL. As
// a LATERAL join it adds no round trip to a list; its column names do not
// collide with operations'.
func latestFindingJoin(opID string) string {
	return `LEFT JOIN LATERAL (SELECT a.finding AS lf_kind, a.provider_ref AS lf_ref,
	a.detail AS lf_detail, a.started_at AS lf_at, a.seq AS lf_seq, a.worker_id AS lf_by,
	` + store.LaterAttemptStalesSQL("a") + ` AS lf_stale
	FROM attempts a WHERE a.operation_id = ` + opID + ` AND a.outcome = 'lookup' ORDER BY a.seq DESC LIMIT 1) lf ON true`
}

// latestFindingColumnList is what scanFinding reads, in its order.
const latestFindingColumnList = `lf_kind, lf_ref, lf_detail, lf_at, lf_seq, lf_by, lf_stale`

// bindingFindingJoin joins, beside latestFindingJoin, the lookup a
// decision is checked against (LatestConclusiveFinding's choice,
// model.BindingFinding's rule: among the lookups from the newest "has
// another request" on — it outranks every lookup before it — any "has
// it" first, never stale; else the newest "has nothing"; else that "has
// another request"), for model.Operation.BindingFinding.
func bindingFindingJoin(opID string) string {
	return `LEFT JOIN LATERAL (SELECT a.finding AS bf_kind, a.provider_ref AS bf_ref,
	a.detail AS bf_detail, a.started_at AS bf_at, a.seq AS bf_seq, a.worker_id AS bf_by,
	(a.finding <> 'has_it' AND ` + store.LaterAttemptStalesSQL("a") + `) AS bf_stale
	FROM attempts a WHERE a.operation_id = ` + opID + ` AND a.outcome = 'lookup' AND a.finding IN ('has_it', 'has_nothing', 'has_other')
	AND a.seq >= COALESCE((SELECT MAX(y.seq) FROM attempts y WHERE y.operation_id = a.operation_id
		AND y.outcome = 'lookup' AND y.finding = 'has_other'), 0)
	ORDER BY a.finding = 'has_it' DESC, a.seq DESC LIMIT 1) bf ON true`
}

// bindingFindingColumnList is bindingFindingJoin's columns, in findingScan's order.
const bindingFindingColumnList = `bf_kind, bf_ref, bf_detail, bf_at, bf_seq, bf_by, bf_stale`

// shownFindingSQL is the kind of the finding an operation's FINDING column
// shows (model.Operation.Shown), over both joins: the binding lookup's if
// it found another request under the key (it outranks every lookup
// before it) or the effect; the binding "has nothing" if it is fresh and
// the latest lookup cannot tell; else the latest lookup's.
const shownFindingSQL = `(CASE WHEN bf.bf_kind = 'has_other' THEN 'has_other'
	WHEN bf.bf_kind = 'has_it' THEN 'has_it'
	WHEN bf.bf_kind = 'has_nothing' AND NOT bf.bf_stale AND lf.lf_kind = 'cannot_tell' THEN 'has_nothing'
	ELSE lf.lf_kind END)`

// findingScan holds one row's latest-finding columns (all NULL: not checked).
type findingScan struct {
	kind, ref, detail, by *string
	at                    *int64
	seq                   *int32
	stale                 *bool
}

func (f *findingScan) dest() []any {
	return []any{&f.kind, &f.ref, &f.detail, &f.at, &f.seq, &f.by, &f.stale}
}

// finding is the scanned finding of an operation with provider, or nil.
func (f *findingScan) finding(provider string) *model.Finding {
	if f.kind == nil {
		return nil
	}
	out := &model.Finding{Kind: model.FindingKind(*f.kind), Provider: provider, Ref: str(f.ref),
		Detail: str(f.detail), By: str(f.by)}
	if f.at != nil {
		out.At = time.UnixMilli(*f.at).UTC()
	}
	if f.seq != nil {
		out.Seq = int(*f.seq)
	}
	if f.stale != nil {
		out.Stale = *f.stale
	}
	return out
}

// LatestFinding is the operation's latest recorded finding, or nil.
func (t *Tx) LatestFinding(opID int64) (*model.Finding, error) {
	return t.findingOf(opID, latestFindingColumnList, latestFindingJoin("o.id"))
}

// LatestConclusiveFinding is the finding that binds a decision on the
// operation (model.BindingFinding's rule), or nil: the lookup
// bindingFindingJoin picks for lists.
func (t *Tx) LatestConclusiveFinding(opID int64) (*model.Finding, error) {
	return t.findingOf(opID, bindingFindingColumnList, bindingFindingJoin("o.id"))
}

// findingOf reads one finding of operation opID through join (one of the
// finding joins above, on o) and its columns, or nil.
func (t *Tx) findingOf(opID int64, columns, join string) (*model.Finding, error) {
	var f findingScan
	var provider *string
	err := t.queryRow(`SELECT o.provider, `+columns+` FROM operations o `+join+` WHERE o.id = $1`, opID).
		Scan(append([]any{&provider}, f.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return f.finding(str(provider)), nil
}

// UpdateAttempt records how a dispatched attempt ended.
func (t *Tx) UpdateAttempt(a *model.Attempt) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	_, err := t.exec(`UPDATE attempts SET outcome = $1, provider_ref = $2, error = $3,
		duration_us = $4 WHERE id = $5`,
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
	return t.queryRow(`INSERT INTO decisions (operation_id, operator, action, reason,
		evidence, from_state, to_state, from_version, new_key, at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING id`,
		d.OperationID, d.Operator, string(d.Action), d.Reason, nullStr(d.Evidence), string(d.FromState),
		string(d.ToState), d.FromVersion, nullStr(d.NewKey), ms(d.At)).Scan(&d.ID)
}

// InsertLocalEffect performs a local tool's effect — a row in the table
// the registry names — and returns the result a receipt carries.
func (t *Tx) InsertLocalEffect(e store.LocalEffect) (json.RawMessage, error) {
	if err := t.durableOnly(); err != nil {
		return nil, err
	}
	var (
		err   error
		key   string
		rowID int64
	)
	// The effect tables have no foreign key to operations: a new
	// operation's queued insert waits for its receipt, which names this
	// row, and is written once, final (SetReceipt), instead of inserted
	// here and updated after.
	if d := &t.drawn; d.effect != 0 && d.inserted && d.opID == e.OperationID && d.effectTable == e.Table {
		// A new operation's effect, its id drawn with the key's read:
		// queued with the operation's insert, nothing to wait for.
		rowID, d.effect = d.effect, 0
		switch e.Table {
		case model.TableTasks:
			t.later(`INSERT INTO tasks (id, tenant, subject, operation_id, created_at) VALUES ($5,$1,$2,$3,$4)`,
				e.Tenant, e.Text, e.OperationID, ms(t.now), rowID)
			key = "task_id"
		case model.TableReportJobs:
			t.later(`INSERT INTO report_jobs (id, tenant, report, operation_id, created_at) VALUES ($5,$1,$2,$3,$4)`,
				e.Tenant, e.Text, e.OperationID, ms(t.now), rowID)
			key = "job_id"
		case model.TableLocalEffects:
			t.later(`INSERT INTO local_effects (id, tenant, tool, args, operation_id, created_at) VALUES ($6,$1,$2,$3,$4,$5)`,
				e.Tenant, e.Tool, string(e.Args), e.OperationID, ms(t.now), rowID)
			key = "effect_id"
		}
		return json.Marshal(map[string]any{key: rowID, "status": "created"})
	}
	held := t.holdOps()
	defer t.putBack(held)
	switch e.Table {
	case model.TableTasks:
		err = t.queryRow(`INSERT INTO tasks (tenant, subject, operation_id, created_at) VALUES ($1,$2,$3,$4) RETURNING id`,
			e.Tenant, e.Text, e.OperationID, ms(t.now)).Scan(&rowID)
		key = "task_id"
	case model.TableReportJobs:
		err = t.queryRow(`INSERT INTO report_jobs (tenant, report, operation_id, created_at) VALUES ($1,$2,$3,$4) RETURNING id`,
			e.Tenant, e.Text, e.OperationID, ms(t.now)).Scan(&rowID)
		key = "job_id"
	case model.TableLocalEffects:
		err = t.queryRow(`INSERT INTO local_effects (tenant, tool, args, operation_id, created_at) VALUES ($1,$2,$3,$4,$5) RETURNING id`,
			e.Tenant, e.Tool, string(e.Args), e.OperationID, ms(t.now)).Scan(&rowID)
		key = "effect_id"
	default:
		return nil, model.Errorf(model.CodeInvalid, "tool %q: no local table %q", e.Tool, e.Table)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{key: rowID, "status": "created"})
}

// Exec runs an embedding program's statement (PostgreSQL's $n
// placeholders) in this transaction. LastInsertId is not available on
// PostgreSQL: use RETURNING through your own tables' design.
func (t *Tx) Exec(query string, args ...any) (sql.Result, error) {
	if err := t.durableOnly(); err != nil {
		return nil, err
	}
	tag, err := t.exec(query, args...)
	if err != nil {
		return nil, err
	}
	return pgResult{tag.RowsAffected()}, nil
}

type pgResult struct{ rows int64 }

func (r pgResult) LastInsertId() (int64, error) {
	return 0, model.Errorf(model.CodeUnsupported, "PostgreSQL has no last insert id; use RETURNING")
}
func (r pgResult) RowsAffected() (int64, error) { return r.rows, nil }

const tombstoneQuery = `SELECT tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at
	FROM tombstones WHERE tenant = $1 AND op_key = $2 AND forget_at > $3`

func scanTombstone(row pgx.Row) (*model.Tombstone, error) {
	var ts model.Tombstone
	var exp, forget int64
	var final string
	if err := row.Scan(&ts.Tenant, &ts.Key, &ts.Tool, &ts.Fingerprint, &final, &exp, &forget); err != nil {
		return nil, err
	}
	ts.FinalState = model.State(final)
	ts.ExpiredAt, ts.ForgetAt = time.UnixMilli(exp).UTC(), time.UnixMilli(forget).UTC()
	return &ts, nil
}

// GetTombstone returns the tombstone of (tenant, key), or not found. The
// key GetOperation just found missing was read ahead with it (tombstones
// change only with the operation's key locked, which this transaction
// holds).
func (t *Tx) GetTombstone(tenant, key string) (*model.Tombstone, error) {
	var ts *model.Tombstone
	var err error
	if tl := t.tomb; tl != nil && tl.tenant == tenant && tl.key == key {
		ts = tl.ts
	} else if ts, err = scanTombstone(t.queryRow(tombstoneQuery, tenant, key, ms(t.now))); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if ts == nil {
		return nil, model.Errorf(model.CodeNotFound, "no tombstone")
	}
	return ts, nil
}

// LongestReplayWindow: see store.Tx.
func (t *Tx) LongestReplayWindow() (time.Duration, error) {
	var w *int64
	err := t.queryRow(`SELECT MAX(expires_at - updated_at) FROM operations WHERE expires_at IS NOT NULL AND expires_at <= $1
		AND state IN ('applied','failed') AND NOT contradicted`, ms(t.now)).Scan(&w)
	if err != nil || w == nil || *w < 0 {
		return 0, err
	}
	return time.Duration(*w) * time.Millisecond, nil
}

// ExpiredLeases lists in_progress operations whose lease ended before the
// transaction's time, row-locked; one that another transaction holds is
// skipped (that transaction is moving it on already).
func (t *Tx) ExpiredLeases(limit int) ([]*model.Operation, error) {
	return t.queryOps(`SELECT `+opColumns+` FROM operations WHERE state = 'in_progress' AND lease_until < $1
		ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED`, ms(t.now), limit)
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
// (operations_superseded_by, migration 1; operations_supersedes and
// tombstones_forget, migration 16), never by reading every operation: a
// sweep runs them for every receipt it compacts, and a scan made it grow
// with the square of the ledger. The rows pointing at a chain are found
// by a union of index lookups (an OR of the three columns reads them all);
// the DELETE checks the foreign keys on supersedes_id and superseded_by_id
// through their indexes. TestCompactionStatementsUseIndexes plans each.
const (
	compactExpiredSQL = `SELECT ` + opColumns + ` FROM operations WHERE expires_at IS NOT NULL AND expires_at <= $1
		AND state IN ('applied','failed') AND NOT contradicted ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`
	compactTombstoneSQL = `INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (tenant, op_key) DO UPDATE SET fingerprint = excluded.fingerprint,
		final_state = excluded.final_state, expired_at = excluded.expired_at, forget_at = excluded.forget_at`
	compactChainSQL = `WITH RECURSIVE chain(id) AS (
			SELECT $1::bigint
			UNION SELECT o.id FROM operations o JOIN chain c ON o.superseded_by_id = c.id)
		SELECT id FROM chain`
	compactChainTombstoneSQL = `INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
		SELECT tenant, op_key, tool, fingerprint, state, $1, $2 FROM operations WHERE id = ANY($3) AND id <> $4
		ON CONFLICT (tenant, op_key) DO NOTHING`
	compactUnlinkSQL = `UPDATE operations SET supersedes_id = NULL, superseded_by_id = NULL
		WHERE id IN (SELECT unnest($1::bigint[])
			UNION SELECT id FROM operations WHERE supersedes_id = ANY($1)
			UNION SELECT id FROM operations WHERE superseded_by_id = ANY($1))`
	compactDeleteSQL = `DELETE FROM operations WHERE id = ANY($1)`
	compactForgetSQL = `DELETE FROM tombstones WHERE forget_at <= $1`
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
	forget := now + tombstoneTTL.Milliseconds()
	ops, err := t.queryOps(compactExpiredSQL, now, limit)
	if err != nil {
		return 0, 0, err
	}
	for _, op := range ops {
		// Never sooner than the replay window op recorded: a retry may
		// come that long after its receipt was compacted.
		forget := max(forget, now+ms(op.ExpiresAt)-ms(op.UpdatedAt))
		if _, err = t.exec(compactTombstoneSQL,
			op.Tenant, op.Key, op.Tool, op.Fingerprint, string(op.State), now, forget); err != nil {
			return 0, 0, err
		}
		// The operations this one superseded (a chain, if keys were
		// superseded more than once) go with it: their only purpose was to
		// point retries here, and tombstones now answer for them all.
		var chain []int64
		rows, err := t.query(compactChainSQL, op.ID)
		if err != nil {
			return 0, 0, err
		}
		for rows.Next() {
			var cid int64
			if err := rows.Scan(&cid); err != nil {
				rows.Close()
				return 0, 0, err
			}
			chain = append(chain, cid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, 0, err
		}
		if _, err = t.exec(compactChainTombstoneSQL, now, forget, chain, op.ID); err != nil {
			return 0, 0, err
		}
		if _, err = t.exec(compactUnlinkSQL, chain); err != nil {
			return 0, 0, err
		}
		if _, err = t.exec(compactDeleteSQL, chain); err != nil {
			return 0, 0, err
		}
		compacted++
	}
	tag, err := t.exec(compactForgetSQL, now)
	if err != nil {
		return 0, 0, err
	}
	return compacted, int(tag.RowsAffected()), nil
}

// SetReceipt stores the receipt of an operation created in this same
// transaction (its id is needed inside the receipt's effect, so the two are
// written in two statements of one transaction; the version does not move).
func (t *Tx) SetReceipt(opID int64, receipt []byte) error {
	if err := t.durableOnly(); err != nil {
		return err
	}
	for i := range t.pending {
		if q := &t.pending[i]; q.opID == opID {
			// Not inserted yet: it is inserted with this receipt.
			q.args[receiptArg] = string(receipt)
			return nil
		}
	}
	// Nothing waits for its result: it goes with the next statement.
	t.later(`UPDATE operations SET receipt = $1 WHERE id = $2`, string(receipt), opID)
	return nil
}

// SupersedingKey returns the key of the operation that superseded opID.
func (t *Tx) SupersedingKey(opID int64) (string, error) {
	var key string
	err := t.queryRow(`SELECT n.op_key FROM operations o JOIN operations n ON n.id = o.superseded_by_id WHERE o.id = $1`, opID).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", model.Errorf(model.CodeNotFound, "operation #%d has no successor", opID)
	}
	return key, err
}

// LedgerID is the ledger's identity read inside the transaction, and kept
// as Store.LedgerID keeps it (read once per process).
func (t *Tx) LedgerID() (string, error) {
	t.s.lidMu.Lock()
	id := t.s.lid
	t.s.lidMu.Unlock()
	if id != "" {
		return id, nil
	}
	if err := t.queryRow(`SELECT ledger_id FROM ledger_meta`).Scan(&id); err != nil {
		return "", err
	}
	t.s.lidMu.Lock()
	t.s.lid = id
	t.s.lidMu.Unlock()
	return id, nil
}
