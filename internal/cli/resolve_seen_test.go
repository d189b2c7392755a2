package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store"
)

// --against-finding confirms only the findings the operator could have
// seen: a "has it" this very --yes run's look-first found (the dry run
// said "cannot tell": the provider file was moved, then moved back) is
// refused on its row and named — it used to be written as "Y written",
// and Y's next call sent the effect a second time.
func TestAgainstFindingDoesNotConfirmAHasItFoundByThisRun(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	for _, asJSON := range []bool{false, true} {
		name := "text"
		if asJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			db := newLedgerFile(t)
			for _, k := range []string{"x", "y", "z"} {
				if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
					t.Fatalf("setup %s: exit %d", k, code)
				}
			}
			if _, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "x"); code != 0 {
				t.Fatalf("ops check x: exit %d", code)
			}
			pdb, moved := providerPath(db), providerPath(db)+".moved"
			if err := os.Rename(pdb, moved); err != nil {
				t.Fatal(err)
			}
			base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "x", "--key", "y", "--as", "not-applied",
				"--evidence", "INC-1", "--reason", "never sent", "--operator", "alice"}
			out, errText, code := cli(t, append(base, "--dry-run")...)
			seen := digestIn(t, out) // x's "has it", shown
			if code != 0 || !strings.Contains(out, "cannot tell") || seen == "" {
				t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
			}
			if err := os.Rename(moved, pdb); err != nil {
				t.Fatal(err)
			}
			args := append(base, "--yes", "--against-finding="+seen)
			if asJSON {
				args = append(args, "--json")
			}
			out, errText, code = cli(t, args...)
			if code != 2 || !strings.Contains(errText, "1 of 2 written") {
				t.Fatalf("--yes: exit %d, want 2 (y refused)\n%s%s", code, out, errText)
			}
			if asJSON {
				var rows []map[string]any
				if err := json.Unmarshal([]byte(out), &rows); err != nil {
					t.Fatal(err, out)
				}
				if len(rows) != 2 || rows[0]["result"] != "written" || rows[1]["result"] != "illegal" ||
					rows[1]["against_finding"] == nil || rows[1]["finding"] != "has it" || rows[0]["finding"] != nil {
					t.Fatalf("--yes --json rows: %s", out)
				}
			} else {
				var yline string
				for _, l := range strings.Split(out, "\n") {
					if f := strings.Fields(l); len(f) > 1 && f[1] == "y" {
						yline = l
					}
				}
				if !strings.Contains(yline, "illegal") || !strings.Contains(yline, "has it") || !strings.Contains(yline, "this run") {
					t.Fatalf("y's row does not refuse and name the finding:\n%s", out)
				}
			}
			show, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "y")
			if !strings.Contains(show, "unknown") {
				t.Fatalf("y was decided:\n%s", show)
			}
			cli(t, callArgs(db, "acme", "y", "send_notification", notifyArgs)...)
			if n := deliveries(t, db, "acme", "y"); n != 1 {
				t.Fatalf("y: %d deliveries after its next call, want 1", n)
			}
			// Seen now (printed, recorded; ops show gives its digest): a
			// second run confirms it.
			out, errText, code = cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "y", "--key", "z", "--as", "not-applied",
				"--evidence", "INC-1", "--reason", "never sent", "--operator", "alice", "--against-finding="+shownDigest(t, db, "y"), "--yes")
			// y's finding was printed: confirmed now; z's is new: refused.
			rows := map[string]string{}
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 2 {
					rows[f[1]] = f[2]
				}
			}
			if code != 2 || rows["y"] != "written" || rows["z"] != "illegal" {
				t.Fatalf("second run: exit %d\n%s%s", code, out, errText)
			}
		})
	}
}

