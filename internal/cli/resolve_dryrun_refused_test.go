package cli

import (
	"strings"
	"testing"
)

// A dry run that selects operations the decision cannot move says how many
// would be refused and why, a count per reason — not only "0 operations",
// which reads as if nothing had matched — and does not suggest --yes when
// nothing would be written.
func TestOpsResolveDryRunCountsTheRefusedByReason(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"a-1", "a-2"} {
		if _, errText, code := cli(t, callArgs(db, "acme", k, "create_support_task", taskArgs("subject "+k))...); code != 0 {
			t.Fatalf("setup %s: exit %d %s", k, code, errText)
		}
	}
	if _, _, code := cli(t, callArgs(db, "acme", "u-1", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup u-1: exit %d", code)
	}
	resolve := func(as string, keys ...string) string {
		t.Helper()
		args := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--as", as, "--reason", "r", "--evidence", "sbx_1", "--dry-run"}
		for _, k := range keys {
			args = append(args, "--key", k)
		}
		// Deciding "not applied" asks the providers first and records
		// their findings as lookup attempts, also on a dry run: nothing
		// else may change.
		before := digest(t, db, "attempts")
		out, errText, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("dry run %v: exit %d\n%s%s", keys, code, out, errText)
		}
		if digest(t, db, "attempts") != before {
			t.Fatalf("dry run %v wrote", keys)
		}
		return out
	}

	out := resolve("applied", "a-1", "a-2")
	if !strings.Contains(out, "dry run: mark applied 0 operations; 2 would be refused (2: cannot mark applied from applied); nothing written.") {
		t.Errorf("every row refused: the summary does not count the refusals by reason:\n%s", out)
	}
	if strings.Contains(out, "--yes") {
		t.Errorf("every row refused: the summary suggests --yes, which would write nothing:\n%s", out)
	}

	out = resolve("applied", "a-1", "u-1", "a-2")
	if !strings.Contains(out, "dry run: mark applied 1 operation; 2 would be refused (2: cannot mark applied from applied); nothing written.") ||
		!strings.Contains(out, "--yes") {
		t.Errorf("one row legal, two refused:\n%s", out)
	}

	// Two reasons, each counted: the provider has u-1's delivery (its
	// reply was lost after it), and a-1 is applied.
	// The dry run asked u-1's provider and recorded its finding: not
	// "nothing written".
	out = resolve("not-applied", "u-1", "a-1", "a-2")
	if !strings.Contains(out, "dry run: mark not applied 0 operations; 3 would be refused (1: the provider check found the effect (--against-finding); 2: cannot mark not applied from applied); no decision written; 1 provider lookup recorded.") {
		t.Errorf("two reasons:\n%s", out)
	}
	// Again: its finding is fresh, nothing is asked.
	out = resolve("not-applied", "u-1", "a-1", "a-2")
	if !strings.Contains(out, "; 2: cannot mark not applied from applied); nothing written.") {
		t.Errorf("a dry run that asked nothing:\n%s", out)
	}
}
