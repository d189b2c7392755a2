package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store"
)

// The commands the CLI prints for a person to run next name the ledger
// they were printed for: pasted in another shell they act on it, not on
// the default retrysafe.db.
func TestPrintedCommandsNameTheLedger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir")
	db := newLedgerFileIn(t, dir)
	pdb := providerPath(db)
	_, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply", "--provider-db", pdb)...)
	want := "retrysafe ops check --db " + textsafe.ShellWord(db) + " --provider-db " + textsafe.ShellWord(pdb) + " --tenant acme --key k)"
	if code != 5 || !strings.Contains(errText, want) {
		t.Fatalf("call: exit %d, want %q in\n%s", code, want, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
	want = "to settle: retrysafe ops resolve --db " + textsafe.ShellWord(db) + " --tenant acme --key k --as applied"
	if code != 0 || !strings.Contains(out, want) || strings.Count(out, "to settle:") != 1 {
		t.Fatalf("ops check: exit %d, want %q in\n%s%s", code, want, out, errText)
	}
	// ledgerFlags itself: TestLedgerFlagsAreAbsoluteAndComplete.
}

// newLedgerFileIn is newLedgerFile in dir (made).
func newLedgerFileIn(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.db")
	l, err := openLedger(context.Background(), path, config.Default(), opening{store: store.Options{Create: true}, use: ledger.Dispatching})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return path
}
