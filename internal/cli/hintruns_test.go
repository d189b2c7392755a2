package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// The command a call prints for a person runs as printed — with the
// --provider-db and --config of the call, which ops show takes — and the
// commands ops show prints in turn carry them too: an ops check without
// the config would ask no provider and record "not in this config".
func TestThePrintedOpsShowRunsAndCarriesTheFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	pdb := filepath.Join(dir, "elsewhere.provider.db")
	cfg := filepath.Join(dir, "tools.toml")
	writeTwoTools(t, cfg, "1", `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`)
	extra := []string{"--config", cfg, "--provider-db", pdb}
	cli(t, callArgs(db, "acme", "k1", "charge", `{"to":"x"}`, append(extra, "--fault", "lose-reply")...)...)
	_, errText, code := cli(t, callArgs(db, "acme", "k1", "charge", `{"to":"x"}`, extra...)...)
	if code != 5 {
		t.Fatalf("retry of a lost reply: exit %d, want 5; %q", code, errText)
	}
	m := regexp.MustCompile(`retrysafe (ops show [^)]*)`).FindStringSubmatch(errText)
	if m == nil {
		t.Fatalf("no ops show command in %q", errText)
	}
	args := shellFields(t, m[1])
	out, errText, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("the printed %q: exit %d %q", m[1], code, errText)
	}
	if !strings.Contains(out, "state           unknown") {
		t.Fatalf("the printed ops show: %s", out)
	}
	out, errText, code = cli(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("--json: exit %d %q", code, errText)
	}
	var shown struct {
		Actions []struct {
			Action, Command string
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || len(shown.Actions) == 0 {
		t.Fatalf("ops show --json actions: %v\n%s", err, out)
	}
	for _, a := range shown.Actions {
		for _, want := range []string{"--config " + textsafe.ShellWord(cfg), "--provider-db " + textsafe.ShellWord(pdb)} {
			if !strings.Contains(a.Command, want) {
				t.Errorf("%s: %q does not carry %q", a.Action, a.Command, want)
			}
		}
	}
}

// shellFields splits a printed command the way a shell would, for the
// single-quoted words textsafe.ShellWord writes.
func shellFields(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`'((?:[^']|'\\'')*)'|(\S+)`).FindAllStringSubmatch(s, -1) {
		if m[2] != "" {
			out = append(out, m[2])
		} else {
			out = append(out, strings.ReplaceAll(m[1], `'\''`, `'`))
		}
	}
	return out
}
