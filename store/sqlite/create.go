package sqlite

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// writerIDs are the ids the open write transaction hands out next: a new
// operation's (past every operation and every effect row's operation_id,
// the rule of insertOperationSQL) and each local effect table's. They are
// learned by one read in the transaction and then counted in Go: the write
// lock is held, so no other connection inserts meanwhile. Zero means not
// known. begin clears them, and so does anything that may insert rows this
// code does not count (Tx.Exec). A value past the real next id only leaves
// a gap; one below it would make an insert fail on its primary key (the
// batch then runs again, each fn in a savepoint, after a new begin) —
// never a row tied to the wrong operation.
type writerIDs struct {
	op                   int64
	tasks, jobs, effects int64
}

func (w *writerIDs) effect(t model.LocalTable) *int64 {
	switch t {
	case model.TableTasks:
		return &w.tasks
	case model.TableReportJobs:
		return &w.jobs
	case model.TableLocalEffects:
		return &w.effects
	}
	return nil
}

// nextOpIDSQL is the id of a new operation: past every id an effect row
// still names (insertOperationSQL's, and CreateLocal's read of it).
const nextOpIDSQL = `(SELECT MAX(m) + 1 FROM (SELECT COALESCE(MAX(id), 0) AS m FROM operations
	UNION ALL SELECT COALESCE(MAX(operation_id), 0) FROM tasks
	UNION ALL SELECT COALESCE(MAX(operation_id), 0) FROM report_jobs
	UNION ALL SELECT COALESCE(MAX(operation_id), 0) FROM local_effects))`

// localTable is what CreateLocal needs of a local effect table: the read of
// its next id, the insert with that id, and the result's key.
type localTable struct {
	next, insert, key string
}

var localTables = map[model.LocalTable]localTable{
	model.TableTasks: {
		next:   `SELECT ` + nextOpIDSQL + `, (SELECT COALESCE(MAX(id), 0) + 1 FROM tasks)`,
		insert: `INSERT INTO tasks (id, tenant, subject, operation_id, created_at) VALUES (?,?,?,?,?)`,
		key:    "task_id",
	},
	model.TableReportJobs: {
		next:   `SELECT ` + nextOpIDSQL + `, (SELECT COALESCE(MAX(id), 0) + 1 FROM report_jobs)`,
		insert: `INSERT INTO report_jobs (id, tenant, report, operation_id, created_at) VALUES (?,?,?,?,?)`,
		key:    "job_id",
	},
	model.TableLocalEffects: {
		next:   `SELECT ` + nextOpIDSQL + `, (SELECT COALESCE(MAX(id), 0) + 1 FROM local_effects)`,
		insert: `INSERT INTO local_effects (id, tenant, tool, args, operation_id, created_at) VALUES (?,?,?,?,?,?)`,
		key:    "effect_id",
	},
}

// createOperationSQL inserts a new operation with its id given, unless the
// tenant has an operation under the key (the unique key) or a live
// tombstone (then the tenant is NULL, which NOT NULL refuses) — what
// GetOperation and GetTombstone would have found, in the insert itself. OR
// IGNORE skips the row on any such refusal, a CHECK's or a taken id's too:
// then nothing is written and the full path, which reports every error,
// runs instead. One row of VALUES, not INSERT ... SELECT: SQLite runs the
// latter through a temporary table when the table has a row trigger (the
// state counts), which cost about 4 µs of the writer's CPU per operation.
// The trigger's own upsert keeps counting under OR IGNORE (a test compares
// the counts with the full path's).
const createOperationSQL = `INSERT OR IGNORE INTO operations (id, tenant, op_key, tool, payload_version,
	args, summary, fingerprint, state, version, claim_no, receipt, provider, downstream_key,
	provider_ref, lease_owner, lease_until, contradicted, supersedes_id, superseded_by_id,
	created_at, updated_at, expires_at)
	VALUES (?, (CASE WHEN EXISTS (SELECT 1 FROM tombstones WHERE tenant = ? AND op_key = ? AND forget_at > ?)
		THEN NULL ELSE ? END), ?,?,?,?,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// CreateLocal is store.LocalCreator: a new local operation and its effect
// in two inserts, its receipt written with it (no read of the key first, no
// update of the receipt after). The ids come from writerIDs, read once per
// transaction.
func (t *Tx) CreateLocal(op *model.Operation, e store.LocalEffect, receipt func(json.RawMessage) ([]byte, error)) (bool, error) {
	if err := t.durableOnly(); err != nil {
		return false, err
	}
	lt, ok := localTables[e.Table]
	if !ok {
		return false, model.Errorf(model.CodeInvalid, "tool %q: no local table %q", e.Tool, e.Table)
	}
	ids := &t.tx.s.ids
	next := ids.effect(e.Table)
	if ids.op == 0 || *next == 0 {
		if err := t.queryRow(lt.next).Scan(&ids.op, next); err != nil {
			ids.op, *next = 0, 0
			return false, err
		}
	}
	opID, effID := ids.op, *next
	result := effectResult(lt.key, effID)
	rc, err := receipt(result)
	if err != nil {
		return false, err
	}
	now := t.now
	res, err := t.exec(createOperationSQL, opID, op.Tenant, op.Key, ms(now),
		op.Tenant, op.Key, op.Tool, op.PayloadVersion, string(op.Args), op.Summary, op.Fingerprint,
		string(op.State), op.ClaimNo, string(rc), nullStr(op.Provider), nullStr(op.DownstreamKey),
		nullStr(op.ProviderRef), nullStr(op.LeaseOwner), nullMS(op.LeaseUntil), boolInt(op.Contradicted),
		nullID(op.SupersedesID), nullID(op.SupersededByID), ms(now), ms(now), nullMS(op.ExpiresAt))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if e.Table == model.TableLocalEffects {
		_, err = t.exec(lt.insert, effID, e.Tenant, e.Tool, string(e.Args), opID, ms(now))
	} else {
		_, err = t.exec(lt.insert, effID, e.Tenant, e.Text, opID, ms(now))
	}
	if err != nil {
		return false, err
	}
	ids.op, *next = opID+1, effID+1
	// Its replays need no read to be told from new keys (store.Recaller).
	// Remembered before the commit: should it fail, a replay of the key
	// only takes the relaxed path first, as after any stale hint.
	t.tx.s.remember(opCacheKey(op.Tenant, op.Key))
	op.ID, op.Version, op.Receipt = opID, 1, rc
	op.CreatedAt, op.UpdatedAt = now.UTC().Truncate(time.Millisecond), now.UTC().Truncate(time.Millisecond)
	return true, nil
}

// effectResult is a local effect's result in a receipt: exactly the bytes
// json.Marshal(map[string]any{key: id, "status": "created"}) gives (keys in
// order), without the map.
func effectResult(key string, id int64) json.RawMessage {
	b := make([]byte, 0, 48)
	if key < "status" {
		b = append(b, `{"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, id, 10)
		return append(b, `,"status":"created"}`...)
	}
	b = append(b, `{"status":"created","`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, '}')
}
