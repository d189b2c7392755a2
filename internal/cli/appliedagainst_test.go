package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reconcile"
)

// ops resolve --as applied refused against a "has nothing" finding names
// the next commands, as the rest of the CLI does: ops show, which shows
// the evidence it goes against, and the command that decides against it
// all the same (--check --against-finding) — which, pasted, goes through.
func TestMarkAppliedAgainstHasNothingNamesTheNextCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	t.Setenv(reconcile.GraceEnv, "1ms")
	if _, errText, code := cli(t, append(callArgs(db, "acme", "k", "send_notification", `{"to":"a@example.com","body":"x"}`), "--fault", "delay=3s", "--lease", "1s")...); code != 5 {
		t.Fatalf("call: exit %d, want 5 (unknown): %s", code, errText)
	}
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--operator", "alice"); code != 0 || !strings.Contains(out, "has nothing") {
		t.Fatalf("ops check: exit %d: %s%s", code, out, errText)
	}
	_, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "applied", "--evidence", "INC-1", "--reason", "support says sent", "--operator", "alice")
	if code == 0 || !strings.Contains(errText, "nothing was written") {
		t.Fatalf("ops resolve --as applied: exit %d; want refused: %s", code, errText)
	}
	show := "retrysafe ops show --db " + db + " --tenant acme --key k"
	if !strings.Contains(errText, show) {
		t.Errorf("the refusal does not name %q:\n%s", show, errText)
	}
	i := strings.Index(errText, "to decide against it all the same: retrysafe ")
	if i < 0 {
		t.Fatalf("the refusal names no command that decides against it:\n%s", errText)
	}
	again := strings.TrimSpace(strings.TrimPrefix(errText[i:], "to decide against it all the same: retrysafe "))
	if !strings.Contains(again, "--check --against-finding") {
		t.Errorf("the command does not confirm with --check --against-finding: %s", again)
	}
	// The shell splits it, as when a person pastes it.
	got, err := exec.Command("sh", "-c", `retrysafe() { for w in "$@"; do printf '%s\n' "$w"; done; }; retrysafe `+again).Output()
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if out, errText, code := cli(t, args...); code != 0 || !strings.Contains(out, "→ applied") {
		t.Fatalf("the printed command %q: exit %d\n%s%s", again, code, out, errText)
	}
}
