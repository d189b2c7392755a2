package reconcile_test

// The seed article's seven tests ("Tool calls that can be retried safely"),
// against real SQLite files.

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

const tool = "create_support_task"

// 1. Lost response after commit: the task and its receipt committed, the
// reply never reached the caller; the retry, through a new connection,
// returns the stored receipt and no second task.
func TestSeedLostResponseAfterCommit(t *testing.T) {
	l := newLedger(t)
	req := task("acme", "op-delayed-delivery", "check delayed delivery")
	died, _ := l.callDying(req, reconcile.CallOptions{}, reconcile.PointAfterCommit)
	if !died {
		t.Fatal("the call returned; it should have lost its reply after commit")
	}
	if n := l.effects(tool); n != 1 {
		t.Fatalf("after the lost reply: %d tasks, want 1 (it committed)", n)
	}
	stored := l.op("acme", "op-delayed-delivery")

	l.reopen() // the retry comes through a new connection
	res := l.call(req, reconcile.CallOptions{})
	if res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed || res.Receipt.Status != "replayed" {
		t.Fatalf("retry = %+v; want the stored receipt replayed", res)
	}
	var orig model.Receipt
	if err := json.Unmarshal(stored.Receipt, &orig); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Receipt.Result, orig.Result) || resultID(t, res.Receipt) != resultID(t, &orig) {
		t.Errorf("retry returned %s, the stored receipt says %s", res.Receipt.Result, orig.Result)
	}
	if n := l.effects(tool); n != 1 {
		t.Errorf("after the retry: %d tasks, want 1", n)
	}
	d := l.detail("acme", "op-delayed-delivery")
	if len(d.Attempts) != 2 || d.Attempts[0].Outcome != model.OutcomeCreated || d.Attempts[1].Outcome != model.OutcomeReplayed {
		t.Errorf("attempts %+v; want created then replayed", d.Attempts)
	}
	l.audit()
}

// 2. Failure before commit rolls back everything: a worker process that
// dies inside the transaction (task and receipt written, not committed)
// leaves no task, no operation, not even an attempt row.
func TestSeedFailureBeforeCommitRollsBackEverything(t *testing.T) {
	l := newLedger(t)
	before := l.snapshot()
	l.close() // only the child touches the file
	spec := l.spec(task("acme", "op-1", "check delayed delivery"))
	spec.DieAt = reconcile.PointBeforeCommit
	code, rep := runChildProcess(t, spec)
	if code != exitDied || rep != nil {
		t.Fatalf("worker exit %d, report %+v; want it killed before commit (exit %d, no acknowledgment)", code, rep, exitDied)
	}
	l.open()
	if after := l.snapshot(); after != before {
		t.Error("the ledger changed: a transaction that never committed left rows")
	}
	if n := l.effects(tool); n != 0 {
		t.Errorf("%d tasks after a death before commit", n)
	}
	// The same key then works normally: nothing was half-claimed.
	if res := l.call(task("acme", "op-1", "check delayed delivery"), reconcile.CallOptions{}); res.Outcome != model.OutcomeCreated {
		t.Errorf("retry after the rollback = %+v; want created", res)
	}
	l.audit()
}