// A row a --yes run asked about shows what the provider said.
func TestBulkResultShowsTheFindingAskedInThisRun(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"a", "b"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s: exit %d", k, code)
		}
	}
	out, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "a", "--key", "b", "--as", "not-applied",
		"--evidence", "INC-1", "--reason", "never sent", "--operator", "alice", "--yes", "--provider-db", filepath.Join(t.TempDir(), "gone.db"))
	if code != 0 || strings.Count(out, "provider check: cannot tell") != 2 {
		t.Fatalf("exit %d\n%s%s", code, out, errText)
	}
}

// The commands printed for a person to run next name the ledger by an
// absolute path, always (the default retrysafe.db too), and the config
// that came from $RETRYSAFE_CONFIG.
func TestLedgerFlagsAreAbsoluteAndComplete(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return textsafe.ShellWord(a)
	}
	t.Setenv(config.EnvVar, "")
	for _, c := range []struct {
		db, pdb, config, env, want string
	}{
		{db: "retrysafe.db", want: " --db " + abs("retrysafe.db")},
		{db: "l.db", config: "tools.toml", want: " --db " + abs("l.db") + " --config " + abs("tools.toml")},
		{db: "l.db", pdb: "moved.db", want: " --db " + abs("l.db") + " --provider-db " + abs("moved.db")},
		{db: "/abs/it's.db", want: ` --db '/abs/it'\''s.db'`},
		{db: "l.db", env: "env.toml", want: " --db " + abs("l.db") + " --config " + abs("env.toml")},
		{db: "l.db", env: "env.toml", config: "flag.toml", want: " --db " + abs("l.db") + " --config " + abs("flag.toml")},
		{db: "postgres://app:s3cret@db.example/ledger?sslmode=disable", want: " --db 'postgres://app@db.example/ledger?sslmode=disable'"},
	} {
		t.Setenv(config.EnvVar, c.env)
		if got := ledgerFlags(c.db, c.pdb, c.config); got != c.want {
			t.Errorf("ledgerFlags(%q, %q, %q) with $%s=%q = %q, want %q", c.db, c.pdb, c.config, config.EnvVar, c.env, got, c.want)
		}
	}
}

// ops check's "to settle" line, run from the ledger's directory with
// relative paths and the config from the environment, pasted elsewhere,
// acts on the same ledger and config.
func TestPrintedSettleLineWorksFromAnotherDirectory(t *testing.T) {
	dir := t.TempDir()
	db := newLedgerFileIn(t, dir)
	cfg := filepath.Join(dir, "tools.toml")
	toml, err := os.ReadFile(filepath.Join("..", "..", "config", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, toml, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv(config.EnvVar, "tools.toml")
	_, errText, code := cli(t, callArgs("ledger.db", "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...)
	if code != 5 || !strings.Contains(errText, "--db "+textsafe.ShellWord(db)) || !strings.Contains(errText, "--config "+textsafe.ShellWord(cfg)) {
		t.Fatalf("call: exit %d\n%s", code, errText)
	}
	out, errText, code := cli(t, "ops", "check", "--db", "ledger.db", "--tenant", "acme", "--key", "k")
	if code != 0 || !strings.Contains(out, "to settle: retrysafe ops resolve --db "+textsafe.ShellWord(db)+" --config "+textsafe.ShellWord(cfg)+" --tenant acme") {
		t.Fatalf("ops check: exit %d\n%s%s", code, out, errText)
	}
}

// A key given twice is a mistake: refused, nothing written — it used to
// be written, then reported stale, exit 2.
func TestResolveRefusesAKeyGivenTwice(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "d5", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatal("setup")
	}
	for _, keys := range [][]string{{"d5", "d5"}, {"d5", "d5@1"}} {
		for _, mode := range []string{"--yes", "--dry-run"} {
			args := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--as", "applied", "--evidence", "E", "--reason", "r", mode}
			for _, k := range keys {
				args = append(args, "--key", k)
			}
			out, errText, code := cli(t, args...)
			if code != 2 || !strings.Contains(errText, "given twice") {
				t.Fatalf("%v %s: exit %d\n%s%s", keys, mode, code, out, errText)
			}
		}
	}
	if show, _, _ := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "d5"); !strings.Contains(show, "unknown") {
		t.Fatalf("written:\n%s", show)
	}
}

// Bulk "applied" with typed evidence: a row with no "has it" keeps the
// typed text as its decision's evidence only — its receipt names no
// reference typed once for all; one key keeps today's rule.
func TestBulkAppliedTypedEvidenceIsNoReceiptReference(t *testing.T) {
	db := newLedgerFile(t)
	for _, k := range []string{"k1", "k2", "one"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s", k)
		}
	}
	out, errText, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "k1", "--key", "k2", "--as", "applied",
		"--evidence", "TYPED-ONE", "--reason", "r", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errText)
	}
	if _, _, code := cli(t, "ops", "resolve", "--db", db, "--tenant", "acme", "--key", "one", "--as", "applied", "--evidence", "TYPED-ONE", "--reason", "r"); code != 0 {
		t.Fatal("one key")
	}
	st, err := ledger.OpenStore(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct{ key, ref string }{{"k1", ""}, {"k2", ""}, {"one", "TYPED-ONE"}} {
		d, err := st.Detail(context.Background(), "acme", c.key)
		if err != nil {
			t.Fatal(err)
		}
		if d.Operation.ProviderRef != c.ref || !strings.Contains(string(d.Operation.Receipt), `"provider_ref":"`+c.ref+`"`) {
			t.Errorf("%s: ref %q receipt %s, want ref %q", c.key, d.Operation.ProviderRef, d.Operation.Receipt, c.ref)
		}
		if len(d.Decisions) != 1 || d.Decisions[0].Evidence != "TYPED-ONE" {
			t.Errorf("%s: decisions %+v", c.key, d.Decisions)
		}
	}
}

