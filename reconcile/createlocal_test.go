package reconcile_test

// A new local operation whose key looked unused (store.Peeker) is written
// by the driver's quick path (store.LocalCreator: two inserts, no read of
// the key, no update of the receipt). It must leave the ledger exactly as
// the full path does, and answer the same.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// fullPathOnly hides the driver's optional fast paths (Peeker among them):
// every call then takes the full path.
type fullPathOnly struct{ store.Ledger }

func TestANewLocalOperationIsWrittenAsTheFullPathWritesIt(t *testing.T) {
	calls := []model.Request{
		task("acme", "k1", "printer on fire"),
		report("k2", "weekly"),
		task("acme", "k1", "printer on fire"),       // a replay
		task("acme", "k1", "printer still on fire"), // a conflict
		task("other", "k1", "same key, another tenant"),
		task("acme", "k3", "third"),
	}
	// The ledger's tables, each compared on its own; ledger_meta (a random
	// ledger id) and provider_files (a random file id) differ by design.
	tables := []string{"operations", "attempts", "tasks", "report_jobs", "local_effects", "state_counts", "tombstones", "decisions"}
	others := []string{"ledger_meta", "provider_files", "tokens"}
	run := func(full bool) (map[string]string, []string) {
		l := newLedger(t, withClock(newClock()))
		l.svc.ReplayWindow = time.Hour
		if full {
			l.svc.Store = fullPathOnly{l.st}
		} else if _, ok := l.st.(store.Peeker); !ok {
			t.Fatal("the SQLite ledger offers no Peeker: the quick path is never taken")
		}
		var answers []string
		for _, r := range calls {
			res := l.call(r, reconcile.CallOptions{})
			b, _ := json.Marshal(res.Receipt)
			answers = append(answers, string(res.Class)+" "+string(res.Outcome)+" "+string(b))
		}
		l.audit()
		snaps := map[string]string{}
		for _, table := range tables {
			var skip []string
			for _, o := range append(tables, others...) {
				if o != table {
					skip = append(skip, o)
				}
			}
			snaps[table] = l.snapshot(skip...)
		}
		return snaps, answers
	}
	fullSnap, fullAnswers := run(true)
	quickSnap, quickAnswers := run(false)
	for i := range calls {
		if fullAnswers[i] != quickAnswers[i] {
			t.Errorf("call %d answered %s; the full path answers %s", i, quickAnswers[i], fullAnswers[i])
		}
	}
	for _, table := range tables {
		if quickSnap[table] != fullSnap[table] {
			t.Errorf("table %s differs between the quick path's ledger and the full path's", table)
		}
	}
}

// A long-running process takes a key it does not remember for a new one
// (store.Recaller) and reads nothing first. A key another process used is
// still answered for what it is — a replay with the stored receipt, a
// conflict, an expired key — with its attempt recorded and no second effect.
func TestAKeyThisProcessDoesNotRememberIsAnsweredForWhatItIs(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	l.svc.ReplayWindow, l.svc.TombstoneWindow = time.Hour, 24*time.Hour
	other := l.tl.Second(t)
	other.ReplayWindow, other.TombstoneWindow = time.Hour, 24*time.Hour
	first, err := other.Call(t.Context(), task("acme", "k", "made elsewhere"), reconcile.CallOptions{})
	if err != nil || first.Class != model.ClassDone {
		t.Fatalf("first call in the other process = %+v, %v", first, err)
	}
	if _, err := other.Call(t.Context(), task("acme", "old", "to be compacted"), reconcile.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if used, ok := l.st.(store.Recaller).Recalls("acme", "k"); used || !ok {
		t.Fatalf("Recalls = %v, %v; this process never met the key", used, ok)
	}
	rep := l.call(task("acme", "k", "made elsewhere"), reconcile.CallOptions{})
	if rep.Class != model.ClassDone || rep.Outcome != model.OutcomeReplayed || rep.Receipt == nil ||
		rep.Receipt.Status != "replayed" || string(rep.Receipt.Result) != string(first.Receipt.Result) {
		t.Fatalf("replay here = %+v; want the stored receipt replayed", rep)
	}
	conflict := task("acme", "k", "something else")
	if res := l.call(conflict, reconcile.CallOptions{}); res.Class != model.ClassConflict {
		t.Fatalf("changed arguments here = %+v; want a conflict", res)
	}
	d := l.detail("acme", "k")
	if len(d.Attempts) != 3 || d.Attempts[1].Outcome != model.OutcomeReplayed || d.Attempts[2].Outcome != model.OutcomeConflict {
		t.Errorf("attempts %+v; want created, replayed, conflict", d.Attempts)
	}
	clk.Advance(2 * time.Hour)
	if rep, err := other.Sweep(t.Context()); err != nil || rep.Compacted != 2 {
		t.Fatalf("sweep = %+v, %v", rep, err)
	}
	if res := l.call(task("acme", "old", "to be compacted"), reconcile.CallOptions{}); res.Class != model.ClassExpired {
		t.Fatalf("a compacted key this process never met = %+v; want expired", res)
	}
	if used, _ := l.st.(store.Recaller).Recalls("acme", "k"); !used {
		t.Error("a key this process has read is still not remembered: its every replay takes the durable path")
	}
	if n := l.effects("create_support_task"); n != 2 {
		t.Errorf("%d tasks; want 2 (no call here made one)", n)
	}
}
