package cli

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// A provider file that never served this ledger — another ledger's, or an
// empty one made elsewhere — holds none of its deliveries: its lookup
// "holds no delivery" (or a delivery of the other ledger's under the same
// downstream key) is no evidence about this ledger's operations. Every
// such lookup cannot tell; a copy of the ledger keeps its identity and
// still trusts its own file; a dispatching command refuses the wrong file
// and ties nothing to it.
func TestAProviderFileThatNeverServedTheLedgerCannotTell(t *testing.T) {
	a := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(a, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call on A: exit %d; want 5", code)
	}
	// Ledger B sent other operations (and one under the same tenant and
	// key, so the same downstream key) to its own file.
	b := newLedgerFile(t)
	for _, key := range []string{"other", "k"} {
		if _, errText, code := cli(t, callArgs(b, "acme", key, "send_notification", notifyArgs)...); code != 0 {
			t.Fatalf("setup call on B: exit %d: %s", code, errText)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.provider.db")
	sb, err := sandbox.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
	// A copy of A with B's provider file beside it (swapped files).
	swapped := filepath.Join(t.TempDir(), "swapped.db")
	testfiles.Copy(t, a, swapped)
	testfiles.Copy(t, providerPath(b), providerPath(swapped))
	// A copy of A with A's own provider file: the same ledger.
	copied := filepath.Join(t.TempDir(), "copied.db")
	testfiles.Copy(t, a, copied)
	testfiles.Copy(t, providerPath(a), providerPath(copied))

	for _, c := range []struct {
		name, ledger, providerDB string
		want                     string // "cannot tell", or what a conclusive check prints
		code                     int
	}{
		{"B's provider file", a, providerPath(b), "cannot tell", 2},
		{"an empty provider file made elsewhere", a, empty, "cannot tell", 2},
		{"a copy of A beside B's provider file", swapped, "", "cannot tell", 2},
		{"A's own file", a, "", "delivered", 0},
		{"a copy of A beside a copy of A's file", copied, "", "delivered", 0},
	} {
		args := []string{"ops", "check", "--db", c.ledger, "--tenant", "acme", "--key", "k"}
		if c.providerDB != "" {
			args = append(args, "--provider-db", c.providerDB)
		}
		out, errText, code := cli(t, args...)
		if code != c.code || !strings.Contains(out+errText, c.want) || strings.Contains(out, "no delivery") {
			t.Errorf("%s: ops check exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, code, out, errText, c.code, c.want)
		}
		if c.code == 2 && !strings.Contains(errText, "never served this ledger") {
			t.Errorf("%s: stderr %q does not say why", c.name, errText)
		}
		tri, _, _ := cli(t, append([]string{"triage", "--json", "--db", c.ledger}, args[8:]...)...)
		if strings.Contains(tri, `"kind": "has_nothing"`) || (c.code == 2) != strings.Contains(tri, `"kind": "cannot_tell"`) {
			t.Errorf("%s: triage %s; want cannot tell exactly when ops check cannot", c.name, tri)
		}
	}

	// A call of A through B's file is refused: nothing is sent, and the
	// file is not tied to A (its lookups for A still cannot tell).
	before, err := countDeliveries(t, providerPath(b))
	if err != nil {
		t.Fatal(err)
	}
	_, errText, code := cli(t, callArgs(a, "acme", "k2", "send_notification", notifyArgs, "--provider-db", providerPath(b))...)
	// (exit 2, class invalid, as for a missing provider file: a setup
	// error that retrying the same key will not fix.)
	if code != 2 || !strings.Contains(oneErrorLine(t, "call", errText), "invalid: the sandbox provider's file") ||
		!strings.Contains(errText, "never served this ledger") {
		t.Errorf("a call through B's file: exit %d, %q; want 2, class invalid and a refusal", code, errText)
	}
	out, _, code := cli(t, callArgs(a, "acme", "k2", "send_notification", notifyArgs, "--provider-db", providerPath(b), "--json")...)
	if code != 2 || !strings.Contains(out, `"class":"invalid"`) || !strings.Contains(out, "never served this ledger") {
		t.Errorf("a call through B's file with --json: exit %d, %s; want 2 and class invalid", code, out)
	}
	if after, err := countDeliveries(t, providerPath(b)); err != nil || after != before {
		t.Errorf("B's file held %d deliveries, now %d (%v): the refused call sent something", before, after, err)
	}
	if _, errText, code := cli(t, "ops", "check", "--db", a, "--tenant", "acme", "--key", "k", "--provider-db", providerPath(b)); code != 2 || !strings.Contains(errText, "cannot tell") {
		t.Errorf("after the refused call: ops check exit %d, %q; want cannot tell still", code, errText)
	}
	// A ledger that has sent nothing yet may use any file (one file serves
	// several ledgers), and then trusts it.
	c := newLedgerFile(t)
	if _, errText, code := cli(t, callArgs(c, "acme", "c1", "send_notification", notifyArgs, "--provider-db", providerPath(b))...); code != 0 {
		t.Fatalf("a new ledger's first call through B's file: exit %d: %s", code, errText)
	}
	if out, errText, code := cli(t, "ops", "check", "--db", c, "--tenant", "acme", "--key", "c1", "--provider-db", providerPath(b)); code != 0 || !strings.Contains(out, "delivered") {
		t.Errorf("C's check in the file it tied: exit %d, %q %q", code, out, errText)
	}
}

func countDeliveries(t *testing.T, path string) (int, error) {
	t.Helper()
	sb, err := sandbox.Open(path)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	return sb.Deliveries(t.Context(), "")
}

// `ops supersede` on an operation whose latest recorded finding is "has
// it" would make the effect a second time: refused (exit 2, nothing
// written) naming the finding, until --against-finding confirms it.
func TestSupersedeAgainstAHasItFindingNeedsAgainstFinding(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d; want 5", code)
	}
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k"); code != 0 || !strings.Contains(out, "delivered") {
		t.Fatalf("ops check: exit %d, %q %q", code, out, errText)
	}
	before := digest(t, db)
	out, errText, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "k", "--reason", "send it again")
	line := oneErrorLine(t, "supersede", errText)
	if code != 2 || out != "" || !strings.Contains(line, "found the effect (sbx_1)") || !strings.Contains(line, "--against-finding") {
		t.Errorf("supersede against has it: exit %d, stdout %q, stderr %q; want 2 naming the finding and --against-finding", code, out, errText)
	}
	if after := digest(t, db); after != before {
		t.Errorf("a refused supersede wrote to the ledger")
	}
	out, errText, code = cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "k", "--reason", "send it again", "--against-finding="+shownDigest(t, db, "k"), "--new-key", "k2")
	if code != 0 || strings.TrimSpace(out) != "k2" {
		t.Errorf("supersede --against-finding: exit %d, %q %q; want the new key", code, out, errText)
	}
}

