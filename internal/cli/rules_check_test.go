package cli

import (
	"regexp"
	"strings"
	"testing"
)

// ops check of a failed operation whose provider holds its delivery (an
// earlier attempt's, its answer lost): the lookup flags it contradicted
// (a new version) and mark applied becomes legal. The command printed the
// version from before its own lookup — a decision with --expect-version
// taken from it was refused as stale — and no way to settle it.
func TestOpsCheckOfAFailedOperationItFindsSaysHowToSettleIt(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d; want 5", code)
	}
	// The provider's "has it" seen first (ops show prints its digest):
	// --against-finding=DIGEST confirms it.
	cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "not-applied",
		"--evidence", "the customer says nothing came", "--reason", "customer", "--against-finding="+shownDigest(t, db, "k")); code != 0 {
		t.Fatalf("mark not applied: exit %d: %s", code, errText)
	}
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "reject")...); code != 8 {
		t.Fatalf("the retry: exit %d; want 8 (failed)", code)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--operator", "oncall")
	if code != 0 {
		t.Fatalf("ops check: exit %d: %s", code, errText)
	}
	m := regexp.MustCompile(`is failed \(version (\d+)\)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "--as applied") {
		t.Fatalf("ops check said:\n%s\nwant the state, its version and how to settle it (--as applied)", out)
	}
	if _, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k", "--as", "applied",
		"--expect-version", m[1], "--evidence", "sbx_1", "--reason", "the provider has it"); code != 0 {
		t.Fatalf("mark applied at the version ops check printed (%s): exit %d: %s", m[1], code, errText)
	}
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs)...); code != 0 {
		t.Fatalf("a retry after marking it applied: exit %d; want 0 (the receipt)", code)
	}
}
