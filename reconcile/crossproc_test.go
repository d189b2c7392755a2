package reconcile_test

// Across processes: several worker processes hammer one ledger file. SQLite
// allows one writer at a time; every call must wait its turn inside its
// deadline — none may fail with "database is locked".

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

func TestAcrossProcessesOneKeyIsOneEffect(t *testing.T) {
	l := newLedger(t)
	l.close()
	spec := l.spec(task("acme", "op-shared", "check delayed delivery"))
	spec.Repeat = 50
	spec.StartAt = time.Now().Add(300 * time.Millisecond).UnixMilli()
	var children []*child
	for p := 0; p < 4; p++ {
		children = append(children, startChild(t, spec))
	}
	var results []string
	for p, c := range children {
		code, rep := c.wait(t)
		if code != 0 {
			t.Fatalf("process %d exit %d: %s", p, code, c.stderr.String())
		}
		checkNoLockErrors(t, p, rep)
		for i, res := range rep.Results {
			if res.Class != model.ClassDone || res.Receipt == nil {
				t.Fatalf("process %d call %d = %+v", p, i, res)
			}
			results = append(results, string(res.Receipt.Result))
		}
	}
	if len(results) != 200 {
		t.Fatalf("%d results, want 200", len(results))
	}
	for _, r := range results {
		if r != results[0] {
			t.Fatalf("receipts differ: %s vs %s", r, results[0])
		}
	}
	l.open()
	if n := l.effects(tool); n != 1 {
		t.Errorf("%d tasks from 200 calls with one key, want 1", n)
	}
	d := l.detail("acme", "op-shared")
	created := 0
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeCreated {
			created++
		}
	}
	if len(d.Attempts) != 200 || created != 1 {
		t.Errorf("%d attempts (%d created), want 200 with 1 created", len(d.Attempts), created)
	}
	l.audit()
}

func TestAcrossProcessesDistinctKeysAreDistinctEffects(t *testing.T) {
	l := newLedger(t)
	l.close()
	var children []*child
	start := time.Now().Add(300 * time.Millisecond).UnixMilli()
	for p := 0; p < 4; p++ {
		spec := l.spec(task("acme", "proc"+string(rune('a'+p)), "nightly export"))
		spec.Distinct = 250
		spec.StartAt = start
		children = append(children, startChild(t, spec))
	}
	for p, c := range children {
		code, rep := c.wait(t)
		if code != 0 {
			t.Fatalf("process %d exit %d: %s", p, code, c.stderr.String())
		}
		checkNoLockErrors(t, p, rep)
		if len(rep.Results) != 250 {
			t.Fatalf("process %d made %d calls", p, len(rep.Results))
		}
		for i, res := range rep.Results {
			if res.Outcome != model.OutcomeCreated {
				t.Fatalf("process %d call %d = %+v; want created", p, i, res)
			}
		}
	}
	l.open()
	if n := l.effects(tool); n != 1000 {
		t.Errorf("%d tasks, want 1,000", n)
	}
	c, err := l.st.Counts(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 1000 || c.ByState[model.StateApplied] != 1000 {
		t.Errorf("operations %+v; want 1,000 applied, each with its receipt", c)
	}
	// Audit checks each applied operation's receipt names its own task.
	l.audit()
}

func checkNoLockErrors(t *testing.T, p int, rep *childReport) {
	t.Helper()
	for _, e := range rep.Errors {
		t.Errorf("process %d: a call failed: %s", p, e)
	}
	for _, res := range rep.Results {
		if strings.Contains(strings.ToLower(res.Message), "locked") || res.Class == model.ClassInternal {
			t.Errorf("process %d: %s: %s", p, res.Class, res.Message)
		}
	}
}

// The provider delivered, and the disk filled before its answer could be
// written: the caller must hear "unknown" (stop, a person reconciles), not
// "internal" (retry) — for a provider that ignores downstream keys, a
// retry after the lease would be a second e-mail.
func TestDeliveredButNotRecordedIsUnknown(t *testing.T) {
	l := newLedger(t)
	l.close()
	spec := l.spec(notify("acme", "full-after-send", "ann@example.com"))
	spec.FullAt = reconcile.PointAfterDispatch
	code, rep := runChildProcess(t, spec)
	if code != 0 {
		t.Fatalf("child exit %d", code)
	}
	if len(rep.Results) != 1 || rep.Results[0].Class != model.ClassUnknown {
		t.Fatalf("result %+v (errors %v); want class unknown", rep.Results, rep.Errors)
	}
	if msg := rep.Results[0].Message; !strings.Contains(msg, "applied") || !strings.Contains(msg, "could not be recorded") {
		t.Errorf("message %q does not say what the provider said and that it was not recorded", msg)
	}
	l.open()
	if n := l.deliveries("acme", "full-after-send"); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}