// A held new key's receipt names the replaced key's reference (--yes
// writes it): the dry run says so, in text and --json.
func TestBulkDryRunShowsAHeldKeysReceiptReference(t *testing.T) {
	t.Setenv("RETRYSAFE_DISPATCH_GRACE", "0") // decisions after the grace (resolvegrace_test.go covers within it)
	db := newLedgerFile(t)
	for _, k := range []string{"h", "other"} {
		if _, _, code := cli(t, callArgs(db, "acme", k, "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
			t.Fatalf("setup %s", k)
		}
	}
	// Superseded while the provider could not be asked: the "has it" comes after.
	if _, _, code := cli(t, "ops", "supersede", "--db", db, "--tenant", "acme", "--key", "h", "--new-key", "h-new", "--reason", "resend",
		"--provider-db", filepath.Join(t.TempDir(), "elsewhere.provider.db")); code != 0 {
		t.Fatal("supersede")
	}
	out, _, code := cli(t, "ops", "check", "--db", db, "--tenant", "acme", "--key", "h")
	if code != 0 || !strings.Contains(out, "has it · ") {
		t.Fatalf("check: %s", out)
	}
	ref := strings.Fields(out[strings.Index(out, "has it · ")+len("has it · "):])[0]
	base := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "h-new", "--key", "other", "--as", "applied",
		"--evidence", "TYPED", "--reason", "r"}
	out, errText, code := cli(t, append(base, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "receipt: its own reference "+ref) {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errText)
	}
	out, _, _ = cli(t, append(base, "--dry-run", "--json")...)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err, out)
	}
	if rows[0]["receipt_ref"] != ref || rows[1]["receipt_ref"] != nil {
		t.Fatalf("--json: %s", out)
	}
	if out, errText, code = cli(t, append(base, "--yes")...); code != 0 {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, errText)
	}
	out, _, _ = cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "h-new", "--json")
	if !strings.Contains(strings.Join(strings.Fields(out), ""), `"provider_ref":"`+ref+`"`) {
		t.Fatalf("h-new: %s", out)
	}
}
