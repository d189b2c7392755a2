package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// 1. Lost response after commit: a worker process commits the operation,
// its effect and receipt, and dies before replying. Through a new
// connection everything is there, exactly once.
func testSeedLostResponseAfterCommit(t *testing.T, h *harness) {
	code, _ := runChildProcess(t, childSpec{Location: h.loc, Mode: "die-after-commit", Tenant: "acme", Keys: []string{"op-1"}})
	if code != exitDied {
		t.Fatalf("worker exit %d; want it to die after its commit (%d)", code, exitDied)
	}
	l := h.open(t, store.Options{})
	op, err := l.Get(ctxT(t), "acme", "op-1")
	if err != nil {
		t.Fatalf("the committed operation is not there: %v", err)
	}
	var rec struct {
		Result struct {
			TaskID int64 `json:"task_id"`
		} `json:"result"`
	}
	if op.State != model.StateApplied || json.Unmarshal(op.Receipt, &rec) != nil || rec.Result.TaskID == 0 {
		t.Errorf("operation %s with receipt %s; want applied with the task's id", op.State, op.Receipt)
	}
	if n, err := l.EffectCount(ctxT(t), model.TableTasks, "create_support_task", "acme"); err != nil || n != 1 {
		t.Errorf("%d tasks (%v); want 1", n, err)
	}
	// The retry finds it and creates nothing.
	var created bool
	if err := l.WithTx(ctxT(t), func(tx store.Tx) (err error) { created, err = createApplied(tx, "acme", "op-1"); return err }); err != nil || created {
		t.Errorf("retry created %v (%v); want the stored operation found", created, err)
	}
	h.audit(t)
}

// 2. A worker that dies inside its transaction leaves no operation, no
// effect, no attempt.
func testSeedFailureBeforeCommit(t *testing.T, h *harness) {
	before := h.snapshot(t)
	code, _ := runChildProcess(t, childSpec{Location: h.loc, Mode: "die-before-commit", Tenant: "acme", Keys: []string{"op-1"}})
	if code != exitDied {
		t.Fatalf("worker exit %d; want it killed inside its transaction (%d)", code, exitDied)
	}
	if after := h.snapshot(t); after != before {
		t.Error("a transaction that never committed left rows")
	}
	var created bool
	if err := h.L.WithTx(ctxT(t), func(tx store.Tx) (err error) { created, err = createApplied(tx, "acme", "op-1"); return err }); err != nil || !created {
		t.Errorf("the same key afterwards: created %v, %v; want created (nothing was half-claimed)", created, err)
	}
}

// 3. One (tenant, key) is one operation: a second insert is a conflict and
// changes nothing.
func testSeedSameKeyIsOneOperation(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateUnknown)) })
	before := h.snapshot(t)
	err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateUnknown)) })
	mustCode(t, "second insert of (acme, k)", err, model.CodeConflict)
	if h.snapshot(t) != before {
		t.Error("the refused insert changed the ledger")
	}
}

// 4. Two keys are two operations and two effects, whatever their content.
func testSeedTwoKeysAreTwoEffects(t *testing.T, h *harness) {
	for _, k := range []string{"a", "b"} {
		h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", k); return err })
	}
	if n, _ := h.L.EffectCount(ctxT(t), model.TableTasks, "create_support_task", ""); n != 2 {
		t.Errorf("%d tasks; want 2", n)
	}
	h.audit(t)
}

// 5. Tenants are separate: a key in one tenant is unknown in another, on
// every read path.
func testSeedTenantScope(t *testing.T, h *harness) {
	for _, tenant := range []string{"acme", "globex"} {
		h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, tenant, "shared-key"); return err })
	}
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "acme-only", model.StateUnknown)) })
	ctx := ctxT(t)
	if _, err := h.L.Get(ctx, "globex", "acme-only"); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("globex reads acme's key: %v", err)
	}
	if _, err := h.L.Detail(ctx, "globex", "acme-only"); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("globex's detail of acme's key: %v", err)
	}
	if err := h.L.WithTx(ctx, func(tx store.Tx) error { _, err := tx.GetOperation("globex", "acme-only"); return err }); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("globex's transaction reads acme's key: %v", err)
	}
	a, _ := h.L.Get(ctx, "acme", "shared-key")
	g, _ := h.L.Get(ctx, "globex", "shared-key")
	if a == nil || g == nil || a.ID == g.ID {
		t.Errorf("the same key in two tenants must be two operations: %+v %+v", a, g)
	}
	ops, err := h.L.List(ctx, store.ListQuery{Tenant: "globex"})
	if err != nil || len(ops) != 1 || ops[0].Tenant != "globex" {
		t.Errorf("globex's list: %v %v", ops, err)
	}
	if n, _ := h.L.EffectCount(ctx, model.TableTasks, "create_support_task", "globex"); n != 1 {
		t.Errorf("globex has %d tasks; want 1", n)
	}
	c, _ := h.L.Counts(ctx, "globex")
	if c.Total != 1 {
		t.Errorf("globex counts %d operations; want 1", c.Total)
	}
	tenants, err := h.L.Tenants(ctx)
	if err != nil || strings.Join(tenants, ",") != "acme,globex" {
		t.Errorf("tenants %v %v; want acme,globex", tenants, err)
	}
}

// 6. What the schema refuses writes nothing: each refusal is a conflict
// (a CHECK) or invalid input, and the ledger is as before.
func testSeedInvalidInputWritesNothing(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "base", model.StateUnknown)) })
	before := h.snapshot(t)
	cases := []struct {
		name string
		op   func(*model.Operation)
	}{
		{"empty tenant", func(o *model.Operation) { o.Tenant = "" }},
		{"empty key", func(o *model.Operation) { o.Key = "" }},
		{"key longer than 1024", func(o *model.Operation) { o.Key = strings.Repeat("k", 1025) }},
		{"short fingerprint", func(o *model.Operation) { o.Fingerprint = "abc" }},
		{"payload version 0", func(o *model.Operation) { o.PayloadVersion = 0 }},
		{"applied without a receipt", func(o *model.Operation) { o.State = model.StateApplied; o.Receipt = nil }},
		{"in progress without a lease", func(o *model.Operation) { o.State = model.StateInProgress; o.LeaseUntil = time.Time{} }},
	}
	for _, c := range cases {
		op := newOp("acme", "new", model.StateUnknown)
		c.op(op)
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertOperation(op) })
		mustCode(t, c.name, err, model.CodeConflict)
	}
	if h.snapshot(t) != before {
		t.Error("a refused write changed the ledger")
	}
}

