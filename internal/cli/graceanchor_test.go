package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The grace's words name the anchor its time comes from (M8): "decide
// after" / "ask again after" is either the end of the client's wait plus
// the grace — and the line says that grace — or the claim's recorded
// apply-by (its lease end plus the grace of the config that sent it),
// and the line says so; never "the client stopped waiting at W" with a
// time that is not W plus the grace it names.
func TestTheGraceNamesTheAnchorItDecidesBy(t *testing.T) {
	waitRe := regexp.MustCompile(`stopped waiting at (\S+?)[;,]|waited for until (\S+?),`)
	untilRe := regexp.MustCompile(`(?:decide|ask again) after (\S+?Z)`)
	for _, tc := range []struct {
		name      string
		callGrace string // RETRYSAFE_DISPATCH_GRACE of the call that sent it
		byClaim   bool
	}{
		// The claim recorded its lease end plus 30 s: later than the
		// timeout's answer plus 30 s.
		{"the claim's apply-by", "", true},
		// The claim was sent under a 1 s grace: its apply-by is before
		// the answer plus this config's 30 s.
		{"the wait's end plus the grace", "1s", false},
	} {
		for _, cmd := range [][]string{
			{"ops", "supersede", "--reason", "resend"},
			{"ops", "resolve", "--as", "not-applied", "--evidence", "INC-7", "--reason", "r"},
			{"ops", "check"},
		} {
			t.Run(tc.name+"/"+strings.Join(cmd[:2], " "), func(t *testing.T) {
				db := newLedgerFile(t)
				t.Setenv("RETRYSAFE_DISPATCH_GRACE", tc.callGrace)
				unknownByTimeout(t, db, "k")
				t.Setenv("RETRYSAFE_DISPATCH_GRACE", "")
				_, errText, code := cli(t, append(cmd, "--db", db, "--tenant", "acme", "--key", "k")...)
				if code != 2 {
					t.Fatalf("exit %d: %s", code, errText)
				}
				u := untilRe.FindStringSubmatch(errText)
				w := waitRe.FindStringSubmatch(errText)
				if u == nil || w == nil {
					t.Fatalf("no wait end or no time to decide after in %q", errText)
				}
				until, err1 := time.Parse(time.RFC3339, u[1])
				waited, err2 := time.Parse(time.RFC3339, w[1]+w[2])
				if err1 != nil || err2 != nil {
					t.Fatalf("times %q %q: %v %v", u[1], w[1]+w[2], err1, err2)
				}
				claimWords := "recorded that the provider may apply it until " + u[1]
				switch {
				case tc.byClaim && !strings.Contains(errText, claimWords):
					t.Errorf("until %s is the claim's apply-by (the wait ended %s), but the line does not say so (%q):\n%s", until, waited, claimWords, errText)
				case !tc.byClaim && (!strings.Contains(errText, "30s after that") || !until.Equal(waited.Add(30*time.Second))):
					t.Errorf("until %s should be the wait's end %s plus the 30s the line names:\n%s", until, waited, errText)
				case !tc.byClaim && strings.Contains(errText, "recorded that"):
					t.Errorf("the line names the claim's apply-by, not the wait:\n%s", errText)
				}
			})
		}
	}
}
