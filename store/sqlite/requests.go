package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// requestHistoryChunk is how many keys one statement of RequestHistories
// names: two variables a key, the outcomes besides — well under the
// oldest SQLite limit of 999 variables.
const requestHistoryChunk = 400

// qualifiedOpColumns are opColumns of the operations table named o (a
// join's, where attempts has columns of the same names).
var qualifiedOpColumns = func() string {
	cols := strings.Split(opColumns, ",")
	for i, c := range cols {
		cols[i] = "o." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// RequestHistories reads each of keys' operation and its attempts of
// outcomes, in one statement per requestHistoryChunk keys — the
// operations by their unique (tenant, op_key), each joined to its
// attempts by (operation_id, seq) — in one read transaction.
func (s *Store) RequestHistories(ctx context.Context, keys []store.OpKey, outcomes []model.Outcome) (map[store.OpKey]store.RequestHistory, error) {
	out := make(map[store.OpKey]store.RequestHistory, len(keys))
	keys = store.DistinctKeys(keys) // a key in two chunks would read its attempts twice
	if len(keys) == 0 {
		return out, nil
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.translate(err, "read requests")
	}
	defer tx.Rollback()
	in := "NULL" // IN (NULL) matches nothing: no outcomes, no attempts
	if len(outcomes) > 0 {
		in = strings.TrimSuffix(strings.Repeat("?,", len(outcomes)), ",")
	}
	for start := 0; start < len(keys); start += requestHistoryChunk {
		chunk := keys[start:min(start+requestHistoryChunk, len(keys))]
		args := make([]any, 0, len(outcomes)+2*len(chunk))
		for _, o := range outcomes {
			args = append(args, string(o))
		}
		for _, k := range chunk {
			args = append(args, k.Tenant, k.Key)
		}
		q := `SELECT ` + qualifiedOpColumns + `, a.id, a.seq, a.outcome, a.fingerprint, a.trace_id, a.worker_id,
			a.provider_ref, a.error, a.started_at, a.duration_us, a.finding, a.detail
			FROM operations o LEFT JOIN attempts a ON a.operation_id = o.id AND a.outcome IN (` + in + `)
			WHERE (o.tenant, o.op_key) IN (VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?),", len(chunk)), ",") + `)
			ORDER BY o.id, a.seq`
		if err := s.readRequestHistories(ctx, tx, q, args, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readRequestHistories reads one chunk's rows (an operation's columns,
// then one of its attempts, or NULLs) into out.
func (s *Store) readRequestHistories(ctx context.Context, tx *sql.Tx, q string, args []any, out map[store.OpKey]store.RequestHistory) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return s.translate(err, "read requests")
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, seq, started, dur                                 sql.NullInt64
			outcome, fp, trace, worker, pref, errText, found, det sql.NullString
		)
		op, err := scanOperation(rows, &id, &seq, &outcome, &fp, &trace, &worker, &pref, &errText, &started, &dur, &found, &det)
		if err != nil {
			return s.translate(err, "read requests")
		}
		k := store.OpKey{Tenant: op.Tenant, Key: op.Key}
		h, ok := out[k]
		if !ok {
			h.Operation = *op
		}
		if id.Valid {
			h.Attempts = append(h.Attempts, model.Attempt{ID: id.Int64, OperationID: op.ID, Seq: int(seq.Int64),
				Outcome: model.Outcome(outcome.String), Fingerprint: fp.String, TraceID: trace.String, WorkerID: worker.String,
				ProviderRef: pref.String, Error: errText.String, Finding: model.FindingKind(found.String), Detail: det.String,
				StartedAt: time.UnixMilli(started.Int64).UTC(), Duration: time.Duration(dur.Int64) * time.Microsecond})
		}
		out[k] = h
	}
	// An error that ended the loop early must not pass for a shorter
	// history.
	return s.translate(rows.Err(), "read requests")
}
