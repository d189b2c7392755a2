package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The generic local_effects table (a team's own tool, local =
// "local_effects") is written in the operation's own transaction: its row
// commits with the operation's record and rolls back with it — on a
// returned error, a process killed inside the transaction, a second effect
// for the same operation, or a relaxed attempt-only transaction that turns
// out to write it.
func testLocalEffects(t *testing.T, h *harness) {
	const table = model.TableLocalEffects
	tool := effectTool(table)
	ctx := ctxT(t)
	count := func(tenant string) int {
		t.Helper()
		n, err := h.L.EffectCount(ctx, table, tool, tenant)
		if err != nil {
			t.Fatalf("EffectCount: %v", err)
		}
		return n
	}

	// Commits with its record: one row, named by the receipt, counted in
	// its tenant and under its tool only.
	var created bool
	h.tx(t, func(tx store.Tx) (err error) { created, err = createAppliedIn(tx, table, "acme", "k1"); return err })
	if !created {
		t.Fatal("k1 was not created")
	}
	op, err := h.L.Get(ctx, "acme", "k1")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Result struct {
			EffectID int64  `json:"effect_id"`
			Status   string `json:"status"`
		} `json:"result"`
	}
	if op.State != model.StateApplied || json.Unmarshal(op.Receipt, &rec) != nil || rec.Result.EffectID == 0 || rec.Result.Status != "created" {
		t.Errorf("operation %s with receipt %s; want applied, the receipt naming its effect_id", op.State, op.Receipt)
	}
	if a, g, all := count("acme"), count("globex"), count(""); a != 1 || g != 0 || all != 1 {
		t.Errorf("effects acme %d, globex %d, all %d; want 1, 0, 1", a, g, all)
	}
	if n, err := h.L.EffectCount(ctx, table, "another_tool", ""); err != nil || n != 0 {
		t.Errorf("another tool's effects: %d (%v); want 0", n, err)
	}
	h.audit(t)

	// The retry of the same key finds it and writes no second row.
	h.tx(t, func(tx store.Tx) (err error) { created, err = createAppliedIn(tx, table, "acme", "k1"); return err })
	if created || count("acme") != 1 {
		t.Errorf("retry created %v, %d effects; want the stored operation found and 1 effect", created, count("acme"))
	}

	// Rolls back with its record when the transaction's fn fails after it.
	before := h.snapshot(t)
	err = h.L.WithTx(ctx, func(tx store.Tx) error {
		if _, err := createAppliedIn(tx, table, "acme", "k2"); err != nil {
			return err
		}
		return model.Errorf(model.CodeInvalid, "the caller changed its mind")
	})
	if !model.IsCode(err, model.CodeInvalid) {
		t.Fatalf("fn's error not returned: %v", err)
	}
	if h.snapshot(t) != before || count("acme") != 1 {
		t.Errorf("a rolled-back transaction left its effect (%d effects) or record", count("acme"))
	}
	if _, err := h.L.Get(ctx, "acme", "k2"); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("the rolled-back operation: %v; want not found", err)
	}

	// A second effect for one operation is a conflict, and the whole
	// transaction — its new operation too — rolls back.
	err = h.L.WithTx(ctx, func(tx store.Tx) error {
		if _, err := createAppliedIn(tx, table, "acme", "k3"); err != nil {
			return err
		}
		_, err := tx.InsertLocalEffect(store.LocalEffect{Table: table, Tool: tool, Tenant: "acme", OperationID: op.ID, Args: op.Args})
		return err
	})
	mustCode(t, "a second effect for one operation", err, model.CodeConflict)
	if h.snapshot(t) != before {
		t.Error("the failed transaction left rows")
	}

	// A relaxed attempt-only transaction refuses the effect and reruns
	// durably: the effect is written exactly once.
	runs := 0
	err = h.L.WithAttemptTx(ctx, func(tx store.Tx) error {
		runs++
		_, err := createAppliedIn(tx, table, "acme", "k4")
		return err
	})
	if err != nil || runs > 2 {
		t.Fatalf("relaxed then durable: %d runs, %v", runs, err)
	}
	if count("acme") != 2 {
		t.Errorf("%d effects after the durable rerun; want 2", count("acme"))
	}

	// A process killed inside its transaction leaves neither; one killed
	// after its commit leaves both, once.
	before = h.snapshot(t)
	if code, _ := runChildProcess(t, childSpec{Location: h.loc, Mode: "die-before-commit", Table: table, Tenant: "acme", Keys: []string{"k5"}}); code != exitDied {
		t.Fatalf("worker exit %d; want it killed inside its transaction (%d)", code, exitDied)
	}
	if h.snapshot(t) != before {
		t.Error("a process killed inside its transaction left rows")
	}
	if code, _ := runChildProcess(t, childSpec{Location: h.loc, Mode: "die-after-commit", Table: table, Tenant: "acme", Keys: []string{"k5"}}); code != exitDied {
		t.Fatalf("worker exit %d; want it to die after its commit (%d)", code, exitDied)
	}
	if op, err := h.L.Get(ctx, "acme", "k5"); err != nil || op.State != model.StateApplied || count("acme") != 3 {
		t.Errorf("after a commit nobody heard of: %v, %v, %d effects; want applied and 3", op, err, count("acme"))
	}
	h.audit(t)

	// Audit notices an effect row that went missing or outlived its
	// operation's applied state.
	for _, b := range []struct{ name, sql, says string }{
		{"effect gone", `DELETE FROM local_effects`, "applied local-effect operations without exactly one effect"},
		{"effect of an operation that is not applied", `UPDATE operations SET state = 'unknown' WHERE op_key = 'k'`, "local effects whose operation is not applied"},
	} {
		t.Run(b.name, func(t *testing.T) {
			hb := newHarness(t, h.d)
			hb.tx(t, func(tx store.Tx) error { _, err := createAppliedIn(tx, table, "acme", "k"); return err })
			hb.audit(t)
			hb.exec(t, b.sql)
			problems, err := hb.L.Audit(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(problems, "; "), b.says) {
				t.Errorf("audit = %v; want it to report %q", problems, b.says)
			}
		})
	}
}