// 3. Same key, changed arguments: a conflict, and nothing is written but the
// attempt row — not the operation, not a task (not even the caller's trace
// id on the operation).
func TestSeedSameKeyChangedArgumentsConflicts(t *testing.T) {
	l := newLedger(t)
	orig := task("acme", "op-1", "check delayed delivery")
	orig.TraceID = "call_first"
	first := l.call(orig, reconcile.CallOptions{})
	before := l.snapshot("attempts")
	attemptsBefore := len(l.detail("acme", "op-1").Attempts)

	changed := []model.Request{task("acme", "op-1", "cancel the order")}
	v2 := task("acme", "op-1", "check delayed delivery")
	v2.PayloadVersion = 2
	changed = append(changed, v2)
	other := report("op-1", "check delayed delivery")
	other.Tenant = "acme"
	changed = append(changed, other)
	for i, r := range changed {
		r.TraceID = "call_conflicting"
		res := l.call(r, reconcile.CallOptions{})
		if res.Class != model.ClassConflict || res.Class.ExitCode() != 3 || res.Receipt != nil {
			t.Errorf("changed request %d = %+v; want a conflict without a receipt", i, res)
		}
		if !strings.Contains(res.Message, "different arguments") || !strings.Contains(res.Message, "nothing was changed") {
			t.Errorf("conflict message %q does not say what happened", res.Message)
		}
	}
	if after := l.snapshot("attempts"); after != before {
		t.Error("a conflict changed the ledger beyond its attempt rows")
	}
	d := l.detail("acme", "op-1")
	if got := len(d.Attempts) - attemptsBefore; got != len(changed) {
		t.Errorf("%d attempt rows added, want %d", got, len(changed))
	}
	for _, a := range d.Attempts[attemptsBefore:] {
		if a.Outcome != model.OutcomeConflict || a.Fingerprint == d.Operation.Fingerprint || a.TraceID != "call_conflicting" {
			t.Errorf("conflict attempt %+v: want outcome conflict with the conflicting fingerprint and trace", a)
		}
	}
	// The original request still replays its receipt.
	if res := l.call(orig, reconcile.CallOptions{}); res.Outcome != model.OutcomeReplayed || resultID(t, res.Receipt) != resultID(t, first.Receipt) {
		t.Errorf("original after conflicts = %+v", res)
	}
	if n := l.effects(tool); n != 1 {
		t.Errorf("%d tasks, want 1", n)
	}
}

// 4. Two different keys with the same subject are two intents: two tasks.
func TestSeedTwoKeysSameSubjectAreTwoTasks(t *testing.T) {
	l := newLedger(t)
	a := l.call(task("acme", "op-monday", "check delayed delivery"), reconcile.CallOptions{})
	b := l.call(task("acme", "op-tuesday", "check delayed delivery"), reconcile.CallOptions{})
	if a.Outcome != model.OutcomeCreated || b.Outcome != model.OutcomeCreated {
		t.Fatalf("results %+v %+v; want both created", a, b)
	}
	if resultID(t, a.Receipt) == resultID(t, b.Receipt) {
		t.Error("two keys share one task")
	}
	if n := l.effects(tool); n != 2 {
		t.Errorf("%d tasks, want 2", n)
	}
	if l.op("acme", "op-monday").Fingerprint != l.op("acme", "op-tuesday").Fingerprint {
		t.Error("same request, different fingerprints")
	}
	l.audit()
}

// 5. Tenant scope: tenant B using tenant A's key gets its own operation —
// never A's receipt, never a conflict that would reveal A's key exists.
func TestSeedTenantScope(t *testing.T) {
	l := newLedger(t)
	a := l.call(task("tenant-a", "op-1", "refund order 7"), reconcile.CallOptions{})
	for i, r := range []model.Request{task("tenant-b", "op-1", "refund order 7"), task("tenant-c", "op-1", "something else")} {
		res := l.call(r, reconcile.CallOptions{})
		if res.Outcome != model.OutcomeCreated || res.Receipt.Tenant != r.Tenant {
			t.Fatalf("tenant %s on A's key = %+v; want its own created operation", r.Tenant, res)
		}
		if resultID(t, res.Receipt) == resultID(t, a.Receipt) || bytes.Equal(res.Receipt.Result, a.Receipt.Result) {
			t.Errorf("case %d: tenant %s got tenant A's receipt", i, r.Tenant)
		}
	}
	for tenant, want := range map[string]int{"tenant-a": 1, "tenant-b": 1, "tenant-c": 1} {
		if n, _ := l.svc.EffectCount(t.Context(), tool, tenant); n != want {
			t.Errorf("%s has %d tasks, want %d", tenant, n, want)
		}
		if d := l.detail(tenant, "op-1"); len(d.Attempts) != 1 {
			t.Errorf("%s/op-1 has %d attempts; another tenant's calls leaked into it", tenant, len(d.Attempts))
		}
	}
	// A's replay is still A's.
	if res := l.call(task("tenant-a", "op-1", "refund order 7"), reconcile.CallOptions{}); resultID(t, res.Receipt) != resultID(t, a.Receipt) {
		t.Errorf("A's replay = %+v", res)
	}
}

