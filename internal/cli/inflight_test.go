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
