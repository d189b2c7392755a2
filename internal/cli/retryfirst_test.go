package cli

import (
	"strings"
	"testing"
)

// ops check of a claim released to be sent again, through a provider that
// honours downstream keys: a retry with the same key re-sends it safely
// and gets the provider's first answer, so the "to settle" line offers the
// retry first and recording "applied" after it (L23). A provider that
// ignores keys is never offered a retry.
func TestOpsCheckOffersTheRetryFirstWhereItIsSafe(t *testing.T) {
	for _, tc := range []struct {
		name      string
		provider  string
		callExit  int
		wantRetry bool
	}{
		{"released, honours keys", "sandbox-idem", 4, true},
		{"unknown, ignores keys", "sandbox", 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newLedgerFile(t)
			if _, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--provider", tc.provider, "--fault", "lose-reply")...); code != tc.callExit {
				t.Fatalf("setup call: exit %d, want %d: %s", code, tc.callExit, errText)
			}
			out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
			if code != 0 {
				t.Fatalf("ops check: exit %d\n%s%s", code, out, errText)
			}
			settle := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "to settle: ") {
					settle = l
					break
				}
			}
			call, resolve := strings.Index(settle, "retrysafe call "), strings.Index(settle, "retrysafe ops resolve ")
			switch {
			case resolve < 0:
				t.Errorf("the to settle line offers no ops resolve:\n%s", out)
			case tc.wantRetry && (call < 0 || call > resolve):
				t.Errorf("the to settle line does not offer the retry first:\n%s", out)
			case tc.wantRetry && (!strings.Contains(settle, "--tool send_notification") || !strings.Contains(settle, "--args ")):
				t.Errorf("the retry does not name the tool and its arguments:\n%s", out)
			case !tc.wantRetry && call >= 0:
				t.Errorf("a retry is offered for a provider that ignores keys:\n%s", out)
			}
			if tc.wantRetry {
				// The retry offered does what it says: the stored receipt.
				if _, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs)...); code != 0 {
					t.Errorf("the retry: exit %d: %s", code, errText)
				}
				if n := deliveries(t, db, "acme", "k"); n != 1 {
					t.Errorf("%d deliveries after the retry; want 1", n)
				}
			}
		})
	}
}
