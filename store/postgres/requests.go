package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// qualifiedOpColumns are opColumns of the operations table named o (a
// join's, where attempts has columns of the same names).
var qualifiedOpColumns = func() string {
	cols := strings.Split(opColumns, ",")
	for i, c := range cols {
		cols[i] = "o." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// requestHistoriesSQL reads the operations named by two arrays (tenants
// and keys, pairwise: one parameter each however many keys, so no chunks)
// by their unique (tenant, op_key), each joined to its attempts of the
// outcomes in the third array by (operation_id, seq).
var requestHistoriesSQL = `SELECT ` + qualifiedOpColumns + `, a.id, a.seq, a.outcome, a.fingerprint, a.trace_id, a.worker_id,
	a.provider_ref, a.error, a.started_at, a.duration_us, a.finding, a.detail
	FROM operations o LEFT JOIN attempts a ON a.operation_id = o.id AND a.outcome = ANY($3::text[])
	WHERE (o.tenant, o.op_key) IN (SELECT t, k FROM unnest($1::text[], $2::text[]) AS x(t, k))
	ORDER BY o.id, a.seq`

// RequestHistories reads each of keys' operation and its attempts of
// outcomes in one statement (one snapshot).
func (s *Store) RequestHistories(ctx context.Context, keys []store.OpKey, outcomes []model.Outcome) (map[store.OpKey]store.RequestHistory, error) {
	out := make(map[store.OpKey]store.RequestHistory, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	tenants, names := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		tenants[i], names[i] = k.Tenant, k.Key
	}
	outs := make([]string, len(outcomes))
	for i, o := range outcomes {
		outs[i] = string(o)
	}
	rows, err := s.pool.Query(ctx, requestHistoriesSQL, tenants, names, outs)
	if err != nil {
		return nil, s.translate(err, "read requests")
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, seq, started, dur                                 *int64
			outcome, fp, trace, worker, pref, errText, found, det *string
		)
		op, err := scanOperation(rows, &id, &seq, &outcome, &fp, &trace, &worker, &pref, &errText, &started, &dur, &found, &det)
		if err != nil {
			return nil, s.translate(err, "read requests")
		}
		k := store.OpKey{Tenant: op.Tenant, Key: op.Key}
		h, ok := out[k]
		if !ok {
			h.Operation = *op
		}
		if id != nil {
			a := model.Attempt{ID: *id, OperationID: op.ID, Outcome: model.Outcome(str(outcome)), Fingerprint: str(fp),
				TraceID: str(trace), WorkerID: str(worker), ProviderRef: str(pref), Error: str(errText),
				Finding: model.FindingKind(str(found)), Detail: str(det)}
			if seq != nil {
				a.Seq = int(*seq)
			}
			if started != nil {
				a.StartedAt = time.UnixMilli(*started).UTC()
			}
			if dur != nil {
				a.Duration = time.Duration(*dur) * time.Microsecond
			}
			h.Attempts = append(h.Attempts, a)
		}
		out[k] = h
	}
	// An error that ended the loop early must not pass for a shorter
	// history.
	if err := rows.Err(); err != nil {
		return nil, s.translate(err, "read requests")
	}
	return out, nil
}
