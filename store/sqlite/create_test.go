package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// createLocal is what reconcile's quick path does for a new local
// operation: CreateLocal with a receipt that names the effect's result.
func createLocal(tx store.Tx, key string, table model.LocalTable) (*model.Operation, bool, error) {
	op := newOp(key, model.StateApplied)
	op.Receipt, op.ClaimNo, op.Summary = nil, 1, "s"
	op.ExpiresAt = tx.Now().Add(time.Hour)
	e := store.LocalEffect{Table: table, Tool: op.Tool, Tenant: op.Tenant, Text: "s", Args: op.Args}
	ok, err := tx.(store.LocalCreator).CreateLocal(op, e, func(result json.RawMessage) ([]byte, error) {
		return json.Marshal(model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, Result: result})
	})
	return op, ok, err
}

// counts is how many rows the tables a new local operation writes hold.
func counts(t *testing.T, s *Store) string {
	t.Helper()
	var ops, tasks, jobs, effects, attempts int
	err := s.r.QueryRow(`SELECT (SELECT COUNT(*) FROM operations), (SELECT COUNT(*) FROM tasks),
		(SELECT COUNT(*) FROM report_jobs), (SELECT COUNT(*) FROM local_effects), (SELECT COUNT(*) FROM attempts)`).
		Scan(&ops, &tasks, &jobs, &effects, &attempts)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("operations %d, tasks %d, report_jobs %d, local_effects %d, attempts %d", ops, tasks, jobs, effects, attempts)
}

