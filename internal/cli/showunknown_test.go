package cli

import (
	"strings"
	"testing"
)

// ops show (text) of an unknown operation says what a person can do, as
// it does of an in_progress one and as --json's "actions" does, by the
// write's rules (reconcile.Offers): ask the provider, mark applied, mark
// not applied, a new key — and, within the grace, that the last two wait
// for it (M6).
func TestOpsShowOfAnUnknownOneSaysWhatYouCanDo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace string
		want  []string
		not   []string
	}{
		{"within the grace", "", []string{"what you can do:", "ops check", "--as applied", "--as not-applied", "ops supersede", "--within-grace"}, nil},
		{"after the grace", "0", []string{"what you can do:", "ops check", "--as applied", "--as not-applied", "ops supersede"}, []string{"--within-grace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RETRYSAFE_DISPATCH_GRACE", tc.grace)
			db := newLedgerFile(t)
			if _, _, code := cli(t, callArgs(db, "acme", "lost", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
				t.Fatalf("setup: exit %d", code)
			}
			out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "lost")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errText)
			}
			_, section, _ := strings.Cut(out, "what you can do:")
			for _, w := range tc.want {
				if !strings.Contains("what you can do:"+section, w) {
					t.Errorf("ops show lacks %q in what you can do:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(section, w) {
					t.Errorf("ops show says %q:\n%s", w, out)
				}
			}
		})
	}
	// A local operation (applied, nothing to decide) has no such section.
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "local", "create_support_task", taskArgs("x"))...); code != 0 {
		t.Fatal("setup local")
	}
	if out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "local"); strings.Contains(out, "what you can do") {
		t.Errorf("an applied local operation: %s", out)
	}
}
