package cli

import "testing"

// `sweep` refuses retention windows that could forget a tombstone before a
// retry of its key can arrive: one line, exit 2, the ledger untouched.
func TestSweepRefusesBadRetentionWindows(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "create_support_task", taskArgs("once"))...); code != 0 {
		t.Fatal("setup call failed")
	}
	before := digest(t, db)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"zero tombstone window", []string{"--tombstone-window", "0s"}},
		{"negative tombstone window", []string{"--tombstone-window", "-1h"}},
		{"tombstone shorter than the calls' replay window", []string{"--tombstone-window", "23h"}},
		{"no --replay-window flag", []string{"--replay-window", "1h"}},
	} {
		out, errText, code := cli(t, append([]string{"sweep", "--db", db}, c.args...)...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2", c.name, code, out, errText)
		}
		oneErrorLine(t, c.name, errText)
	}
	if digest(t, db) != before {
		t.Error("a refused sweep changed the ledger")
	}
	if out, errText, code := cli(t, "sweep", "--db", db, "--tombstone-window", "24h"); code != 0 {
		t.Errorf("equal windows: exit %d %s %s", code, out, errText)
	}
}
