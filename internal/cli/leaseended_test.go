package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store"
)

// An in_progress operation whose lease has ended (its worker is gone) is
// not one a worker holds: ops list and ops show say "in_progress (lease
// ended)", and their JSON has lease_ended. ops show also says whether the
// claim's provider honoured downstream keys, as recorded when the claim
// was made (what decides whether it is sent again), where there is one.
func TestOpsListAndShowSayALeaseEnded(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "gone", "sandbox", "after-claim", "1ms")     // its lease ends at once
	killWorker(t, db, "held", "sandbox-idem", "after-claim", "1h") // a worker holds it
	if _, _, code := cli(t, callArgs(db, "acme", "old", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup old: exit %d", code)
	}
	forgetClaimKeys(t, db, "acme", "old") // as a claim made before schema 12
	if _, _, code := cli(t, callArgs(db, "acme", "local", "create_support_task", taskArgs("no provider"))...); code != 0 {
		t.Fatalf("setup local: exit %d", code)
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
	if !strings.Contains(rows["gone"], "in_progress (lease ended)") {
		t.Errorf("ops list, gone: %q; want in_progress (lease ended)", rows["gone"])
	}
	if !strings.Contains(rows["held"], "in_progress") || strings.Contains(rows["held"], "lease ended") {
		t.Errorf("ops list, held: %q; want in_progress, its lease held", rows["held"])
	}

	out, _, _ = cli(t, "ops", "list", "--db", db, "--json")
	var page struct {
		Operations []struct {
			Key        string `json:"key"`
			LeaseEnded *bool  `json:"lease_ended"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Operations) != 4 {
		t.Fatalf("ops list --json: %v\n%s", err, out)
	}
	for _, op := range page.Operations {
		if op.LeaseEnded == nil || *op.LeaseEnded != (op.Key == "gone") {
			t.Errorf("ops list --json, %s: lease_ended %v; want %v, always present", op.Key, op.LeaseEnded, op.Key == "gone")
		}
	}

	for _, c := range []struct {
		key         string
		ended       bool
		state, keys string // the text's state and honours keys rows ("" none)
	}{
		{"gone", true, "in_progress (lease ended)", "no (recorded at claim)"},
		{"held", false, "in_progress", "yes (recorded at claim)"},
		{"old", false, "unknown", "not recorded (claimed before schema 12)"},
		{"local", false, "applied", ""},
	} {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", c.key, code, errText)
		}
		if !regexp.MustCompile(`(?m)^state +` + regexp.QuoteMeta(c.state) + `$`).MatchString(out) {
			t.Errorf("ops show %s: want state %q:\n%s", c.key, c.state, out)
		}
		keysRow := regexp.MustCompile(`(?m)^honours keys +(.*)$`).FindStringSubmatch(out)
		switch {
		case c.keys == "" && keysRow != nil:
			t.Errorf("ops show %s: an honours keys row for an operation with no provider: %q", c.key, keysRow[0])
		case c.keys != "" && (keysRow == nil || keysRow[1] != c.keys):
			t.Errorf("ops show %s: want honours keys %q:\n%s", c.key, c.keys, out)
		}
		out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key, "--json")
		var d struct {
			Operation struct {
				LeaseEnded *bool `json:"lease_ended"`
			} `json:"operation"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.Operation.LeaseEnded == nil || *d.Operation.LeaseEnded != c.ended {
			t.Errorf("ops show %s --json: lease_ended %v (%v); want %v", c.key, d.Operation.LeaseEnded, err, c.ended)
		}
	}
}

// forgetClaimKeys makes key's claim one recorded before the ledger kept
// whether its provider honoured downstream keys (schema 12).
func forgetClaimKeys(t *testing.T, db, tenant, key string) {
	t.Helper()
	st, err := ledger.OpenStore(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation(tenant, key)
		if err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.ClaimHonoursKeys = nil
		return tx.UpdateOperation(op, from, ver)
	}); err != nil {
		t.Fatal(err)
	}
}
