package cli

import (
	"strings"
	"testing"
)

// A pinned --key K@V re-run after it was written is refused as stale and
// says what is known: the version pinned and what the operation is now —
// not "you saw applied (version 2)" when at version 2 it was unknown.
func TestAPinnedVersionRefusedAsStaleSaysOnlyWhatIsKnown(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: exit %d", code)
	}
	args := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k@2", "--as", "applied", "--evidence", "sbx_1", "--reason", "r", "--yes"}
	if out, errText, code := cli(t, args...); code != 0 {
		t.Fatalf("first: exit %d\n%s%s", code, out, errText)
	}
	for _, c := range []struct {
		name  string
		extra []string
		want  []string
		bad   []string
	}{
		{name: "text", want: []string{"stale", "pinned version 2", "it is now applied (version 3)"}, bad: []string{"you saw applied", "applied (v2)"}},
		{name: "json", extra: []string{"--json"}, want: []string{`"expect_version": 2`, "pinned version 2"}, bad: []string{`"expect_state"`, "you saw applied"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errText, code := cli(t, append(args, c.extra...)...)
			if code != 2 {
				t.Fatalf("exit %d\n%s%s", code, out, errText)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errText, w) {
					t.Fatalf("lacks %q:\n%s%s", w, out, errText)
				}
			}
			for _, b := range c.bad {
				if strings.Contains(out+errText, b) {
					t.Fatalf("says %q:\n%s%s", b, out, errText)
				}
			}
		})
	}
}
