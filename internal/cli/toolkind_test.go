package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// A tool changed in the config from a provider to a local effect (or the
// reverse) between two calls of one key: the key's operation keeps the
// nature it was recorded with. One sent to the provider is never made
// again as a local effect — the effect would happen twice — and a local
// one is never sent. Reviewer R11's H1 repro, with two config files.
func TestAToolThatChangedKindKeepsEachKeysRecordedNature(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	swapA, swapB := filepath.Join(dir, "swapA.toml"), filepath.Join(dir, "swapB.toml")
	const schema = `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`
	write := func(path, charge, note string) {
		doc := "[[providers]]\nname = \"pay\"\nkind = \"sandbox\"\n\n" +
			"[[tools]]\nname = \"charge\"\n" + charge + "\narguments = '" + schema + "'\n\n" +
			"[[tools]]\nname = \"note\"\n" + note + "\narguments = '" + schema + "'\n"
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(swapA, `provider = "pay"`, `local = "local_effects"`)
	write(swapB, `local = "local_effects"`, `provider = "pay"`)
	const args = `{"to":"x"}`

	// Through swapA: each key left in the state the case names.
	if _, errText, code := cli(t, callArgs(db, "t", "done", "charge", args, "--config", swapA)...); code != 0 {
		t.Fatalf("set-up done: exit %d %s", code, errText)
	}
	if _, errText, code := cli(t, callArgs(db, "t", "noted", "note", args, "--config", swapA)...); code != 0 {
		t.Fatalf("set-up noted: exit %d %s", code, errText)
	}
	if _, errText, code := cli(t, callArgs(db, "t", "lost", "charge", args, "--config", swapA, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("set-up lost: exit %d %s", code, errText)
	}
	if _, errText, code := cli(t, callArgs(db, "t", "untaken", "charge", args, "--config", swapA, "--fault", "fail-before")...); code != 4 {
		t.Fatalf("set-up untaken: exit %d %s", code, errText)
	}
	// The worker is killed once the provider got the request; its lease
	// then ends with no answer recorded.
	worker := append([]string{workerCommand}, callArgs(db, "t", "gone", "charge", args, "--config", swapA)[1:]...)
	worker = append(worker, "--lease", "1s", "--die-at", "after-dispatch", "--die-how", "kill")
	if out, errText, code, signaled := asBinary(t, worker...); !signaled {
		t.Fatalf("set-up gone: the worker was not killed: exit %d %s%s", code, out, errText)
	}
	if n := deliveries(t, db, "t", "gone"); n != 1 {
		t.Fatalf("set-up gone: %d deliveries, want 1", n)
	}
	time.Sleep(1200 * time.Millisecond)

	// Through swapB: charge is local now, note goes to pay.
	for _, c := range []struct {
		key, tool string
		code      int
		state     model.State
		says      []string
		sent      int // deliveries, as before the call
	}{
		{"done", "charge", 0, model.StateApplied, []string{`"status":"replayed"`}, 1},
		{"lost", "charge", 5, model.StateUnknown, []string{"unknown"}, 1},
		{"gone", "charge", 5, model.StateUnknown, []string{"lease ended", "changed from provider pay to a local effect"}, 1},
		{"untaken", "charge", 3, model.StateNotApplied, []string{"changed from provider pay to a local effect", "nothing was sent or changed"}, 0},
		{"noted", "note", 0, model.StateApplied, []string{`"status":"replayed"`}, 0},
	} {
		t.Run(c.key, func(t *testing.T) {
			out, errText, code := cli(t, callArgs(db, "t", c.key, c.tool, args, "--config", swapB)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %q %q", code, c.code, out, errText)
			}
			for _, w := range c.says {
				if !strings.Contains(out+errText, w) {
					t.Errorf("output does not say %q: %q %q", w, out, errText)
				}
			}
			if n := deliveries(t, db, "t", c.key); n != c.sent {
				t.Errorf("%d deliveries, want %d", n, c.sent)
			}
			if got := showState(t, db, "t", c.key); got != c.state {
				t.Errorf("state %s, want %s", got, c.state)
			}
		})
	}
	if n := localEffects(t, db, "charge"); n != 0 {
		t.Errorf("%d local effects of charge: an operation sent to provider pay was made again locally", n)
	}
	if n := localEffects(t, db, "note"); n != 1 {
		t.Errorf("%d local effects of note, want the one", n)
	}
}

// showState is the operation's state, read from the ledger.
func showState(t *testing.T, db, tenant, key string) model.State {
	t.Helper()
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	op, err := st.Get(context.Background(), tenant, key)
	if err != nil {
		t.Fatal(err)
	}
	return op.State
}

// localEffects counts tool's rows in the local_effects table.
func localEffects(t *testing.T, db, tool string) int {
	t.Helper()
	st, err := sqlite.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := st.EffectCount(context.Background(), model.TableLocalEffects, tool, "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