// 7. Concurrent delivery across processes: workers racing on the same keys
// make exactly one operation and one effect per key.
func testConcurrentProcessesOneKeyOneEffect(t *testing.T, h *harness) {
	ks := keys(15)
	var specs []childSpec
	for i := 0; i < 4; i++ {
		specs = append(specs, childSpec{Location: h.loc, Mode: "create", Tenant: "acme", Keys: ks})
	}
	reps := runChildren(t, specs)
	created := map[string]int{}
	for i, r := range reps {
		if len(r.Errors) > 0 {
			t.Errorf("worker %d errors: %v", i, r.Errors)
		}
		for _, k := range r.Created {
			created[k]++
		}
	}
	for _, k := range ks {
		if created[k] != 1 {
			t.Errorf("key %s created by %d workers; want exactly 1", k, created[k])
		}
	}
	if n, _ := h.L.EffectCount(ctxT(t), model.TableTasks, "create_support_task", "acme"); n != len(ks) {
		t.Errorf("%d tasks for %d keys", n, len(ks))
	}
	h.audit(t)
}

func testCompareAndSet(t *testing.T, h *harness) {
	op := newOp("acme", "k", model.StateUnknown)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	before := h.snapshot(t)
	stale := []struct {
		state   model.State
		version int64
	}{{model.StateUnknown, 2}, {model.StateInProgress, 1}, {model.StateApplied, 1}, {model.StateUnknown, 0}}
	for _, c := range stale {
		next := *op
		next.State = model.StateNotApplied
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.UpdateOperation(&next, c.state, c.version) })
		mustCode(t, fmt.Sprintf("update from %s v%d", c.state, c.version), err, model.CodeStale)
		if err != nil && !strings.Contains(err.Error(), "it is now unknown (version 1)") {
			t.Errorf("stale message %q does not say what the row is now", err)
		}
	}
	if h.snapshot(t) != before {
		t.Error("a refused compare-and-set changed the ledger")
	}
	next := *op
	next.State = model.StateNotApplied
	h.tx(t, func(tx store.Tx) error { return tx.UpdateOperation(&next, model.StateUnknown, 1) })
	if next.Version != 2 {
		t.Errorf("version after update %d, want 2", next.Version)
	}
	got, _ := h.L.Get(ctxT(t), "acme", "k")
	if got.State != model.StateNotApplied || got.Version != 2 {
		t.Errorf("stored %s v%d; want not_applied v2", got.State, got.Version)
	}
	// The old version is stale now.
	again := *op
	again.State = model.StateApplied
	again.Receipt = []byte(`{}`)
	err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.UpdateOperation(&again, model.StateUnknown, 1) })
	mustCode(t, "update from the version just replaced", err, model.CodeStale)
}

// Workers in several processes read-then-compare-and-set one row: every
// successful update counts, none is lost, stale ones are refused.
func testCompareAndSetAcrossProcesses(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "counter", model.StateUnknown)) })
	const workers, bumps = 3, 15
	var specs []childSpec
	for i := 0; i < workers; i++ {
		specs = append(specs, childSpec{Location: h.loc, Mode: "bump", Tenant: "acme", Keys: []string{"counter"}, Bumps: bumps})
	}
	total := 0
	for i, r := range runChildren(t, specs) {
		if len(r.Errors) > 0 {
			t.Errorf("worker %d: %v", i, r.Errors)
		}
		total += r.Bumps
	}
	op, err := h.L.Get(ctxT(t), "acme", "counter")
	if err != nil {
		t.Fatal(err)
	}
	if total != workers*bumps || op.ClaimNo != int64(total) || op.Version != int64(total)+1 {
		t.Errorf("%d updates acknowledged; row has claim_no %d, version %d; want %d and %d",
			total, op.ClaimNo, op.Version, workers*bumps, workers*bumps+1)
	}
}

