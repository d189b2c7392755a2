package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// A claim released to be sent again (a lost reply from a provider that
// honours keys) read "in_progress (lease ended)" in ops list and ops show,
// as if its worker had died holding it. The text says "released"; the
// JSON keeps lease_ended true for it (no worker holds it, as before) and
// adds claim_released, so a script can tell the two apart.
func TestOpsListAndShowSayAClaimWasReleased(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "gone", "sandbox", "after-claim", "1ms")     // its lease ends at once
	killWorker(t, db, "held", "sandbox-idem", "after-claim", "1h") // a worker holds it
	if _, errText, code := cli(t, callArgs(db, "acme", "rel", "send_notification", notifyArgs, "--provider", "sandbox-idem", "--fault", "lose-reply")...); code != 4 {
		t.Fatalf("setup rel: exit %d %s", code, errText)
	}
	out, errText, code := cli(t, "ops", "list", "--db", db)
	if code != 0 {
		t.Fatalf("ops list: exit %d %s", code, errText)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			rows[f[4]] = line
		}
	}
	out, _, _ = cli(t, "ops", "list", "--db", db, "--json")
	var page struct {
		Operations []struct {
			Key           string `json:"key"`
			LeaseEnded    *bool  `json:"lease_ended"`
			ClaimReleased *bool  `json:"claim_released"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Operations) != 3 {
		t.Fatalf("ops list --json: %v\n%s", err, out)
	}
	listed := map[string][2]*bool{}
	for _, op := range page.Operations {
		listed[op.Key] = [2]*bool{op.LeaseEnded, op.ClaimReleased}
	}
	for _, c := range []struct {
		key             string
		state           string
		ended, released bool
	}{
		{"gone", "in_progress (lease ended)", true, false},
		{"rel", "in_progress (released)", true, true},
		{"held", "in_progress", false, false},
	} {
		if !strings.Contains(rows[c.key], c.state+" ") || (c.key != "gone" && strings.Contains(rows[c.key], "lease ended")) {
			t.Errorf("ops list, %s: %q; want %s", c.key, rows[c.key], c.state)
		}
		if l := listed[c.key]; l[0] == nil || l[1] == nil || *l[0] != c.ended || *l[1] != c.released {
			t.Errorf("ops list --json, %s: lease_ended %v, claim_released %v; want %v, %v, always present", c.key, l[0], l[1], c.ended, c.released)
		}
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", c.key, code, errText)
		}
		if !regexp.MustCompile(`(?m)^state +` + regexp.QuoteMeta(c.state) + `$`).MatchString(out) {
			t.Errorf("ops show %s: want state %q:\n%s", c.key, c.state, out)
		}
		out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key, "--json")
		var d struct {
			Operation struct {
				LeaseEnded    *bool `json:"lease_ended"`
				ClaimReleased *bool `json:"claim_released"`
			} `json:"operation"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.LeaseEnded == nil || d.Operation.ClaimReleased == nil ||
			*d.Operation.LeaseEnded != c.ended || *d.Operation.ClaimReleased != c.released {
			t.Errorf("ops show %s --json: lease_ended %v, claim_released %v (%v); want %v, %v", c.key, d.Operation.LeaseEnded, d.Operation.ClaimReleased, err, c.ended, c.released)
		}
	}
}
