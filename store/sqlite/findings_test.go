package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Findings are lookup attempts: the latest one is an operation's finding in
// lists and details, stale once a non-lookup attempt follows it, and the
// list filters on it. None of it touches the operation's state or version.
func TestFindingsAreLatestLookupsStaleAfterAnotherAttemptAndFilterable(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	type attempt struct {
		outcome model.Outcome
		finding model.FindingKind
		ref     string
	}
	lookup := func(f model.FindingKind, ref string) attempt { return attempt{model.OutcomeLookup, f, ref} }
	other := func(o model.Outcome) attempt { return attempt{outcome: o} }
	cases := []struct {
		key      string
		attempts []attempt
		want     model.FindingFilter // the latest finding, FilterNotChecked if none
		stale    bool
		ref      string
	}{
		{"never-checked", []attempt{other(model.OutcomeDispatched), other(model.OutcomeTimedOut)}, model.FilterNotChecked, false, ""},
		{"has-it", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasIt, "sbx_1")}, model.FilterHasIt, false, "sbx_1"},
		{"changed-between-runs", []attempt{other(model.OutcomeDispatched), lookup(model.FindingCannotTell, ""), lookup(model.FindingHasNothing, ""), lookup(model.FindingHasIt, "sbx_9")}, model.FilterHasIt, false, "sbx_9"},
		{"nothing", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasNothing, "")}, model.FilterHasNothing, false, ""},
		{"stale", []attempt{other(model.OutcomeDispatched), lookup(model.FindingHasNothing, ""), other(model.OutcomeRefused)}, model.FilterHasNothing, true, ""},
		{"down", []attempt{other(model.OutcomeDispatched), lookup(model.FindingCannotTell, "")}, model.FilterCannotTell, false, ""},
	}
	versions := map[string]int64{}
	for _, c := range cases {
		err := s.WithTx(ctx, func(tx store.Tx) error {
			op := newOp(c.key, model.StateUnknown)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			versions[c.key] = op.Version
			for i, a := range c.attempts {
				at := &model.Attempt{OperationID: op.ID, Outcome: a.outcome, Fingerprint: op.Fingerprint, Finding: a.finding,
					ProviderRef: a.ref, Detail: fmt.Sprintf("step %d", i), WorkerID: "triage by test",
					StartedAt: time.UnixMilli(int64(1000 * (i + 1)))}
				if err := tx.InsertAttempt(at); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ops, err := s.List(ctx, store.ListQuery{State: model.StateUnknown})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]model.Operation{}
	for _, op := range ops {
		byKey[op.Key] = op
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			op := byKey[c.key]
			d, err := s.Detail(ctx, "t", c.key)
			if err != nil {
				t.Fatal(err)
			}
			for where, f := range map[string]*model.Finding{"list": op.Finding, "detail": d.Operation.Finding} {
				if c.want == model.FilterNotChecked {
					if f != nil {
						t.Errorf("%s: finding %+v; want none", where, f)
					}
					continue
				}
				if f == nil {
					t.Fatalf("%s: no finding; want %s", where, c.want)
				}
				if string(f.Kind) != string(c.want) || f.Stale != c.stale || f.Ref != c.ref || f.By != "triage by test" {
					t.Errorf("%s: finding %+v; want %s stale=%v ref=%q", where, f, c.want, c.stale, c.ref)
				}
			}
			if op.Version != versions[c.key] || op.State != model.StateUnknown {
				t.Errorf("lookups moved the operation: %s v%d, want unknown v%d", op.State, op.Version, versions[c.key])
			}
			got, err := s.List(ctx, store.ListQuery{Finding: c.want})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, o := range got {
				found = found || o.Key == c.key
				if c.want == model.FilterNotChecked && o.Finding != nil || c.want != model.FilterNotChecked && (o.Finding == nil || string(o.Finding.Kind) != string(c.want)) {
					t.Errorf("filter %s listed %s with finding %+v", c.want, o.Key, o.Finding)
				}
			}
			if !found {
				t.Errorf("filter %s does not list %s", c.want, c.key)
			}
			var latest *model.Finding
			if err := s.WithTx(ctx, func(tx store.Tx) error {
				var err error
				latest, err = tx.LatestFinding(op.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if (latest == nil) != (c.want == model.FilterNotChecked) || latest != nil && (latest.Seq != d.Operation.Finding.Seq || latest.Stale != c.stale) {
				t.Errorf("Tx.LatestFinding = %+v; the detail says %+v", latest, d.Operation.Finding)
			}
		})
	}
	if _, err := s.List(ctx, store.ListQuery{Finding: "bogus"}); !model.IsCode(err, model.CodeInvalid) {
		t.Errorf("a bogus finding filter: %v", err)
	}
	// Only a lookup carries a finding, and a lookup always does.
	op := byKey["has-it"]
	for _, bad := range []model.Attempt{
		{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint},
		{OperationID: op.ID, Outcome: model.OutcomeRefused, Fingerprint: op.Fingerprint, Finding: model.FindingHasIt},
		{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint, Finding: "maybe"},
	} {
		if err := s.WithTx(ctx, func(tx store.Tx) error { return tx.InsertAttempt(&bad) }); !model.IsCode(err, model.CodeInvalid) {
			t.Errorf("InsertAttempt(%s, finding %q): %v; want refused", bad.Outcome, bad.Finding, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (?, 900, 'lookup', 'f', 0)`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at, finding) VALUES (?, 901, 'refused', 'f', 0, 'has_it')`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at, finding) VALUES (?, 902, 'lookup', 'f', 0, 'maybe')`,
	} {
		if err := s.WithTx(ctx, func(tx store.Tx) error { _, err := tx.(*Tx).tx.Exec(q, op.ID); return err }); !model.IsCode(err, model.CodeConflict) {
			t.Errorf("SQL accepted %s: %v", q, err)
		}
	}
}

// A ledger made before findings existed (schema 4) keeps every attempt,
// with its id and number, when 0005 rebuilds the table.
func TestFindingsMigrationKeepsEveryAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ms := migrations()
	stmts := []string{}
	for _, m := range ms[:4] {
		stmts = append(stmts, m.sql)
	}
	stmts = append(stmts, "PRAGMA user_version = 4",
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, created_at, updated_at)
			VALUES (7, 't', 'k', 'send_notification', 1, '{}', '`+fmt.Sprintf("%064d", 0)+`', 'unknown', 1, 1)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, trace_id, started_at, duration_us) VALUES (40, 7, 1, 'dispatched', 'f', 'trace-1', 5, 6)`,
		`INSERT INTO attempts (id, operation_id, seq, outcome, fingerprint, error, started_at) VALUES (41, 7, 2, 'timed_out', 'f', 'no reply', 9)`)
	plainExec(t, path, stmts...)
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Detail(context.Background(), "t", "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != 2 || d.Attempts[0].ID != 40 || d.Attempts[0].TraceID != "trace-1" || d.Attempts[1].Error != "no reply" || d.Attempts[1].Seq != 2 {
		t.Fatalf("attempts after the migration: %+v", d.Attempts)
	}
	ops, err := s.List(context.Background(), store.ListQuery{Search: "trace-1"})
	if err != nil || len(ops) != 1 {
		t.Fatalf("the trace index is gone after the migration: %v %v", ops, err)
	}
	if err := s.WithTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: 7, Outcome: model.OutcomeLookup, Finding: model.FindingHasIt, ProviderRef: "sbx_1", Fingerprint: "f"})
	}); err != nil {
		t.Fatalf("a lookup after the migration: %v", err)
	}
}
