package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --check asks the provider about one key and decides on its answer: with
// several keys it is refused for that, and with one key and --yes or
// --dry-run (the flags of several operations) for that — not told it is
// "for one key" when one key is what it was given. Nothing is opened.
func TestResolveCheckRefusalsSayWhatIsWrong(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, c := range []struct {
		name  string
		args  []string
		words string
	}{
		{"one key with --yes", []string{"--key", "k1", "--yes"}, "drop --dry-run and --yes"},
		{"one key with --dry-run", []string{"--key", "k1", "--dry-run"}, "drop --dry-run and --yes"},
		{"several keys", []string{"--key", "k1", "--key", "k2"}, "--check is for one key"},
	} {
		args := append([]string{"ops", "resolve", "--db", db, "--tenant", "t", "--as", "applied", "--check", "--reason", "x"}, c.args...)
		_, errText, code := cli(t, args...)
		if code != exitInvalid || !strings.Contains(errText, c.words) {
			t.Errorf("%s: exit %d %q; want 2 saying %q", c.name, code, errText, c.words)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused command created the ledger")
	}
}
