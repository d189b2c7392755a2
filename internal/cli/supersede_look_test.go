package cli

import (
	"os"
	"strings"
	"testing"
)

// A new key for an operation whose provider already made the effect is a
// second effect: `ops supersede` asks the provider first, as one key's
// "not applied" does, records the finding, and refuses against a "has it"
// unless --against-finding.
func TestSupersedeAsksTheProviderFirst(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace (reconcile/grace_test.go covers within it)
	t.Run("has it: refused, then overridden on purpose", func(t *testing.T) {
		db := newLedgerFile(t)
		if _, errText, code := cli(t, callArgs(db, "acme", "s", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup call: exit %d; want 5: %s", code, errText)
		}
		out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "s", "--reason", "resend", "--new-key", "s2")
		if code != 2 || !strings.Contains(errText, "provider check: has it") || !strings.Contains(errText, "found the effect") || !strings.Contains(errText, "--against-finding") {
			t.Fatalf("supersede of a delivered operation: exit %d, stdout %q, stderr %q; want 2 naming the provider's finding and --against-finding", code, out, errText)
		}
		// Refused: no new key was authorized.
		if _, _, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "s2"); code == 0 {
			t.Errorf("the refused new key s2 is in the ledger")
		}
		if n, err := countDeliveries(t, providerPath(db)); err != nil || n != 1 {
			t.Errorf("deliveries after the refusal: %d, %v; want 1", n, err)
		}
		// The finding was recorded: ops show names it.
		if out, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "s"); !strings.Contains(out, "has it") {
			t.Errorf("ops show after the refused supersede does not show the recorded finding:\n%s", out)
		}
		out, errText, code = cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "s", "--reason", "resend on purpose", "--new-key", "s3", "--against-finding="+digestIn(t, errText))
		if code != 0 || strings.TrimSpace(out) != "s3" {
			t.Fatalf("supersede --against-finding: exit %d, %q %q", code, out, errText)
		}
		if _, errText, code := cli(t, callArgs(db, "acme", "s3", "send_notification", notifyArgs)...); code != 0 {
			t.Fatalf("new key: exit %d %s", code, errText)
		}
		if n, err := countDeliveries(t, providerPath(db)); err != nil || n != 2 {
			t.Errorf("deliveries after the deliberate resend: %d, %v; want 2", n, err)
		}
	})
	t.Run("has nothing: the new key sends it once", func(t *testing.T) {
		db := newLedgerFile(t)
		if _, errText, code := cli(t, callArgs(db, "acme", "s", "send_notification", notifyArgs, "--fault", "delay=2s", "--timeout", "300ms")...); code != 5 {
			t.Fatalf("setup call: exit %d; want 5: %s", code, errText)
		}
		out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "s", "--reason", "resend", "--new-key", "s2")
		if code != 0 || strings.TrimSpace(out) != "s2" || !strings.Contains(errText, "provider check: has nothing") {
			t.Fatalf("supersede of an undelivered operation: exit %d, %q %q; want 0 and the provider check said", code, out, errText)
		}
		if _, errText, code := cli(t, callArgs(db, "acme", "s2", "send_notification", notifyArgs)...); code != 0 {
			t.Fatalf("new key: exit %d %s", code, errText)
		}
		if n, err := countDeliveries(t, providerPath(db)); err != nil || n != 1 {
			t.Errorf("deliveries: %d, %v; want 1", n, err)
		}
	})
	t.Run("cannot tell: authorized on the operator's word, said so", func(t *testing.T) {
		db := newLedgerFile(t)
		if _, errText, code := cli(t, callArgs(db, "acme", "s", "send_notification", notifyArgs, "--fault", "delay=2s", "--timeout", "300ms")...); code != 5 {
			t.Fatalf("setup call: exit %d; want 5: %s", code, errText)
		}
		moved := providerPath(db) + ".moved"
		if err := os.Rename(providerPath(db), moved); err != nil {
			t.Fatal(err)
		}
		out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "s", "--reason", "resend", "--new-key", "s2")
		if code != 0 || strings.TrimSpace(out) != "s2" || !strings.Contains(errText, "provider check: cannot tell") || !strings.Contains(errText, "on your reason") {
			t.Fatalf("supersede when the provider cannot tell: exit %d, %q %q; want 0 saying the provider could not tell", code, out, errText)
		}
		if _, err := os.Stat(providerPath(db)); err == nil {
			t.Errorf("the lookup created the missing provider file")
		}
	})
}
