package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// showAction is one element of ops show --json's "actions".
type showAction struct {
	Action     string     `json:"action"`
	ConsoleKey string     `json:"console_key"`
	Command    string     `json:"command"`
	Allowed    *bool      `json:"allowed"`
	Needs      []string   `json:"needs"`
	Until      *time.Time `json:"until"`
	Reason     string     `json:"reason"`
}

// ops show --json says what a person may do with the operation, as the
// text's "what you can do" and the console's keys do, by the write's own
// rules (reconcile.OfferOf): each decision, the command and console key
// that make it, whether it is allowed now, and what it needs first —
// within the grace, the --within-grace override until its end; on a live
// lease, nothing, until the lease ends. Every field it had is unchanged.
func TestOpsShowJSONSaysWhatAPersonMayDo(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "gone", "sandbox", "after-claim", "1ms")     // its lease ends at once
	killWorker(t, db, "held", "sandbox-idem", "after-claim", "1h") // a worker holds it
	if _, _, code := cli(t, callArgs(db, "acme", "lost", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup lost: exit %d", code)
	}
	if _, _, code := cli(t, callArgs(db, "acme", "local", "create_support_task", taskArgs("no provider"))...); code != 0 {
		t.Fatalf("setup local: exit %d", code)
	}
	type want struct {
		allowed bool
		needs   string // joined
		reason  string // a part of it
	}
	grace := want{true, "within_grace", "--within-grace"}
	for _, c := range []struct {
		key  string
		want map[string]want
	}{
		{"gone", map[string]want{"mark_applied": {true, "", ""}, "mark_not_applied": grace, "authorize_new_key": grace}},
		{"lost", map[string]want{"mark_applied": {true, "", ""}, "mark_not_applied": grace, "authorize_new_key": grace}},
		{"held", map[string]want{"mark_applied": {false, "", "lease runs until"}, "mark_not_applied": {false, "", "lease runs until"}, "authorize_new_key": {false, "", "lease runs until"}}},
		{"local", map[string]want{"mark_applied": {false, "", "not allowed from applied"}, "mark_not_applied": {false, "", "not allowed from applied"}, "authorize_new_key": {false, "", "not allowed from applied"}}},
	} {
		t.Run(c.key, func(t *testing.T) {
			out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", c.key, "--json")
			if code != 0 {
				t.Fatalf("exit %d %s", code, errText)
			}
			var d struct {
				Operation map[string]any `json:"operation"`
				Attempts  []any          `json:"attempts"`
				Decisions []any          `json:"decisions"`
				Actions   []showAction   `json:"actions"`
			}
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if d.Operation["key"] != c.key || d.Operation["lease_ended"] == nil || d.Attempts == nil || d.Decisions == nil {
				t.Errorf("the fields it had changed: %s", out)
			}
			if len(d.Actions) != 3 {
				t.Fatalf("actions: %+v; want the three decisions\n%s", d.Actions, out)
			}
			keys := map[string]string{"mark_applied": "a", "mark_not_applied": "n", "authorize_new_key": "s"}
			cmds := map[string]string{"mark_applied": "ops resolve", "mark_not_applied": "ops resolve", "authorize_new_key": "ops supersede"}
			for _, a := range d.Actions {
				w, ok := c.want[a.Action]
				if !ok {
					t.Errorf("action %q", a.Action)
					continue
				}
				if a.Allowed == nil || *a.Allowed != w.allowed || strings.Join(a.Needs, ",") != w.needs || a.Needs == nil {
					t.Errorf("%s: allowed %v needs %q; want %v %q (needs always a list)", a.Action, a.Allowed, a.Needs, w.allowed, w.needs)
				}
				if !strings.Contains(a.Reason, w.reason) || (w.reason == "" && a.Reason != "") {
					t.Errorf("%s: reason %q; want it to say %q", a.Action, a.Reason, w.reason)
				}
				if a.ConsoleKey != keys[a.Action] || !strings.Contains(a.Command, "retrysafe "+cmds[a.Action]) || !strings.Contains(a.Command, "--key "+c.key) {
					t.Errorf("%s: key %q command %q", a.Action, a.ConsoleKey, a.Command)
				}
				switch {
				case w.needs == "within_grace" && (a.Until == nil || !a.Until.After(time.Now().Add(-time.Minute))):
					t.Errorf("%s: within the grace, until %v; want its end", a.Action, a.Until)
				case c.key == "held" && (a.Until == nil || !a.Until.After(time.Now().Add(30*time.Minute))):
					t.Errorf("%s: held, until %v; want the lease's end", a.Action, a.Until)
				case w.needs == "" && c.key != "held" && a.Until != nil:
					t.Errorf("%s: until %v; want none", a.Action, a.Until)
				}
			}
		})
	}
}

// ops show's lease row says what happened to the claim, as the console's
// does: held (live until T), its lease ended (at T, nobody holds it), or
// released (at T, to be sent again) — never "released until T".
func TestOpsShowLeaseRowSaysWhatHappenedToTheClaim(t *testing.T) {
	db := newLedgerFile(t)
	killWorker(t, db, "gone", "sandbox", "after-claim", "1ms")
	killWorker(t, db, "held", "sandbox-idem", "after-claim", "1h")
	if _, _, code := cli(t, callArgs(db, "acme", "rel", "send_notification", notifyArgs, "--provider", "sandbox-idem", "--fault", "lose-reply")...); code != 4 {
		t.Fatalf("setup rel: exit %d; want 4 (in_progress, released)", code)
	}
	for key, want := range map[string]*regexp.Regexp{
		"held": regexp.MustCompile(`(?m)^lease +held by cli-test, live until \S+ \S+ \S+$`),
		"gone": regexp.MustCompile(`(?m)^lease +cli-test's lease ended at \S+ \S+ \S+: nobody holds the claim$`),
		"rel":  regexp.MustCompile(`(?m)^lease +released at \S+ \S+ \S+ to be sent again: nobody holds the claim$`),
	} {
		out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", key)
		if code != 0 {
			t.Fatalf("ops show %s: exit %d %s", key, code, errText)
		}
		if !want.MatchString(out) {
			t.Errorf("ops show %s: want a lease row %s:\n%s", key, want, out)
		}
	}
}
