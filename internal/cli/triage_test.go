package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

type triageJSON struct {
	Candidates int  `json:"candidates"`
	Checked    int  `json:"checked"`
	Recorded   bool `json:"recorded"`
	Totals     struct {
		HasIt      int `json:"has_it"`
		HasNothing int `json:"has_nothing"`
		CannotTell int `json:"cannot_tell"`
		Errors     int `json:"errors"`
	} `json:"totals"`
	Findings []struct {
		Tenant, Key string
		Finding     model.Finding
		Recorded    bool
	} `json:"findings"`
}

func TestTriageCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	for _, k := range []string{"k1", "k2"} {
		if _, errText, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("lose-reply: exit %d %q", code, errText)
		}
	}
	if _, _, code := cli(t, callArgs(db, "acme", "task", "create_support_task", `{"subject":"s"}`)...); code != 0 {
		t.Fatal("local call failed")
	}
	bad := []struct {
		name string
		args []string
		says string
	}{
		{"zero rate", []string{"--rate", "0"}, "--rate must be"},
		{"no concurrency", []string{"--concurrency", "0"}, "--concurrency must be"},
		{"no timeout", []string{"--timeout", "0s"}, "--timeout must be"},
		{"unknown provider", []string{"--provider", "nope"}, `no provider "nope"`},
		{"bad tenant", []string{"--tenant", "a\x01b"}, "--tenant"},
		{"no ledger", []string{"--db", filepath.Join(dir, "missing.db")}, "no ledger"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			before := digest(t, db)
			args := append([]string{"triage", "--db", db}, c.args...)
			if c.args[0] == "--db" { // a flag is given once
				args = append([]string{"triage"}, c.args...)
			}
			out, errText, code := cli(t, args...)
			if code != exitInvalid || out != "" || strings.Count(errText, "\n") != 1 || !strings.Contains(errText, c.says) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", code, out, errText, c.says)
			}
			if digest(t, db) != before {
				t.Error("a refused triage wrote something")
			}
		})
	}

	// The provider's file is not there: cannot tell (never "has nothing"),
	// recorded, exit 3; nothing is created to be asked.
	missing := filepath.Join(dir, "elsewhere.provider.db")
	out, errText, code := cli(t, "triage", "--db", db, "--provider-db", missing, "--json", "--operator", "oncall")
	var rep triageJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitTriageCannotTell || rep.Totals.CannotTell != 2 || rep.Totals.HasNothing != 0 {
		t.Fatalf("missing provider file: exit %d %v %+v %q; want 2 cannot tell, exit 3", code, err, rep, errText)
	}
	for _, f := range rep.Findings {
		if !f.Recorded || f.Finding.Seq == 0 || f.Finding.Kind != model.FindingCannotTell {
			t.Errorf("finding %+v; want a recorded cannot tell with its number", f)
		}
	}
	if m, _ := filepath.Glob(missing + "*"); len(m) != 0 {
		t.Errorf("asking created %v", m)
	}

	// Read-only: shown, not recorded.
	before := digest(t, db)
	out, _, code = cli(t, "triage", "--db", db, "--read-only")
	if code != exitTriageOK || !strings.Contains(out, "shown, not recorded") || strings.Count(out, "has it · sbx_") != 2 {
		t.Errorf("read-only triage: exit %d\n%s", code, out)
	}
	if digest(t, db) != before {
		t.Error("a read-only triage wrote to the ledger")
	}

	// The real run: both found, recorded, the table printed.
	out, _, code = cli(t, "triage", "--db", db, "--operator", "oncall")
	if code != exitTriageOK || !strings.Contains(out, "PROVIDER") || !strings.Contains(out, "sandbox (authoritative)") ||
		!strings.Contains(out, "2 of 2 operations checked") || !strings.Contains(out, "Nothing was decided") {
		t.Errorf("triage: exit %d\n%s", code, out)
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k1", "--json")
	var d model.Detail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	var kinds []model.FindingKind
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeLookup {
			kinds = append(kinds, a.Finding)
		}
	}
	if d.Operation.State != model.StateUnknown || len(kinds) != 2 || kinds[0] != model.FindingCannotTell || kinds[1] != model.FindingHasIt ||
		d.Operation.Finding == nil || d.Operation.Finding.Kind != model.FindingHasIt || d.Operation.Finding.By != "triage by oncall" {
		t.Errorf("k1 after two runs: %s, lookups %v, finding %+v; want unknown, cannot tell then has it", d.Operation.State, kinds, d.Operation.Finding)
	}
}