// CreateLocal writes a new operation only where the full path would: not
// over an operation under the key, not over a live tombstone — and then
// nothing at all — but past a tombstone that was forgotten.
func TestCreateLocalWritesOnlyWhereTheKeyIsNew(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		setup   func(tx store.Tx) error
		created bool
	}{
		{"a key never used", func(store.Tx) error { return nil }, true},
		{"a key with an operation", func(tx store.Tx) error { return tx.InsertOperation(newOp("k", model.StateApplied)) }, false},
		{"a key with an operation in another tenant", func(tx store.Tx) error {
			op := newOp("k", model.StateApplied)
			op.Tenant = "other"
			return tx.InsertOperation(op)
		}, true},
		{"a key with a live tombstone", func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
				VALUES ('t', 'k', 'create_support_task', ?, 'applied', ?, ?)`, strings.Repeat("0", 64), ms(tx.Now()), ms(tx.Now().Add(time.Hour)))
			return err
		}, false},
		{"a key with no tombstone, another key with one", func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
				VALUES ('t', 'other', 'create_support_task', ?, 'applied', ?, ?)`, strings.Repeat("0", 64), ms(tx.Now()), ms(tx.Now().Add(time.Hour)))
			return err
		}, true},
		{"a key whose tombstone was forgotten", func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at)
				VALUES ('t', 'k', 'create_support_task', ?, 'applied', ?, ?)`, strings.Repeat("0", 64), ms(tx.Now().Add(-time.Hour)), ms(tx.Now().Add(-time.Minute)))
			return err
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openLedger(t, store.Options{})
			if err := s.WithTx(ctx, c.setup); err != nil {
				t.Fatal(err)
			}
			before := counts(t, s)
			var op *model.Operation
			var created bool
			if err := s.WithTx(ctx, func(tx store.Tx) (err error) {
				op, created, err = createLocal(tx, "k", model.TableTasks)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if created != c.created {
				t.Fatalf("created = %v, want %v", created, c.created)
			}
			if !created {
				if after := counts(t, s); after != before {
					t.Errorf("nothing may be written: before %s, after %s", before, after)
				}
				return
			}
			var got *model.Operation
			var taskID, taskOp int64
			if err := s.WithTx(ctx, func(tx store.Tx) (err error) {
				got, err = tx.GetOperation("t", "k")
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.r.QueryRow(`SELECT id, operation_id FROM tasks WHERE operation_id = ?`, op.ID).Scan(&taskID, &taskOp); err != nil {
				t.Fatalf("the effect row of operation #%d: %v", op.ID, err)
			}
			want := fmt.Sprintf(`{"status":"created","tenant":"t","key":"k","tool":"create_support_task","result":{"status":"created","task_id":%d}}`, taskID)
			if string(got.Receipt) != want || string(op.Receipt) != want {
				t.Errorf("receipt stored %s, returned %s; want %s", got.Receipt, op.Receipt, want)
			}
			if got.ID != op.ID || got.Version != 1 || op.Version != 1 || got.State != model.StateApplied || got.ClaimNo != 1 ||
				!got.CreatedAt.Equal(op.CreatedAt) || !got.UpdatedAt.Equal(op.CreatedAt) || got.ExpiresAt.IsZero() {
				t.Errorf("stored %+v, returned %+v", got, op)
			}
		})
	}
}

// Several new operations in one transaction take ids from a count kept in
// Go: every one must be exactly what the id rule in SQL gives, whatever
// else the transaction inserted — the full path's inserts, an embedding
// program's own statement naming a high operation id, another effect
// table — so no effect row is ever tied to the wrong operation.
func TestCreateLocalIdsAgreeWithTheRuleInSQL(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	// ruleNext is the id rule evaluated in the transaction now.
	ruleNext := func(tx store.Tx, table string) (op, eff int64) {
		t.Helper()
		if err := tx.(*Tx).queryRow(localTables[model.LocalTable(table)].next).Scan(&op, &eff); err != nil {
			t.Fatal(err)
		}
		return op, eff
	}
	n := 0 // keys k1, k2, …
	key := func() string { n++; return fmt.Sprintf("k%d", n) }
	steps := []struct {
		name string
		do   func(tx store.Tx) error
	}{
		{"full path", func(tx store.Tx) error {
			op := newOp(key(), model.StateApplied)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			_, err := tx.InsertLocalEffect(store.LocalEffect{Table: model.TableTasks, Tool: op.Tool, Tenant: op.Tenant, OperationID: op.ID, Text: "s"})
			return err
		}},
		{"embedding program's effect far ahead", func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO local_effects (tenant, tool, args, operation_id, created_at) VALUES ('t', 'x', '{}', 1000, 0)`)
			return err
		}},
		{"embedding program's task far ahead", func(tx store.Tx) error {
			_, err := tx.Exec(`INSERT INTO tasks (id, tenant, subject, operation_id, created_at) VALUES (500, 't', 's', 2000, 0)`)
			return err
		}},
		{"report job", func(tx store.Tx) error {
			_, _, err := createLocal(tx, key(), model.TableReportJobs)
			return err
		}},
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		for _, st := range append(steps, steps...) {
			if err := st.do(tx); err != nil && !strings.Contains(st.name, "far ahead") {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			for _, table := range []model.LocalTable{model.TableTasks, model.TableLocalEffects} {
				wantOp, wantEff := ruleNext(tx, string(table))
				op, created, err := createLocal(tx, key(), table)
				if err != nil || !created {
					return fmt.Errorf("after %s, %s: created %v, %v", st.name, table, created, err)
				}
				var eff int64
				if err := tx.(*Tx).queryRow(`SELECT id FROM `+string(table)+` WHERE operation_id = ?`, op.ID).Scan(&eff); err != nil {
					return err
				}
				if op.ID != wantOp || eff != wantEff {
					return fmt.Errorf("after %s, %s: operation #%d and effect #%d, the rule in SQL says #%d and #%d", st.name, table, op.ID, eff, wantOp, wantEff)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A local effect's result is byte for byte what json.Marshal of the map
// gives, the form every receipt already stored has.
func TestEffectResultIsWhatJSONMarshalGives(t *testing.T) {
	for _, key := range []string{"task_id", "job_id", "effect_id"} {
		for _, id := range []int64{0, 1, 42, 1 << 40, -7} {
			want, _ := json.Marshal(map[string]any{key: id, "status": "created"})
			if got := effectResult(key, id); string(got) != string(want) {
				t.Errorf("effectResult(%s, %d) = %s, want %s", key, id, got, want)
			}
		}
	}
}

// A key whose operation was compacted earlier in the same transaction
// (its tombstone made there) gets no second operation, and its effect is
// not made a second time.
func TestCreateLocalChecksTombstonesACompactionMadeInItsTransaction(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op := newOp("old", model.StateApplied)
		op.ExpiresAt = tx.Now().Add(-time.Minute)
		return tx.InsertOperation(op)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		if _, created, err := createLocal(tx, "first", model.TableTasks); err != nil || !created {
			return fmt.Errorf("first new key: created %v, %v", created, err)
		}
		if n, _, err := tx.CompactExpired(time.Hour, 10); err != nil || n != 1 {
			return fmt.Errorf("compacted %d, %v; want 1", n, err)
		}
		if _, created, err := createLocal(tx, "old", model.TableTasks); err != nil || created {
			return fmt.Errorf("the compacted key: created %v, %v; want nothing written (its tombstone answers)", created, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A row the schema refuses (here a fingerprint of the wrong length) is
// skipped by CreateLocal's OR IGNORE: nothing is written — no operation,
// no effect — and it says so, so the full path runs and reports the error.
func TestCreateLocalWritesNothingForARowTheSchemaRefuses(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	before := counts(t, s)
	err := s.WithTx(context.Background(), func(tx store.Tx) error {
		op := newOp("k", model.StateApplied)
		op.Fingerprint, op.ExpiresAt = "short", tx.Now().Add(time.Hour)
		e := store.LocalEffect{Table: model.TableTasks, Tool: op.Tool, Tenant: op.Tenant, Text: "s"}
		created, err := tx.(store.LocalCreator).CreateLocal(op, e, func(r json.RawMessage) ([]byte, error) { return r, nil })
		if err != nil || created {
			return fmt.Errorf("created %v, %v; want false and no error", created, err)
		}
		if err := tx.InsertOperation(op); err == nil {
			return fmt.Errorf("the full path's insert took the row the schema refuses")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := counts(t, s); after != before {
		t.Errorf("nothing may be written: before %s, after %s", before, after)
	}
}

// Recalls answers from memory only: a key whose operation this store
// created is in use, a key it never met is taken for new (no read: the
// durable transaction decides), and a store opened ReadOnWriter — one call
// per process, nothing in memory — says it cannot tell.
func TestRecallsRemembersTheKeysItCreatedAndReadsNothing(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	ctx := context.Background()
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		_, created, err := createLocal(tx, "made-here", model.TableTasks)
		if err == nil && !created {
			err = fmt.Errorf("not created")
		}
		if err != nil {
			return err
		}
		// The full path's insert (an external tool's operation) too.
		return tx.InsertOperation(newOp("full-path", model.StateInProgress))
	}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.WithTx(ctx, func(tx store.Tx) error {
		_, _, err := createLocal(tx, "made-elsewhere", model.TableTasks)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key      string
		used, ok bool
	}{
		{"made-here", true, true},
		{"full-path", true, true},
		{"never-used", false, true},
		// In use, but this store never met it: taken for new, and the
		// durable transaction finds it (reconcile's tests run that path).
		{"made-elsewhere", false, true},
	}
	for _, c := range cases {
		if used, ok := s.Recalls("t", c.key); used != c.used || ok != c.ok {
			t.Errorf("Recalls(%s) = %v, %v; want %v, %v", c.key, used, ok, c.used, c.ok)
		}
	}
	// A key stays remembered past maxSeen keys noted after it.
	for i := 0; i < maxSeen; i++ {
		s.remember(opCacheKey("t", fmt.Sprintf("filler-%d", i)))
	}
	if used, _ := s.Recalls("t", "made-here"); !used {
		t.Error("made-here was forgotten after maxSeen other keys")
	}
	one, err := Open(path, store.Options{ReadOnWriter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if _, ok := one.Recalls("t", "made-here"); ok {
		t.Error("a ReadOnWriter store answered from a memory it does not have")
	}
}