// 6. Invalid input is refused before any write: a clear error, and the
// ledger file is byte-for-byte what it was — not even an attempt row.
func TestSeedInvalidInputWritesNothing(t *testing.T) {
	l := newLedger(t)
	l.call(task("acme", "op-1", "check delayed delivery"), reconcile.CallOptions{})
	invalid := map[string]model.Request{
		"empty key":             task("acme", "", "x"),
		"key of 256 characters": task("acme", strings.Repeat("k", 256), "x"),
		"control character":     task("acme", "op\x00", "x"),
		"unknown tool":          {Tenant: "acme", Key: "op-2", Tool: "drop_tables", PayloadVersion: 1, Args: []byte(`{}`)},
		"args not an object":    {Tenant: "acme", Key: "op-2", Tool: tool, PayloadVersion: 1, Args: []byte(`["x"]`)},
		"args over 64 KiB":      {Tenant: "acme", Key: "op-2", Tool: tool, PayloadVersion: 1, Args: []byte(`{"subject":"` + strings.Repeat("x", 70000) + `"}`)},
		"invalid UTF-8":         {Tenant: "acme", Key: "op-2", Tool: tool, PayloadVersion: 1, Args: []byte("{\"subject\":\"\xff\"}")},
		"missing field":         {Tenant: "acme", Key: "op-2", Tool: tool, PayloadVersion: 1, Args: []byte(`{}`)},
		"wrong type":            {Tenant: "acme", Key: "op-2", Tool: tool, PayloadVersion: 1, Args: []byte(`{"subject":1}`)},
		// An existing key with invalid arguments is invalid, not a conflict.
		"existing key, invalid args": {Tenant: "acme", Key: "op-1", Tool: tool, PayloadVersion: 1, Args: []byte(`{"subject":""}`)},
	}
	files := func() map[string][]byte {
		out := map[string][]byte{}
		for _, f := range []string{l.path, l.path + "-wal", l.pdb, l.pdb + "-wal"} {
			b, _ := os.ReadFile(f)
			out[f] = b
		}
		return out
	}
	before, snap := files(), l.snapshot()
	for name, r := range invalid {
		res, err := l.svc.Call(t.Context(), r, reconcile.CallOptions{})
		if !model.IsCode(err, model.CodeInvalid) || res.Class != model.ClassInvalid || res.Class.ExitCode() != 2 {
			t.Errorf("%s: class %s, err %v; want invalid", name, res.Class, err)
		}
		if res.Message == "" || strings.Contains(res.Message, "\n") {
			t.Errorf("%s: message %q is not one clear line", name, res.Message)
		}
	}
	after := files()
	for f := range before {
		if !bytes.Equal(before[f], after[f]) {
			t.Errorf("%s changed after invalid calls", f)
		}
	}
	if l.snapshot() != snap {
		t.Error("the ledger changed after invalid calls")
	}
}

// 7. Concurrent delivery: 16 calls from 8 goroutines with one key → one
// task and 16 identical receipts.
func TestSeedConcurrentDeliveryOneKey(t *testing.T) {
	l := newLedger(t)
	req := task("acme", "op-concurrent", "check delayed delivery")
	results := make([]reconcile.Result, 16)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < 16; i += 8 {
				res, err := l.svc.Call(t.Context(), req, reconcile.CallOptions{})
				if err != nil {
					t.Errorf("call %d: %v", i, err)
				}
				results[i] = res
			}
		}(w)
	}
	wg.Wait()
	created := 0
	for i, res := range results {
		if res.Class != model.ClassDone || res.Receipt == nil {
			t.Fatalf("call %d = %+v; want done with a receipt", i, res)
		}
		if res.Outcome == model.OutcomeCreated {
			created++
		}
		if !bytes.Equal(res.Receipt.Result, results[0].Receipt.Result) {
			t.Errorf("receipt %d %s differs from %s", i, res.Receipt.Result, results[0].Receipt.Result)
		}
	}
	if created != 1 {
		t.Errorf("%d calls created, want exactly 1", created)
	}
	if n := l.effects(tool); n != 1 {
		t.Errorf("%d tasks, want 1", n)
	}
	if d := l.detail("acme", "op-concurrent"); len(d.Attempts) != 16 {
		t.Errorf("%d attempts recorded, want 16", len(d.Attempts))
	}
	l.audit()
}
