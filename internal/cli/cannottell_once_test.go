package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A provider that cannot tell is said so once on each command's line: the
// finding's own detail starts "cannot tell: " too (L16: "provider check:
// cannot tell: cannot tell: …").
func TestCannotTellIsSaidOnce(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0")
	for _, tc := range []struct {
		name string
		args func(db, missing string) []string
	}{
		{"ops supersede", func(db, missing string) []string {
			return []string{"ops", "supersede", "--db", db, "--tenant", "acme", "--key", "k", "--reason", "resend", "--provider-db", missing}
		}},
		{"ops check", func(db, missing string) []string {
			return []string{"ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--provider-db", missing}
		}},
		{"ops resolve --check", func(db, missing string) []string {
			return []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "not-applied", "--check", "--reason", "r", "--provider-db", missing}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newLedgerFile(t)
			if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
				t.Fatalf("setup call exit %d; want 5", code)
			}
			out, errText, code := cli(t, tc.args(db, filepath.Join(t.TempDir(), "missing.provider.db"))...)
			if !strings.Contains(errText, "cannot tell") || strings.Count(errText, "cannot tell") != 1 {
				t.Errorf("exit %d; stderr says cannot tell %d times, want once:\n%s%s", code, strings.Count(errText, "cannot tell"), out, errText)
			}
		})
	}
}
