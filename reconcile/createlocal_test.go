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
