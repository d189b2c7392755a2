package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// ops check of an operation whose claim is live (a worker killed after
// its claim, its lease not over: the request may still be on its way)
// used to record "has nothing" and say nothing more — the evidence of a
// "not applied" and a second e-mail. It says cannot tell, and why (exit 2).
func TestOpsCheckDuringALiveClaimCannotTell(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "n-1", "sandbox", "after-claim", "30s")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"text", nil},
		{"json", []string{"--json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"ops", "check", "--db", db, "--tenant", "acme", "--key", "n-1", "--operator", "oncall"}, tc.args...)
			out, errText, code := cli(t, args...)
			if code != exitInvalid {
				t.Fatalf("exit %d %q %q; want 2 (cannot tell)", code, out, errText)
			}
			if tc.args == nil {
				if !strings.Contains(errText, "cannot tell") || !strings.Contains(errText, "on its way") || strings.Contains(errText, "lookup failed") {
					t.Errorf("stderr %q; want cannot tell, a request may be on its way", errText)
				}
				return
			}
			var got struct {
				State    model.State   `json:"state"`
				Finding  model.Finding `json:"finding"`
				InFlight bool          `json:"in_flight"`
				Recorded bool          `json:"recorded"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.State != model.StateInProgress || !got.InFlight ||
				got.Finding.Kind != model.FindingCannotTell || !strings.Contains(got.Finding.Detail, "on its way") || !got.Recorded {
				t.Errorf("json %q (%v); want in_flight, finding cannot tell, recorded", out, err)
			}
		})
	}
	out, _, _ := cli(t, "ops", "list", "--db", db, "--finding", "has-nothing", "--json")
	if strings.Contains(out, "n-1") {
		t.Errorf("ops list --finding has-nothing lists the in-flight lookup: %s", out)
	}
}

// ops check within the grace after a request (a worker killed after its
// claim, its lease ended and swept): "cannot tell" once, then why — the
// grace's error already starts with "cannot tell:", and the line read
// "cannot tell: … and provider sandbox was cannot tell: a request sent at …".
func TestOpsCheckWithinTheGraceSaysCannotTellOnce(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "n-g", "sandbox", "after-claim", "1ms")
	if _, errText, code := cli(t, "sweep", "--db", db); code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "n-g", "--operator", "oncall")
	if code != exitInvalid {
		t.Fatalf("exit %d %q %q; want 2 (cannot tell)", code, out, errText)
	}
	line := oneErrorLine(t, "ops check", errText)
	if strings.Count(line, "cannot tell") != 1 || !strings.Contains(line, "a request sent at") || !strings.Contains(line, "provider sandbox") {
		t.Errorf("stderr %q; want cannot tell once, then the grace's why", line)
	}
}