// A provider file is tied to a ledger for the providers it was tied for:
// one made for a sandbox provider of another name (another config's)
// holds none of the deliveries this ledger sent to "sandbox". The ledger
// sent t/k to "sandbox" (reply lost: delivered, outcome unknown); its
// provider file went away; a call under a config whose sandbox provider
// is "mail" made a new file beside the ledger. Asking that file about
// t/k cannot tell — it must not answer "has nothing", which triage would
// count as authoritative evidence that nothing was sent.
func TestAProviderFileTiedForAnotherProviderNameCannotTell(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d; want 5", code)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(providerPath(db) + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	mail := filepath.Join(t.TempDir(), "mail.toml")
	if err := os.WriteFile(mail, []byte(`[[providers]]
name = "mail"
kind = "sandbox"
honours_keys = true
authoritative_lookup = true

[[tools]]
name = "notify"
payload_version = 1
provider = "mail"
arguments = '{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errText, code := cli(t, callArgs(db, "acme", "m", "notify", `{"to":"x"}`, "--config", mail)...); code != 0 {
		t.Fatalf("a call through the mail config: exit %d: %s", code, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k")
	if code != 2 || strings.Contains(out, "no delivery") || !strings.Contains(errText, "cannot tell") {
		t.Errorf("ops check of the sandbox operation in the mail provider's file: exit %d, stdout %q, stderr %q; want 2, cannot tell", code, out, errText)
	}
	tri, _, _ := cli(t, "triage", "--json", "--db", db)
	if strings.Contains(tri, `"kind": "has_nothing"`) || !strings.Contains(tri, `"kind": "cannot_tell"`) {
		t.Errorf("triage: %s; want cannot tell", tri)
	}
	// The mail operation itself is that file's, and is found there.
	if out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "m", "--config", mail); code != 0 || !strings.Contains(out, "delivered") {
		t.Errorf("ops check of the mail operation: exit %d, %q %q; want delivered", code, out, errText)
	}
	// And a call to "sandbox" through that file is refused.
	if _, errText, code := cli(t, callArgs(db, "acme", "k2", "send_notification", notifyArgs)...); code != 2 || !strings.Contains(errText, "never served this ledger") {
		t.Errorf("a sandbox call through the mail provider's file: exit %d, %q; want 2, refused (class invalid: a setup error)", code, errText)
	}
}

// tableNames lists a SQLite file's tables, read as an immutable file.
func tableNames(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names string
	if err := db.QueryRow(`SELECT COALESCE(group_concat(name, ','), '') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)`).Scan(&names); err != nil {
		t.Fatal(err)
	}
	return names
}

// --provider-db naming a file that is not a sandbox provider's — the
// ledger itself, another SQLite database, a text file — is refused by
// every command, and nothing is written to that file: a read-only check
// added the sandbox's three tables to the ledger, and a call tied the
// ledger to itself and kept its deliveries in it.
func TestAProviderDBThatIsNotASandboxFileIsRefusedAndUntouched(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call: exit %d; want 5", code)
	}
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	if o, err := sql.Open("sqlite", other); err != nil {
		t.Fatal(err)
	} else if _, err := o.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	} else {
		o.Close()
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not a database\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{db, other, text} {
		before, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		var tables string
		if target != text {
			tables = tableNames(t, target)
		}
		for _, args := range [][]string{
			{"ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--read-only", "--provider-db", target},
			{"ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--provider-db", target},
			{"triage", "--db", db, "--read-only", "--provider-db", target},
			callArgs(db, "acme", "k2", "send_notification", notifyArgs, "--provider-db", target),
		} {
			out, errText, code := cli(t, args...)
			if code == 0 || strings.Contains(out, "no delivery") || strings.Contains(out, "has_nothing") || !strings.Contains(errText, "not a ") {
				t.Errorf("%s with --provider-db %s: exit %d, stdout %q, stderr %q; want refused", args[0], filepath.Base(target), code, out, errText)
			}
			if args[0] == "call" && code != 2 {
				t.Errorf("call with --provider-db %s: exit %d; want 2 (class invalid: a setup error, retrying will not help)", filepath.Base(target), code)
			}
		}
		if target != text {
			if got := tableNames(t, target); got != tables {
				t.Errorf("%s: tables %s, now %s", filepath.Base(target), tables, got)
			}
		} else if after, _ := os.ReadFile(target); string(after) != string(before) {
			t.Errorf("%s was changed", target)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if target != db {
				if _, err := os.Stat(target + suffix); err == nil {
					t.Errorf("%s%s was made", filepath.Base(target), suffix)
				}
			}
		}
	}
}

// A "cannot tell" recorded after a conclusive finding (the provider file
// moved away, the provider down) is no evidence: the finding before it
// still binds every decision against it. Superseding an operation the
// provider was found to have, or marking it not applied, after a later
// check could not tell, made the effect a second time without the second
// confirmation.
func TestACannotTellAfterAFindingLeavesTheFindingBinding(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // lookups after the grace (reconcile/grace_test.go covers within it)
	for _, c := range []struct {
		name  string
		fault string   // the setup call's fault
		args  []string // the decision against the finding
		want  string
	}{
		{"has it, then supersede", "lose-reply", []string{"ops", "supersede", "--reason", "again"}, "found the effect (sbx_1)"},
		{"has it, then not applied", "lose-reply", []string{"ops", "resolve", "--as", "not_applied", "--evidence", "ticket 42", "--reason", "gone"}, "found the effect (sbx_1)"},
		{"has nothing, then applied", "delay=2s", []string{"ops", "resolve", "--as", "applied", "--evidence", "I saw it", "--reason", "seen"}, "found nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := newLedgerFile(t)
			extra := []string{"--fault", c.fault}
			if strings.HasPrefix(c.fault, "delay") {
				extra = append(extra, "--timeout", "300ms")
			}
			if _, errText, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, extra...)...); code != 5 {
				t.Fatalf("setup call: exit %d; want 5: %s", code, errText)
			}
			if strings.HasPrefix(c.fault, "delay") {
				// The delayed dispatch timed out before it applied: nothing
				// was delivered under the key.
				if n, err := countDeliveries(t, providerPath(db)); err != nil || n != 0 {
					t.Fatalf("deliveries %d, %v; want 0", n, err)
				}
			}
			if _, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k"); code != 0 {
				t.Fatalf("ops check: exit %d: %s", code, errText)
			}
			moved := providerPath(db) + ".moved"
			if err := os.Rename(providerPath(db), moved); err != nil {
				t.Fatal(err)
			}
			if _, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k"); code != 2 || !strings.Contains(errText, "cannot tell") {
				t.Fatalf("ops check without the file: exit %d, %s; want cannot tell", code, errText)
			}
			if err := os.Rename(moved, providerPath(db)); err != nil {
				t.Fatal(err)
			}
			// "Not applied" and a new key ask the provider first and record its
			// lookup (an attempt): the decision is what must not be written.
			var skip []string
			if (c.args[1] == "resolve" && c.args[3] == "not_applied") || c.args[1] == "supersede" {
				skip = []string{"attempts"}
			}
			before := digest(t, db, skip...)
			args := append(append([]string(nil), c.args...), "--db", db, "--tenant", "acme", "--key", "k")
			out, errText, code := cli(t, args...)
			if code != 2 || !strings.Contains(errText, c.want) || !strings.Contains(errText, "--against-finding") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 naming the finding (%s)", c.args[:2], code, out, errText, c.want)
			}
			if digest(t, db, skip...) != before {
				t.Errorf("the refused decision wrote to the ledger")
			}
		})
	}
}

// The commands printed for a person to run next (after an unknown outcome,
// after a check found the effect) name the tenant, key and the provider's
// reference as single shell words: a key chosen by an agent, or a
// reference a provider's API returned, that holds "$(…)", ";" or a space
// would otherwise run as a command, or split, when the line is pasted.
func TestPrintedCommandsQuoteTheirWords(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	db := newLedgerFile(t)
	tenant, key := "acme corp", "k$(touch "+pwned+");echo x 'y'"
	_, errText, code := cli(t, callArgs(db, tenant, key, "send_notification", notifyArgs, "--fault", "lose-reply")...)
	if code != 5 {
		t.Fatalf("setup call: exit %d: %s", code, errText)
	}
	out, _, code := cli(t, "ops", "check", "--db", db, "--tenant", tenant, "--key", key)
	if code != 0 {
		t.Fatalf("ops check: exit %d", code)
	}
	var lines []string
	if i := strings.LastIndex(errText, "(retrysafe "); i >= 0 {
		lines = append(lines, strings.TrimSuffix(strings.TrimSpace(errText[i+1:]), ")"))
	}
	for _, l := range strings.Split(out, "\n") {
		if after, ok := strings.CutPrefix(l, "to settle: "); ok {
			lines = append(lines, after)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("printed commands %q; want the call's and the check's (stderr %q, stdout %q)", lines, errText, out)
	}
	for _, l := range lines {
		// Run it with a retrysafe that prints its words, one a line.
		got, err := exec.Command(sh, "-c", `retrysafe() { for w in "$@"; do printf '%s\n' "$w"; done; }; `+l).Output()
		if err != nil {
			t.Errorf("%s: %v", l, err)
		}
		words := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		want := map[string]string{"--tenant": tenant, "--key": key}
		for i := 0; i+1 < len(words); i++ {
			if v, ok := want[words[i]]; ok && words[i+1] != v {
				t.Errorf("%s: %s arrived as %q; want %q", l, words[i], words[i+1], v)
			}
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("pasting a printed command ran the key's $(…)")
	}
}

// A sweep re-sends only what the ledger already sent: on a ledger that has
// sent nothing to a sandbox it has nothing to send, and it neither makes
// nor ties a provider file. It tied the file it was given, which then
// vouched for the ledger — and the ledger's calls went on to the file
// beside it, so the swept file's "has nothing" was taken as evidence
// about them.
func TestASweepThatSendsNothingTiesNoProviderFile(t *testing.T) {
	db := newLedgerFile(t)
	other := filepath.Join(t.TempDir(), "other.provider.db")
	if out, errText, code := cli(t, "sweep", "--db", db, "--provider-db", other); code != 0 {
		t.Fatalf("sweep: exit %d: %s %s", code, out, errText)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("the sweep made %s", other)
	}
	// Given an existing file, it ties nothing to it either.
	sb, err := sandbox.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
	if out, errText, code := cli(t, "sweep", "--db", db, "--provider-db", other); code != 0 {
		t.Fatalf("sweep: exit %d: %s %s", code, out, errText)
	}
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("call: exit %d; want 5", code)
	}
	out, errText, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "k", "--provider-db", other)
	if code != 2 || strings.Contains(out, "no delivery") || !strings.Contains(errText, "never served this ledger") {
		t.Errorf("ops check in the swept file: exit %d, stdout %q, stderr %q; want cannot tell", code, out, errText)
	}
	// A sweep of a ledger that has sent goes on as before: through its own
	// file, and the file it never used is refused.
	if _, errText, code := cli(t, "sweep", "--db", db); code != 0 {
		t.Errorf("sweep of a ledger that has sent: exit %d: %s", code, errText)
	}
	if _, errText, code := cli(t, "sweep", "--db", db, "--provider-db", other); code == 0 || !strings.Contains(errText, "never served this ledger") {
		t.Errorf("sweep through a file the ledger never used: exit %d: %s; want refused", code, errText)
	}
}

// A copy of a ledger keeps its ledger id, so a sandbox file's ties cannot
// tell the copies apart: once copy B has dispatched through its own new
// file, that file "serves" A's id too. A records the file it dispatched
// through (by the file's own id), so B's file cannot tell about A's
// operations and a call of A through it is refused; each copy still
// trusts its own file.
func TestACopysProviderFileCannotTellAboutTheOriginal(t *testing.T) {
	a := newLedgerFile(t)
	if _, errText, code := cli(t, callArgs(a, "t", "c1", "create_support_task", taskArgs("x"))...); code != 0 {
		t.Fatalf("setup local call on A: exit %d: %s", code, errText)
	}
	b := filepath.Join(t.TempDir(), "B.db")
	testfiles.Copy(t, a, b)
	if _, _, code := cli(t, callArgs(a, "t", "n1", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call on A: exit %d; want 5", code)
	}
	if _, errText, code := cli(t, callArgs(b, "t", "m1", "send_notification", notifyArgs)...); code != 0 {
		t.Fatalf("setup call on B: exit %d: %s", code, errText)
	}
	for _, c := range []struct {
		name, ledger, key, providerDB, want string
		code                                int
	}{
		{"A's operation in B's file", a, "n1", providerPath(b), "cannot tell", 2},
		{"B's operation in A's file", b, "m1", providerPath(a), "cannot tell", 2},
		{"A's operation in A's file", a, "n1", providerPath(a), "delivered", 0},
		{"B's operation in B's file", b, "m1", providerPath(b), "delivered", 0},
	} {
		out, errText, code := cli(t, "ops", "check", "--db", c.ledger, "--tenant", "t", "--key", c.key, "--provider-db", c.providerDB)
		if code != c.code || !strings.Contains(out+errText, c.want) || strings.Contains(out, "no delivery") {
			t.Errorf("%s: ops check exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, code, out, errText, c.code, c.want)
		}
		if c.code == 2 && !strings.Contains(errText, "is not the one this ledger dispatched to sandbox through") {
			t.Errorf("%s: stderr %q does not say why", c.name, errText)
		}
	}
	before, err := countDeliveries(t, providerPath(b))
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := cli(t, callArgs(a, "t", "n2", "send_notification", notifyArgs, "--provider-db", providerPath(b), "--json")...)
	if code != 2 || !strings.Contains(out, `"class":"invalid"`) || !strings.Contains(out, "is not the one this ledger dispatched to sandbox through") {
		t.Errorf("a call of A through B's file: exit %d, %s; want 2, class invalid and a refusal", code, out)
	}
	if after, err := countDeliveries(t, providerPath(b)); err != nil || after != before {
		t.Errorf("B's file held %d deliveries, now %d (%v): the refused call sent something", before, after, err)
	}
}

// A provider file put back from an older backup is the same file (same
// file id) without the deliveries made since: ops check of an operation
// delivered after the backup (its reply lost) cannot tell, saying the
// file went back — never "no delivery" — and a call through it is
// refused, sending nothing. Put the current file back and both work.
func TestAProviderFileRestoredFromAnOlderBackupCannotTell(t *testing.T) {
	a := newLedgerFile(t)
	if _, errText, code := cli(t, callArgs(a, "t", "n1", "send_notification", notifyArgs)...); code != 0 {
		t.Fatalf("setup call: exit %d: %s", code, errText)
	}
	backup := filepath.Join(t.TempDir(), "backup.provider.db")
	testfiles.Copy(t, providerPath(a), backup)
	if _, _, code := cli(t, callArgs(a, "t", "n2", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup call with its reply lost: exit %d; want 5", code)
	}
	current := filepath.Join(t.TempDir(), "current.provider.db")
	testfiles.Copy(t, providerPath(a), current)
	testfiles.Copy(t, backup, providerPath(a)) // the restore
	out, errText, code := cli(t, "ops", "check", "--db", a, "--tenant", "t", "--key", "n2")
	if code != 2 || !strings.Contains(out+errText, "cannot tell") || strings.Contains(out, "no delivery") ||
		!strings.Contains(errText, "no longer holds delivery sbx_2") || !strings.Contains(errText, "older backup") {
		t.Errorf("ops check through the restored file: exit %d, stdout %q, stderr %q; want exit 2, cannot tell, saying the file went back", code, out, errText)
	}
	out, _, code = cli(t, callArgs(a, "t", "n3", "send_notification", notifyArgs, "--json")...)
	if code != 2 || !strings.Contains(out, `"class":"invalid"`) || !strings.Contains(out, "no longer holds delivery sbx_2") {
		t.Errorf("a call through the restored file: exit %d, %s; want 2, class invalid, saying why", code, out)
	}
	if n, err := countDeliveries(t, providerPath(a)); err != nil || n != 1 {
		t.Errorf("the restored file holds %d deliveries (%v); want the backup's 1: the refused call sent something", n, err)
	}
	testfiles.Copy(t, current, providerPath(a))
	if out, errText, code := cli(t, "ops", "check", "--db", a, "--tenant", "t", "--key", "n2"); code != 0 || !strings.Contains(out, "delivered") {
		t.Errorf("ops check through the current file: exit %d, %q %q; want delivered", code, out, errText)
	}
}