// A writer process killed inside its transaction commits nothing, and the
// key it held is free again for the next writer.
func testKilledWriter(t *testing.T, h *harness) {
	before := h.snapshot(t)
	kill := startHanging(t, childSpec{Location: h.loc, Tenant: "acme", Keys: []string{"held"}})
	kill()
	if h.snapshot(t) != before {
		t.Error("a killed writer's transaction left rows")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var created bool
	if err := h.L.WithTx(ctx, func(tx store.Tx) (err error) { created, err = createApplied(tx, "acme", "held"); return err }); err != nil || !created {
		t.Errorf("after the kill: created %v, %v; want the key free and created", created, err)
	}
	h.audit(t)
}

func testEnumsStorable(t *testing.T, h *harness) {
	for _, st := range model.AllStates {
		if err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k-"+string(st), st)) }); err != nil {
			t.Errorf("state %s refused by the ledger: %v", st, err)
		}
	}
	for _, bogus := range []model.State{"done", "APPLIED", ""} {
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "bogus-"+string(bogus), bogus)) })
		mustCode(t, fmt.Sprintf("state %q", bogus), err, model.CodeConflict)
	}
	op := newOp("acme", "attempts", model.StateUnknown)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	for _, o := range model.AllOutcomes {
		if err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
			a := &model.Attempt{OperationID: op.ID, Outcome: o, Fingerprint: op.Fingerprint}
			if o == model.OutcomeLookup {
				a.Finding = model.FindingCannotTell // a lookup always carries its finding
			}
			return tx.InsertAttempt(a)
		}); err != nil {
			t.Errorf("outcome %s refused: %v", o, err)
		}
	}
	err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: "exploded", Fingerprint: op.Fingerprint})
	})
	mustCode(t, "InsertAttempt with a bogus outcome", err, model.CodeInvalid)
	// The CHECKs refuse what bypasses the Go checks too.
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (%d, 999, 'exploded', 'f', 0)`, op.ID),
		`INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at) VALUES ('acme', 'ts', 'x', 'f', 'gone', 0, 1)`,
		fmt.Sprintf(`INSERT INTO decisions (operation_id, operator, action, reason, from_state, to_state, from_version, at) VALUES (%d, 'o', 'delete', 'r', 'unknown', 'applied', 1, 0)`, op.ID),
	} {
		if err := h.d.Exec(t, h.loc, q); err == nil {
			t.Errorf("the schema accepted %s", q)
		}
	}
	for _, st := range model.AllStates {
		h.exec(t, fmt.Sprintf(`INSERT INTO tombstones (tenant, op_key, tool, fingerprint, final_state, expired_at, forget_at) VALUES ('acme', 'ts-%s', 'x', 'f', '%s', 0, 1)`, st, st))
	}
	d, err := h.L.Detail(ctxT(t), "acme", "attempts")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != len(model.AllOutcomes) {
		t.Errorf("%d attempts stored; want %d", len(d.Attempts), len(model.AllOutcomes))
	}
	for i, a := range d.Attempts {
		if a.Seq != i+1 {
			t.Errorf("attempt %d has seq %d; attempts are numbered 1..n per operation", i, a.Seq)
		}
	}
	c, _ := h.L.Counts(ctxT(t), "")
	for _, st := range model.AllStates {
		want := 1
		if st == model.StateUnknown {
			want = 2
		}
		if c.ByState[st] != want {
			t.Errorf("count of %s = %d, want %d", st, c.ByState[st], want)
		}
	}
}

func testDecisions(t *testing.T, h *harness) {
	op := newOp("acme", "k", model.StateUnknown)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	for i, a := range model.AllActions {
		d := &model.Decision{OperationID: op.ID, Operator: "ana", Action: a, Reason: fmt.Sprintf("reason %d", i),
			Evidence: "ticket 42", FromState: model.StateUnknown, ToState: model.StateApplied, FromVersion: 1}
		h.tx(t, func(tx store.Tx) error { return tx.InsertDecision(d) })
		if d.ID == 0 {
			t.Errorf("decision %s got no id", a)
		}
	}
	before := h.snapshot(t)
	for _, d := range []*model.Decision{
		{OperationID: op.ID, Operator: "ana", Action: "delete", Reason: "r", FromState: model.StateUnknown, ToState: model.StateApplied},
		{OperationID: op.ID, Operator: "", Action: model.AllActions[0], Reason: "r", FromState: model.StateUnknown, ToState: model.StateApplied},
		{OperationID: op.ID, Operator: "ana", Action: model.AllActions[0], Reason: "", FromState: model.StateUnknown, ToState: model.StateApplied},
		{OperationID: op.ID + 1000, Operator: "ana", Action: model.AllActions[0], Reason: "r", FromState: model.StateUnknown, ToState: model.StateApplied},
	} {
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertDecision(d) })
		mustCode(t, fmt.Sprintf("decision %+v", *d), err, model.CodeConflict)
	}
	if h.snapshot(t) != before {
		t.Error("a refused decision changed the ledger")
	}
	det, err := h.L.Detail(ctxT(t), "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(det.Decisions) != len(model.AllActions) {
		t.Fatalf("%d decisions; want %d", len(det.Decisions), len(model.AllActions))
	}
	for i, d := range det.Decisions {
		if d.Action != model.AllActions[i] || d.Reason != fmt.Sprintf("reason %d", i) || d.Operator != "ana" ||
			d.Evidence != "ticket 42" || d.FromVersion != 1 || !d.At.Equal(h.now) {
			t.Errorf("decision %d read back as %+v", i, d)
		}
	}
}

// Compaction turns an expired final operation — and the chain of
// operations it superseded — into tombstones, keeps every effect, and
// forgets tombstones past their own window.
func testRetention(t *testing.T, h *harness) {
	ctx := ctxT(t)
	// old (superseded) → new (applied, expired); keep: applied, not expired;
	// open: unknown, expired (never compacted: not final).
	var oldOp, newOp2 *model.Operation
	h.tx(t, func(tx store.Tx) error {
		oldOp = newOp("acme", "old", model.StateSuperseded)
		if err := tx.InsertOperation(oldOp); err != nil {
			return err
		}
		if _, err := createApplied(tx, "acme", "new"); err != nil {
			return err
		}
		var err error
		if newOp2, err = tx.GetOperation("acme", "new"); err != nil {
			return err
		}
		o := *oldOp
		o.SupersededByID = newOp2.ID
		if err := tx.UpdateOperation(&o, oldOp.State, oldOp.Version); err != nil {
			return err
		}
		n := *newOp2
		n.SupersedesID = oldOp.ID
		n.ExpiresAt = h.now.Add(-time.Minute)
		if err := tx.UpdateOperation(&n, newOp2.State, newOp2.Version); err != nil {
			return err
		}
		if _, err := createApplied(tx, "acme", "keep"); err != nil {
			return err
		}
		open := newOp("acme", "open", model.StateUnknown)
		open.ExpiresAt = h.now.Add(-time.Minute)
		return tx.InsertOperation(open)
	})
	var compacted, forgotten int
	h.tx(t, func(tx store.Tx) (err error) {
		compacted, forgotten, err = tx.CompactExpired(time.Hour, 100)
		return err
	})
	if compacted != 1 || forgotten != 0 {
		t.Errorf("compacted %d, forgot %d; want 1 and 0", compacted, forgotten)
	}
	for _, k := range []string{"old", "new"} {
		if _, err := h.L.Get(ctx, "acme", k); !model.IsCode(err, model.CodeNotFound) {
			t.Errorf("%s still stored after compaction: %v", k, err)
		}
	}
	for _, k := range []string{"keep", "open"} {
		if _, err := h.L.Get(ctx, "acme", k); err != nil {
			t.Errorf("%s was compacted: %v", k, err)
		}
	}
	h.tx(t, func(tx store.Tx) error {
		for k, st := range map[string]model.State{"new": model.StateApplied, "old": model.StateSuperseded} {
			ts, err := tx.GetTombstone("acme", k)
			if err != nil {
				t.Errorf("no tombstone for %s: %v", k, err)
				continue
			}
			if ts.FinalState != st || ts.Fingerprint != fingerprint || ts.Tool != "create_support_task" ||
				!ts.ExpiredAt.Equal(h.now) || !ts.ForgetAt.Equal(h.now.Add(time.Hour)) {
				t.Errorf("tombstone of %s: %+v", k, ts)
			}
		}
		if _, err := tx.GetTombstone("globex", "new"); !model.IsCode(err, model.CodeNotFound) {
			t.Errorf("another tenant's tombstone: %v", err)
		}
		return nil
	})
	if n, _ := h.L.EffectCount(ctx, model.TableTasks, "create_support_task", "acme"); n != 2 {
		t.Errorf("%d tasks after compaction; effects are never deleted (want 2)", n)
	}
	if c, _ := h.L.Counts(ctx, "acme"); c.Total != 2 {
		t.Errorf("counts after compaction: %d; want 2", c.Total)
	}
	// Past the tombstones' own window they are forgotten.
	later := h.open(t, store.Options{Now: func() time.Time { return h.now.Add(2 * time.Hour) }})
	if err := later.WithTx(ctx, func(tx store.Tx) (err error) {
		compacted, forgotten, err = tx.CompactExpired(time.Hour, 100)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if compacted != 0 || forgotten != 2 {
		t.Errorf("later: compacted %d, forgot %d; want 0 and 2", compacted, forgotten)
	}
	// A new operation never reuses a compacted one's id.
	var fresh *model.Operation
	h.tx(t, func(tx store.Tx) error {
		fresh = newOp("acme", "fresh", model.StateUnknown)
		return tx.InsertOperation(fresh)
	})
	if fresh.ID <= newOp2.ID {
		t.Errorf("new operation got id %d, not above the compacted %d", fresh.ID, newOp2.ID)
	}
	h.audit(t)
}

// A relaxed transaction that only appends attempts runs once; one that
// writes more is refused with ErrNeedsDurable and runs again durably, and
// commits exactly once.
func testRelaxedAttemptTx(t *testing.T, h *harness) {
	op := newOp("acme", "k", model.StateUnknown)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	runs := 0
	err := h.L.WithAttemptTx(ctxT(t), func(tx store.Tx) error {
		runs++
		cur, err := tx.GetOperation("acme", "k")
		if err != nil {
			return err
		}
		return tx.InsertAttempt(&model.Attempt{OperationID: cur.ID, Outcome: model.OutcomeReplayed, Fingerprint: cur.Fingerprint})
	})
	if err != nil || runs != 1 {
		t.Errorf("attempt-only: runs %d, %v; want one run", runs, err)
	}
	runs = 0
	var refused []error
	err = h.L.WithAttemptTx(ctxT(t), func(tx store.Tx) error {
		runs++
		if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeConflict, Fingerprint: op.Fingerprint}); err != nil {
			return err
		}
		err := tx.InsertOperation(newOp("acme", "more", model.StateUnknown))
		if err != nil {
			refused = append(refused, err)
		}
		return err
	})
	if err != nil {
		t.Fatalf("durable rerun: %v", err)
	}
	if runs > 2 || len(refused) != runs-1 {
		t.Errorf("fn ran %d times, refused %v; want at most once relaxed (refused with ErrNeedsDurable) and once durably", runs, refused)
	}
	for _, e := range refused {
		if !errors.Is(e, store.ErrNeedsDurable) {
			t.Errorf("relaxed refusal %v; want ErrNeedsDurable", e)
		}
	}
	d, _ := h.L.Detail(ctxT(t), "acme", "k")
	if c, _ := h.L.Counts(ctxT(t), ""); c.Total != 2 || len(d.Attempts) != 2 {
		t.Errorf("%d operations and %d attempts; want each write committed exactly once (2 and 2)", c.Total, len(d.Attempts))
	}
}

func testRollback(t *testing.T, h *harness) {
	ctx := ctxT(t)
	before := h.snapshot(t)
	err := h.L.WithTx(ctx, func(tx store.Tx) error {
		if _, err := createApplied(tx, "acme", "k"); err != nil {
			return err
		}
		return model.Errorf(model.CodeInvalid, "changed my mind")
	})
	if !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), "changed my mind") {
		t.Fatalf("fn's error not returned unchanged: %v", err)
	}
	if h.snapshot(t) != before {
		t.Error("a transaction whose fn failed left rows behind")
	}
	func() {
		defer func() {
			if recover() != "worker bug" {
				t.Error("the panic did not reach the caller")
			}
		}()
		h.L.WithTx(ctx, func(tx store.Tx) error {
			tx.InsertOperation(newOp("acme", "p", model.StateUnknown))
			panic("worker bug")
		})
	}()
	if h.snapshot(t) != before {
		t.Error("a transaction whose fn panicked left rows behind")
	}
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "after", model.StateUnknown)) })
}

func testList(t *testing.T, h *harness) {
	ctx := ctxT(t)
	states := []model.State{model.StateUnknown, model.StateApplied, model.StateNotApplied}
	for i := 0; i < 30; i++ {
		tenant := "acme"
		if i%3 == 2 {
			tenant = "globex"
		}
		op := newOp(tenant, fmt.Sprintf("op-%02d", i), states[i%3])
		if i%5 == 0 {
			op.Tool = "create_report_job"
		}
		op.Contradicted = i == 7 || i == 8
		h.tx(t, func(tx store.Tx) error {
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			for a := 0; a < i%4; a++ {
				if err := tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed,
					Fingerprint: fingerprint, TraceID: fmt.Sprintf("call_%02d_%d", i, a)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	list := func(q store.ListQuery) []model.Operation {
		t.Helper()
		ops, err := h.L.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		return ops
	}
	keysOf := func(ops []model.Operation) string {
		var ks []string
		for _, o := range ops {
			ks = append(ks, o.Key)
		}
		return strings.Join(ks, ",")
	}
	page1 := list(store.ListQuery{Limit: 10})
	if keysOf(page1) != "op-29,op-28,op-27,op-26,op-25,op-24,op-23,op-22,op-21,op-20" {
		t.Errorf("first page %s; want the newest ten, newest first", keysOf(page1))
	}
	page2 := list(store.ListQuery{Limit: 10, BeforeID: page1[9].ID})
	if len(page2) != 10 || page2[0].Key != "op-19" {
		t.Errorf("second page %s", keysOf(page2))
	}
	back := list(store.ListQuery{Limit: 10, AfterID: page2[0].ID})
	if keysOf(back) != keysOf(page1) {
		t.Errorf("paging back %s; want %s", keysOf(back), keysOf(page1))
	}
	for _, o := range page1 {
		var i int
		fmt.Sscanf(o.Key, "op-%d", &i)
		if o.AttemptCount != i%4 {
			t.Errorf("%s has attempt count %d, want %d", o.Key, o.AttemptCount, i%4)
		}
	}
	if got := list(store.ListQuery{Tenant: "globex", State: model.StateNotApplied, Limit: 100}); len(got) != 10 {
		t.Errorf("globex not_applied: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Tenant: "acme", State: model.StateNotApplied}); len(got) != 0 {
		t.Errorf("acme has no not_applied: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Tool: "create_report_job"}); keysOf(got) != "op-25,op-20,op-15,op-10,op-05,op-00" {
		t.Errorf("report jobs: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Contradicted: true}); keysOf(got) != "op-08,op-07" {
		t.Errorf("contradicted: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Contradicted: true, Tenant: "globex"}); keysOf(got) != "op-08" {
		t.Errorf("contradicted in globex: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "op-1"}); len(got) != 10 {
		t.Errorf("search by key substring: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "subject op-03"}); keysOf(got) != "op-03" {
		t.Errorf("search by summary: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "call_27_"}); keysOf(got) != "op-27" {
		t.Errorf("search by trace id prefix: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "call_06_3"}); keysOf(got) != "" {
		t.Errorf("search by a trace id nobody has: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "%"}); len(got) != 0 {
		t.Errorf("a %% in the search is a literal, not a wildcard: %s", keysOf(got))
	}
	if got := list(store.ListQuery{Search: "op_0"}); len(got) != 0 {
		t.Errorf("an _ in the search is a literal, not a wildcard: %s", keysOf(got))
	}
}

func testCounts(t *testing.T, h *harness) {
	ctx := ctxT(t)
	want := func(tenant string, total int, by map[model.State]int, contradicted int) {
		t.Helper()
		c, err := h.L.Counts(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if c.Total != total || c.Contradicted != contradicted {
			t.Errorf("counts(%q): total %d contradicted %d; want %d and %d", tenant, c.Total, c.Contradicted, total, contradicted)
		}
		for st, n := range by {
			if c.ByState[st] != n {
				t.Errorf("counts(%q)[%s] = %d, want %d", tenant, st, c.ByState[st], n)
			}
		}
	}
	want("", 0, nil, 0)
	var ops []*model.Operation
	for i := 0; i < 6; i++ {
		tenant := []string{"b", "a"}[i%2]
		op := newOp(tenant, fmt.Sprintf("k%d", i), model.StateUnknown)
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
		ops = append(ops, op)
	}
	want("", 6, map[model.State]int{model.StateUnknown: 6}, 0)
	// Moves between states, from other handles (other pools) too.
	other := h.open(t, store.Options{})
	for i, op := range ops[:3] {
		next := *op
		next.State = model.StateNotApplied
		next.Contradicted = i == 0
		l := h.L
		if i == 1 {
			l = other
		}
		if err := l.WithTx(ctx, func(tx store.Tx) error { return tx.UpdateOperation(&next, op.State, op.Version) }); err != nil {
			t.Fatal(err)
		}
	}
	want("", 6, map[model.State]int{model.StateUnknown: 3, model.StateNotApplied: 3}, 1)
	want("b", 3, map[model.State]int{model.StateUnknown: 1, model.StateNotApplied: 2}, 1)
	want("a", 3, map[model.State]int{model.StateUnknown: 2, model.StateNotApplied: 1}, 0)
	want("nobody", 0, nil, 0)
	tenants, _ := h.L.Tenants(ctx)
	if strings.Join(tenants, ",") != "a,b" {
		t.Errorf("tenants %v; want a,b (sorted)", tenants)
	}
	h.audit(t)
}

func testDetail(t *testing.T, h *harness) {
	ctx := ctxT(t)
	var a, b *model.Operation
	h.tx(t, func(tx store.Tx) error {
		a = newOp("acme", "a", model.StateSuperseded)
		if err := tx.InsertOperation(a); err != nil {
			return err
		}
		b = newOp("acme", "b", model.StateUnknown)
		b.SupersedesID = a.ID
		b.Provider, b.DownstreamKey, b.ProviderRef, b.LeaseOwner = "mail", "dk-1", "ref-1", "w1"
		if err := tx.InsertOperation(b); err != nil {
			return err
		}
		na := *a
		na.SupersededByID = b.ID
		if err := tx.UpdateOperation(&na, a.State, a.Version); err != nil {
			return err
		}
		for i, o := range []model.Outcome{model.OutcomeDispatched, model.OutcomeTimedOut} {
			at := &model.Attempt{OperationID: b.ID, Outcome: o, Fingerprint: fingerprint, TraceID: "trace", WorkerID: "w1",
				ProviderRef: "ref-1", Error: "timeout", Duration: time.Duration(i+1) * time.Millisecond}
			if err := tx.InsertAttempt(at); err != nil {
				return err
			}
		}
		return tx.InsertDecision(&model.Decision{OperationID: b.ID, Operator: "ana", Action: model.AllActions[0], Reason: "r",
			FromState: model.StateUnknown, ToState: model.StateApplied, FromVersion: 1})
	})
	d, err := h.L.Detail(ctx, "acme", "b")
	if err != nil {
		t.Fatal(err)
	}
	o := d.Operation
	if o.Provider != "mail" || o.DownstreamKey != "dk-1" || o.ProviderRef != "ref-1" || o.LeaseOwner != "w1" ||
		string(o.Args) != `{"subject":"b"}` || o.Summary != "subject b" || !o.CreatedAt.Equal(h.now) || o.AttemptCount != 2 {
		t.Errorf("operation read back as %+v", o)
	}
	if len(d.Attempts) != 2 || d.Attempts[1].Outcome != model.OutcomeTimedOut || d.Attempts[1].Duration != 2*time.Millisecond ||
		d.Attempts[0].TraceID != "trace" || d.Attempts[0].Error != "timeout" || !d.Attempts[0].StartedAt.Equal(h.now) {
		t.Errorf("attempts read back as %+v", d.Attempts)
	}
	if len(d.Decisions) != 1 {
		t.Errorf("decisions: %+v", d.Decisions)
	}
	if d.Supersedes == nil || d.Supersedes.Key != "a" || d.Supersedes.State != model.StateSuperseded || d.SupersededBy != nil {
		t.Errorf("links: %+v %+v", d.Supersedes, d.SupersededBy)
	}
	back, err := h.L.DetailByID(ctx, a.ID)
	if err != nil || back.SupersededBy == nil || back.SupersededBy.Key != "b" {
		t.Errorf("DetailByID(a): %+v %v", back, err)
	}
	if _, err := h.L.DetailByID(ctx, b.ID+1000); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("DetailByID of no operation: %v", err)
	}
	var key string
	h.tx(t, func(tx store.Tx) (err error) { key, err = tx.SupersedingKey(a.ID); return err })
	if key != "b" {
		t.Errorf("SupersedingKey(a) = %q", key)
	}
	if err := h.L.WithTx(ctx, func(tx store.Tx) error { _, err := tx.SupersedingKey(b.ID); return err }); !model.IsCode(err, model.CodeNotFound) {
		t.Errorf("SupersedingKey of an operation nobody superseded: %v", err)
	}
	// Receipts come back byte for byte, as stored (a replay returns them).
	raw := `{"status":"created", "result": {"z":1,"a":[2, 3]}}`
	h.tx(t, func(tx store.Tx) error { return tx.SetReceipt(b.ID, []byte(raw)) })
	if got, _ := h.L.Get(ctx, "acme", "b"); string(got.Receipt) != raw {
		t.Errorf("receipt %s; want the exact bytes %s", got.Receipt, raw)
	}
}

// Changed turns true after a commit by another connection or another
// process, and stays false while nothing is written.
func testWatch(t *testing.T, h *harness) {
	ctx := ctxT(t)
	w, err := h.L.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitChanged := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			changed, err := w.Changed(ctx)
			if err != nil {
				t.Fatalf("Changed: %v", err)
			}
			if changed {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("%s: no change noticed within 5s", what)
	}
	quiet := func(what string) {
		t.Helper()
		time.Sleep(200 * time.Millisecond)
		if changed, err := w.Changed(ctx); changed || err != nil {
			t.Errorf("%s: Changed = %v, %v; nothing was committed", what, changed, err)
		}
	}
	w.Changed(ctx) // whatever happened before watching
	quiet("idle")
	other := h.open(t, store.Options{})
	if err := other.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateUnknown)) }); err != nil {
		t.Fatal(err)
	}
	waitChanged("another connection's insert")
	quiet("after the change was reported")
	// A rolled-back transaction is no change.
	other.WithTx(ctx, func(tx store.Tx) error {
		tx.InsertOperation(newOp("acme", "rolled-back", model.StateUnknown))
		return model.Errorf(model.CodeInvalid, "no")
	})
	quiet("a rolled-back transaction")
	// The watcher's own store's writes count, and so do an attempt alone
	// and a decision alone.
	var op *model.Operation
	if err := h.L.WithTx(ctx, func(tx store.Tx) (err error) { op, err = tx.GetOperation("acme", "k"); return err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	w.Changed(ctx) // the read above may or may not count as a change
	if err := h.L.WithAttemptTx(ctx, func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: fingerprint})
	}); err != nil {
		t.Fatal(err)
	}
	waitChanged("an attempt")
	if err := other.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: "o", Action: model.AllActions[0], Reason: "r",
			FromState: model.StateUnknown, ToState: model.StateApplied})
	}); err != nil {
		t.Fatal(err)
	}
	waitChanged("a decision")
	// Another process.
	if code, rep := runChildProcess(t, childSpec{Location: h.loc, Mode: "write", Tenant: "acme", Keys: []string{"from-child"}}); code != 0 || len(rep.Errors) > 0 {
		t.Fatalf("worker: exit %d %+v", code, rep)
	}
	waitChanged("another process's commit")
}

func testErrorsByClass(t *testing.T, h *harness) {
	ctx := ctxT(t)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateUnknown)) })
	// A constraint is a conflict.
	err := h.L.WithTx(ctx, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateUnknown)) })
	mustCode(t, "duplicate key", err, model.CodeConflict)
	// A not-found passes through as not found.
	err = h.L.WithTx(ctx, func(tx store.Tx) error { _, err := tx.GetOperation("acme", "nope"); return err })
	mustCode(t, "missing key", err, model.CodeNotFound)
	// fn's own model error comes back unchanged.
	err = h.L.WithTx(ctx, func(tx store.Tx) error { return model.Errorf(model.CodeIllegal, "not from here") })
	if !model.IsCode(err, model.CodeIllegal) || err.Error() != model.Errorf(model.CodeIllegal, "not from here").Error() {
		t.Errorf("fn's error came back as %v", err)
	}
	// A deadline already passed: fn does not run, the error is busy.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err = h.L.WithTx(done, func(tx store.Tx) error { ran = true; return nil })
	if ran {
		t.Error("fn ran after its deadline")
	}
	mustCode(t, "cancelled context", err, model.CodeBusy)
	// Another process holding the key past the deadline: busy, in one line
	// that says so and leaks no driver text.
	kill := startHanging(t, childSpec{Location: h.loc, Tenant: "acme", Keys: []string{"held"}})
	short, cancel2 := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel2()
	start := time.Now()
	var sawLocked atomic.Bool
	err = h.L.WithTx(short, func(tx store.Tx) error {
		_, err := createApplied(tx, "acme", "held")
		sawLocked.Store(true)
		return err
	})
	took := time.Since(start)
	mustCode(t, "key held by another process past the deadline", err, model.CodeBusy)
	if err != nil {
		lower := strings.ToLower(err.Error())
		if strings.Contains(lower, "database is locked") || strings.Contains(lower, "canceling statement") {
			t.Errorf("message leaks the driver's text: %q", err)
		}
		if !strings.Contains(lower, "locked") && !strings.Contains(lower, "deadline") {
			t.Errorf("message %q does not say the ledger stayed locked until the deadline", err)
		}
	}
	if took > 5*time.Second {
		t.Errorf("gave up after %v; the deadline was 400ms", took)
	}
	// Reads do not wait for the writer.
	if _, err := h.L.Get(short, "acme", "k"); err != nil && time.Since(start) < 400*time.Millisecond {
		t.Errorf("a read waited for a writer: %v", err)
	}
	kill()
	// Once it is gone the key is free.
	if err := h.L.WithTx(ctx, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "held"); return err }); err != nil {
		t.Errorf("after the holder died: %v", err)
	}
	_ = sawLocked.Load()
}

func testReadOnly(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "k"); return err })
	before := h.snapshot(t)
	ro := h.open(t, store.Options{ReadOnly: true})
	if !ro.ReadOnly() {
		t.Error("ReadOnly() is false on a read-only ledger")
	}
	ran := false
	err := ro.WithTx(ctxT(t), func(tx store.Tx) error { ran = true; return tx.InsertOperation(newOp("acme", "x", model.StateUnknown)) })
	if ran || err == nil {
		t.Errorf("read-only ledger ran a write transaction: ran %v, %v", ran, err)
	}
	if _, err := ro.Get(ctxT(t), "acme", "k"); err != nil {
		t.Errorf("read-only ledger cannot read: %v", err)
	}
	if h.snapshot(t) != before {
		t.Error("the read-only ledger wrote")
	}
	if p := ro.Path(); p == "" {
		t.Error("Path is empty")
	}
}

func testExpiredLeases(t *testing.T, h *harness) {
	for i, d := range []time.Duration{-time.Hour, -time.Minute, time.Minute} {
		op := newOp("acme", fmt.Sprintf("lease-%d", i), model.StateInProgress)
		op.LeaseUntil = h.now.Add(d)
		h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	}
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "unknown", model.StateUnknown)) })
	var got []string
	h.tx(t, func(tx store.Tx) error {
		ops, err := tx.ExpiredLeases(10)
		for _, o := range ops {
			got = append(got, o.Key)
		}
		return err
	})
	if strings.Join(got, ",") != "lease-0,lease-1" {
		t.Errorf("expired leases %v; want lease-0,lease-1 (oldest first)", got)
	}
	got = nil
	h.tx(t, func(tx store.Tx) error {
		ops, err := tx.ExpiredLeases(1)
		for _, o := range ops {
			got = append(got, o.Key)
		}
		return err
	})
	if len(got) != 1 {
		t.Errorf("limit 1 gave %v", got)
	}
}

// Audit must find what it claims to check.
func testAudit(t *testing.T, h *harness) {
	breakages := []struct {
		name, sql, says string
	}{
		{"receipt names another task", `UPDATE operations SET receipt = '{"result":{"task_id":999}}' WHERE op_key = 'k'`, "applied task operations without exactly one task"},
		{"task of an operation that is not applied", `UPDATE operations SET state = 'unknown' WHERE op_key = 'k'`, "tasks whose operation is not applied"},
		{"counts out of step", `UPDATE state_counts SET n = n + 5`, "state counts out of step"},
	}
	for _, b := range breakages {
		t.Run(b.name, func(t *testing.T) {
			hb := newHarness(t, h.d)
			hb.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", "k"); return err })
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

func testReopen(t *testing.T, h *harness) {
	for _, k := range keys(5) {
		h.tx(t, func(tx store.Tx) error { _, err := createApplied(tx, "acme", k); return err })
	}
	before := h.snapshot(t)
	h.L.Close()
	h.L = h.open(t, store.Options{})
	if h.snapshot(t) != before {
		t.Error("reopening changed the ledger")
	}
	// Opening with Create again changes nothing either.
	again := h.open(t, store.Options{Create: true})
	if s, _ := again.Snapshot(ctxT(t)); s != before {
		t.Error("opening an existing ledger with Create changed it")
	}
	ops, _ := h.L.List(ctxT(t), store.ListQuery{})
	var ks []string
	for _, o := range ops {
		ks = append(ks, o.Key)
	}
	sort.Strings(ks)
	if strings.Join(ks, ",") != strings.Join(keys(5), ",") {
		t.Errorf("after reopening: %v", ks)
	}
}

// SentTo says whether a ledger has history with a provider, whatever the
// operation's tenant or state: a command that would create that provider's
// store empty must know.
func testSentTo(t *testing.T, h *harness) {
	ctx := ctxT(t)
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "local", model.StateApplied)) })
	if sent, err := h.L.SentTo(ctx, "sandbox"); err != nil || sent {
		t.Fatalf("a ledger of local operations: SentTo(sandbox) = %v, %v; want false", sent, err)
	}
	op := newOp("globex", "mail", model.StateUnknown)
	op.Tool, op.Provider, op.DownstreamKey, op.ClaimNo = "send_notification", "sandbox", "rs-0123", 1
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(op) })
	cases := []struct {
		providers []string
		want      bool
	}{
		{[]string{"sandbox"}, true},
		{[]string{"mail", "sandbox"}, true},
		{[]string{"mail"}, false},
		{nil, false},
	}
	for _, c := range cases {
		if sent, err := h.L.SentTo(ctx, c.providers...); err != nil || sent != c.want {
			t.Errorf("SentTo(%v) = %v, %v; want %v", c.providers, sent, err, c.want)
		}
	}
}

// LedgerID is the ledger's identity, made once: every handle on the
// ledger — another pool, a read-only one, one opened after the ledger was
// written to — reads the same id, and another ledger has another. A
// provider file that records the ids it served tells its own ledger from
// any other by it.
func testLedgerID(t *testing.T, h *harness) {
	ctx := ctxT(t)
	id, err := h.L.LedgerID(ctx)
	if err != nil {
		t.Fatalf("LedgerID: %v", err)
	}
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("LedgerID = %q; want 32 lowercase hex digits", id)
	}
	h.tx(t, func(tx store.Tx) error { return tx.InsertOperation(newOp("acme", "k", model.StateApplied)) })
	for _, o := range []store.Options{{}, {ReadOnly: true}} {
		if got, err := h.open(t, o).LedgerID(ctx); err != nil || got != id {
			t.Errorf("another handle (read-only %v): LedgerID = %q, %v; want %q", o.ReadOnly, got, err, id)
		}
	}
	other := &harness{d: h.d, loc: h.d.NewLocation(t), now: h.now}
	oid, err := other.open(t, store.Options{Create: true}).LedgerID(ctx)
	if err != nil || oid == id || len(oid) != 32 {
		t.Errorf("another ledger: LedgerID = %q, %v; want 32 hex digits other than %q", oid, err, id)
	}
}

// Tx.LedgerID is the ledger's id read inside a write transaction — the
// downstream keys of the operations it creates name it — on a handle
// that has not read it yet too, and while another goroutine of the same
// handle asks Reader.LedgerID (which, on SQLite, waits for the writer the
// transaction holds: the two must not wait for each other).
func testTxLedgerID(t *testing.T, h *harness) {
	ctx := ctxT(t)
	want, err := h.L.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := h.open(t, store.Options{})
	read := make(chan error, 1)
	err = fresh.WithTx(ctx, func(tx store.Tx) error {
		go func() {
			got, err := fresh.LedgerID(ctx)
			if err == nil && got != want {
				err = fmt.Errorf("Reader.LedgerID = %q; want %q", got, want)
			}
			read <- err
		}()
		got, err := tx.LedgerID()
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("Tx.LedgerID = %q; want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}
}

// How far a ledger saw its provider file go (FileMark) is kept per
// provider name for the file recorded: it only moves forward (a lower mark
// changes nothing), a mark for a file that is not the recorded one is not
// taken, a tie to another file starts it again from none, a tie that
// changes nothing keeps it, and every handle reads it.
func testProviderFileMark(t *testing.T, h *harness) {
	ctx := ctxT(t)
	const a, b = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	if id, m, err := h.L.ProviderFileMark(ctx, "sandbox"); err != nil || id != "" || m != (store.FileMark{}) {
		t.Fatalf("ProviderFileMark before any tie = %q %+v, %v; want none", id, m, err)
	}
	h.tx(t, func(tx store.Tx) error { _, err := tx.TieProviderFile("sandbox", a, ""); return err })
	h.tx(t, func(tx store.Tx) error { _, err := tx.TieProviderFile("sandbox-idem", a, ""); return err })
	mark := func(provider, file string, m store.FileMark) (got store.FileMark) {
		t.Helper()
		h.tx(t, func(tx store.Tx) (err error) {
			got, err = tx.MarkProviderFile(provider, file, m)
			return err
		})
		return got
	}
	for _, tc := range []struct {
		name           string
		provider, file string
		mark, want     store.FileMark
	}{
		{"a first mark is taken", "sandbox", a, store.FileMark{Seq: 5, Check: "c5"}, store.FileMark{Seq: 5, Check: "c5"}},
		{"a higher one raises it", "sandbox", a, store.FileMark{Seq: 9, Check: "c9"}, store.FileMark{Seq: 9, Check: "c9"}},
		{"a lower one changes nothing", "sandbox", a, store.FileMark{Seq: 7, Check: "c7"}, store.FileMark{Seq: 9, Check: "c9"}},
		{"the same number changes nothing", "sandbox", a, store.FileMark{Seq: 9, Check: "other"}, store.FileMark{Seq: 9, Check: "c9"}},
		{"another file's is not taken", "sandbox", b, store.FileMark{Seq: 50, Check: "c50"}, store.FileMark{}},
		{"names are apart", "sandbox-idem", a, store.FileMark{Seq: 2, Check: "c2"}, store.FileMark{Seq: 2, Check: "c2"}},
		{"a name with no file takes none", "mail", a, store.FileMark{Seq: 3, Check: "c3"}, store.FileMark{}},
	} {
		if got := mark(tc.provider, tc.file, tc.mark); got != tc.want {
			t.Errorf("%s: MarkProviderFile(%s, %s, %+v) = %+v; want %+v", tc.name, tc.provider, tc.file, tc.mark, got, tc.want)
		}
	}
	// Tying the file already recorded changes nothing; another file starts again.
	h.tx(t, func(tx store.Tx) error { _, err := tx.TieProviderFile("sandbox", a, a); return err })
	if id, m, err := h.L.ProviderFileMark(ctx, "sandbox"); err != nil || id != a || m != (store.FileMark{Seq: 9, Check: "c9"}) {
		t.Errorf("after tying the same file again: ProviderFileMark = %q %+v, %v; want %s {9 c9}", id, m, err, a)
	}
	h.tx(t, func(tx store.Tx) error { _, err := tx.TieProviderFile("sandbox", b, a); return err })
	for _, o := range []store.Options{{}, {ReadOnly: true}} {
		l := h.open(t, o)
		for p, want := range map[string]struct {
			file string
			mark store.FileMark
		}{"sandbox": {b, store.FileMark{}}, "sandbox-idem": {a, store.FileMark{Seq: 2, Check: "c2"}}, "mail": {}} {
			if id, got, err := l.ProviderFileMark(ctx, p); err != nil || id != want.file || got != want.mark {
				t.Errorf("read-only %v, after sandbox moved to another file: ProviderFileMark(%s) = %q %+v, %v; want %q %+v", o.ReadOnly, p, id, got, err, want.file, want.mark)
			}
		}
	}
	if got := mark("sandbox", b, store.FileMark{Seq: 1, Check: "c1"}); got != (store.FileMark{Seq: 1, Check: "c1"}) {
		t.Errorf("the new file's first mark = %+v; want {1 c1}", got)
	}
}

// A ledger records, per provider name, the provider file it dispatches
// through: a compare-and-set (the first tie records; a tie replacing the
// recorded one replaces it; a tie that expected another — none, or a
// stale one — changes nothing and returns the recorded one), names are
// apart, every handle reads it, and an id that is not 32 characters is
// refused.
func testProviderFile(t *testing.T, h *harness) {
	ctx := ctxT(t)
	const a, b, c = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", "00000000000000000000000000000000"
	if got, err := h.L.ProviderFile(ctx, "sandbox"); err != nil || got != "" {
		t.Fatalf("ProviderFile before any tie = %q, %v; want \"\"", got, err)
	}
	for _, tc := range []struct {
		provider, file, replacing, want string
	}{
		{"sandbox", a, "", a},
		{"sandbox", b, "", a},
		{"sandbox", b, c, a},
		{"sandbox", c, a, c},
		{"sandbox", a, a, c},
		{"sandbox-idem", b, "", b},
		{"sandbox-idem", a, "", b},
	} {
		var got string
		h.tx(t, func(tx store.Tx) (err error) {
			got, err = tx.TieProviderFile(tc.provider, tc.file, tc.replacing)
			return err
		})
		if got != tc.want {
			t.Errorf("TieProviderFile(%s, %s, replacing %q) = %s; want %s", tc.provider, tc.file, tc.replacing, got, tc.want)
		}
	}
	for _, o := range []store.Options{{}, {ReadOnly: true}} {
		l := h.open(t, o)
		for p, want := range map[string]string{"sandbox": c, "sandbox-idem": b, "other": ""} {
			if got, err := l.ProviderFile(ctx, p); err != nil || got != want {
				t.Errorf("read-only %v: ProviderFile(%s) = %q, %v; want %q", o.ReadOnly, p, got, err, want)
			}
		}
	}
	err := h.L.WithTx(ctx, func(tx store.Tx) error { _, err := tx.TieProviderFile("short", "abc", ""); return err })
	if err == nil {
		t.Errorf("TieProviderFile with a 3-character id: no error; want the CHECK's refusal")
	}
}
