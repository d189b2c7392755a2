package reconcile_test

// Replays are answered from the ledger's read side (store.Replayer): a read
// of the operation, maybe cached, and one attempt row written only if the
// operation is still exactly as read. These tests hold that fast path to the
// full one's answers, and to changes another process makes.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

func TestReplayFromTheReadSideIsTheStoredReceiptAndSeesOtherProcesses(t *testing.T) {
	requests := map[string]model.Request{
		"local task":            task("acme", "op-r", "check delayed delivery"),
		"external notification": notify("acme", "op-r", "a@example.com"),
	}
	for name, req := range requests {
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			l := newLedger(t, withClock(clk))
			if _, ok := l.st.(store.Replayer); !ok {
				t.Fatal("the SQLite ledger offers no read-side replay")
			}
			l.svc.ReplayWindow, l.svc.TombstoneWindow = time.Hour, 24*time.Hour
			first := l.call(req, reconcile.CallOptions{})
			if first.Class != model.ClassDone || first.Receipt == nil {
				t.Fatalf("first call %+v", first)
			}
			want := *first.Receipt
			want.Status = "replayed"
			for i := 0; i < 3; i++ { // the first read fills the cache; the others use it
				res := l.call(req, reconcile.CallOptions{})
				if res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed || res.Receipt == nil {
					t.Fatalf("replay %d = %+v", i, res)
				}
				got, _ := json.Marshal(res.Receipt)
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Fatalf("replay %d receipt %s; want the stored one %s", i, got, w)
				}
			}
			if d := l.detail("acme", "op-r"); len(d.Attempts) < 4 || d.Attempts[len(d.Attempts)-1].Outcome != model.OutcomeReplayed ||
				d.Attempts[len(d.Attempts)-1].Seq != len(d.Attempts) {
				t.Fatalf("attempts %+v; want the replays recorded, numbered in order", d.Attempts)
			}
			// A changed payload is still a conflict, recorded.
			changed := req
			changed.Args = json.RawMessage(`{"subject":"something else","to":"b@example.com"}`)
			if res := l.call(changed, reconcile.CallOptions{}); res.Class != model.ClassConflict && res.Class != model.ClassInvalid {
				t.Fatalf("changed payload = %+v; want a conflict", res)
			}

			// Another process compacts the receipt past the window: this
			// process, which has the operation cached, must say expired.
			clk.Advance(time.Hour)
			other := l.tl.Second(t)
			other.ReplayWindow, other.TombstoneWindow = time.Hour, 24*time.Hour
			rep, err := other.Sweep(t.Context())
			if err != nil || rep.Compacted != 1 {
				t.Fatalf("sweep in another process = %+v %v", rep, err)
			}
			clk.Advance(-time.Minute) // inside the window again by this clock: only the row says it is gone
			res := l.call(req, reconcile.CallOptions{})
			if res.Class != model.ClassExpired || res.Receipt != nil {
				t.Fatalf("replay after another process compacted it = %+v; want expired", res)
			}
		})
	}
}
