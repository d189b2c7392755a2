package cli

import (
	"regexp"
	"strings"
	"testing"
)

// A copy of a ledger sends its acme/n-1 through a provider that honours
// keys; its reply is lost (the claim released to be sent again), and a
// lookup finds the original's delivery under the key (has another
// request). ops show used to recommend "retry the same key first", and
// the retry (or a sweep) was answered with the original's delivery,
// recorded as the copy's plain applied (R18 H1). Now ops show offers no
// retry and says why; a retry by call answers unknown (exit 5) saying a
// new key is the way, and so does a sweep, nothing re-sent.
func TestAReleasedClaimWhoseKeyHoldsAnotherRequestIsNotSentAgain(t *testing.T) {
	for _, how := range []string{"call", "sweep"} {
		t.Run(how, func(t *testing.T) {
			t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0")
			db := newLedgerFile(t)
			cp := copyLedger(t, db)
			pdb := providerPath(db)
			idem := []string{"--provider", "sandbox-idem"}
			if _, errText, code := cli(t, callArgs(db, "acme", "n-1", "send_notification", notifyArgs, idem...)...); code != 0 {
				t.Fatalf("the original's call: exit %d: %s", code, errText)
			}
			other := `{"to":"someone-else@example.com","body":"your refund is on its way"}`
			args := callArgs(cp, "acme", "n-1", "send_notification", other, "--provider-db", pdb, "--provider", "sandbox-idem", "--fault", "delay=2s", "--timeout", "300ms")
			if _, errText, code := cli(t, args...); code != 4 {
				t.Fatalf("the copy's call: exit %d; want 4 (in progress, released): %s", code, errText)
			}
			out, errText, code := cli(t, "triage", "--db", cp, "--provider-db", pdb)
			if !strings.Contains(out, "1 found a different request") {
				t.Fatalf("triage: exit %d %q %s", code, out, errText)
			}
			// Its table has a column for it: the counts add up.
			if !regexp.MustCompile(`HAS NOTHING +HAS OTHER +CANNOT TELL`).MatchString(out) || !regexp.MustCompile(`sandbox-idem[^\n]* 1 +0 +0 +1 +0 +0 `).MatchString(out) {
				t.Errorf("triage's table does not count has another request:\n%s", out)
			}
			out, errText, code = cli(t, "ops", "show", "--db", cp, "--provider-db", pdb, "--tenant", "acme", "--key", "n-1")
			if code != 0 {
				t.Fatalf("ops show: exit %d %s", code, errText)
			}
			if strings.Contains(out, "retry the same key") || strings.Contains(out, "retrysafe call") || strings.Contains(out, "to be sent again under its key by a sweep") {
				t.Errorf("ops show offers to send it again under a key that holds another request:\n%s", out)
			}
			if !strings.Contains(out, "different request") || !strings.Contains(out, "new key") {
				t.Errorf("ops show does not say why it is not sent again:\n%s", out)
			}
			switch how {
			case "call":
				out, errText, code = cli(t, args[:len(args)-4]...)
				if code != 5 || !strings.Contains(errText+out, "different request") || !strings.Contains(errText+out, "new key") {
					t.Errorf("retry by call: exit %d %q %q; want 5, saying another request is under the key and a new key is the way", code, out, errText)
				}
			case "sweep":
				out, errText, code = cli(t, "sweep", "--db", cp, "--provider-db", pdb)
				if code != 0 || !strings.Contains(out, "0 re-dispatched") || !strings.Contains(out, "different request") {
					t.Errorf("sweep: exit %d %q %q; want nothing re-dispatched, and why", code, out, errText)
				}
				// The commands it names list them and authorize a new key,
				// and run as printed.
				if !strings.Contains(out, "ops list --db "+cp+" --state unknown --finding has-other") || !strings.Contains(out, "ops supersede --db "+cp) {
					t.Errorf("sweep names no command that lists them or authorizes a new key: %q", out)
				}
				if out, errText, code := cli(t, "ops", "list", "--db", cp, "--state", "unknown", "--finding", "has-other"); code != 0 || !strings.Contains(out, "n-1") {
					t.Errorf("the listing the sweep names: exit %d %q %q", code, out, errText)
				}
			}
			out, _, _ = cli(t, "ops", "show", "--db", cp, "--tenant", "acme", "--key", "n-1")
			if !strings.Contains(out, "state           unknown") || strings.Contains(out, "provider ref") {
				t.Errorf("after the %s: want unknown, no provider ref:\n%s", how, out)
			}
		})
	}
}
