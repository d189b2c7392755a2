package ui

import (
	"context"
	"os"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The ledger file replaced under an open console (a restore from a copy,
// a script that moves a new file into place): the console's watcher is
// pinned to the old file, which nobody writes any more, so it saw "no
// change" on every tick and went on saying the screen was current
// ("refreshed 09:…") while the ledger under that name moved on — here
// another operator marked acme/notify-1 applied in it, and the console
// still listed it unknown, ready for n. The console must say the file was
// replaced, stop calling the screen current, and write nothing.
func TestAdvLedgerFileReplacedUnderTheConsoleIsSaidNotShownAsCurrent(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 30)
	h.tick()
	h.contains("refreshed 09:", "notify-1")
	if err := os.Rename(l.path, l.path+".old"); err != nil {
		t.Fatal(err)
	}
	testfiles.Copy(t, l.path+".old", l.path)
	if _, err := l.second(t).MarkApplied(context.Background(), reconcile.Decision{Tenant: "acme", Key: "notify-1",
		Operator: "bob", Reason: "provider has it", Evidence: "sbx_9"}); err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(60e9)
	h.tick()
	h.lacks("refreshed 09:")
	h.contains("replaced")
	// A decision now is refused before it is written anywhere.
	selectOp(t, h, "acme/notify-2")
	h.keys("n")
	h.typeText("never sent")
	h.keys("tab")
	h.typeText("INC-1")
	h.keys("enter", "y")
	h.contains("replaced")
	if d := l.get(t, "acme", "notify-2"); d.Operation.State != "unknown" {
		t.Fatalf("notify-2 is %s", d.Operation.State)
	}
}

// After the ledger file was replaced by another ledger (`mv other.db
// ledger.db`), the banner said the console reads the old file and the list
// showed the old file's rows, but enter read the new file: "no operation
// … in tenant …" for a row on screen (or another operation under the same
// id). A detail opened now says why it is not shown instead.
func TestAdvEnterAfterTheLedgerFileWasReplacedSaysSo(t *testing.T) {
	l := fixture(t)
	other := newLedger(t)
	other.task(t, "umbrella", "task-9", "Unrelated")
	h := open(t, config(l), 120, 30)
	h.tick()
	if err := os.Rename(other.path, l.path); err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(60e9)
	h.tick()
	h.contains("replaced", "notify-1")
	selectOp(t, h, "acme/notify-1")
	h.keys("enter")
	h.contains("Not shown: the ledger file was replaced", "the list is the old file", "Restart retrysafe")
	h.lacks("no operation", "Unrelated")
}
