package cli

// The JSON that scripts read is a stable interface: the field names and
// types of `call`, `ops list/show/check/decisions`, `triage`, `lab`, `sweep`, `version`, `migrate` and the
// error object are pinned in testdata/json/*.shape. A change there is a
// change of interface — deliberate, in the README, and run with -update.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/json/*.shape from the current output")

// shape lists every path in a JSON value with its type, one per line:
// "operations[].tenant string". Arrays merge their elements' shapes; null
// is its own type (an optional field absent in one output shows up when
// another output has it — the goldens are made from outputs that have
// them).
func shape(t *testing.T, doc string) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	set := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			set[path+" object"] = true
			for k, e := range x {
				walk(strings.TrimPrefix(path+"."+k, "."), e)
			}
		case []any:
			set[path+" array"] = true
			for _, e := range x {
				walk(path+"[]", e)
			}
		case string:
			set[path+" string"] = true
		case json.Number:
			set[path+" number"] = true
		case bool:
			set[path+" bool"] = true
		case nil:
			set[path+" null"] = true
		}
	}
	walk("", v)
	var lines []string
	for l := range set {
		lines = append(lines, strings.TrimSpace(l))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// golden compares a shape with testdata/json/NAME.shape.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "json", name+".shape")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run JSONShapes -update to make it)", err)
	}
	if string(want) != got {
		t.Errorf("the JSON shape of %s changed (a stable interface; update the README and run with -update):\n--- want\n%s--- got\n%s", name, want, got)
	}
}

func TestJSONShapesAreStable(t *testing.T) {
	db := newLedgerFile(t)
	run := func(args ...string) string {
		t.Helper()
		out, errText, _ := cli(t, args...)
		if out == "" {
			t.Fatalf("%v printed nothing on stdout: %s", args, errText)
		}
		return out
	}
	// call: created (with trace), a stored failure, an unknown outcome, an
	// invalid request — every one a JSON line under --json.
	golden(t, "call-done", shape(t, run(callArgs(db, "acme", "t1", "create_support_task", taskArgs("printer"), "--json", "--trace-id", "c1")...)))
	golden(t, "call-failed", shape(t, run(callArgs(db, "acme", "n-rej", "send_notification", notifyArgs, "--fault", "reject", "--json")...)))
	golden(t, "call-unknown", shape(t, run(callArgs(db, "acme", "n-lost", "send_notification", notifyArgs, "--fault", "lose-reply", "--json")...)))
	golden(t, "call-invalid", shape(t, run(callArgs(db, "acme", "x", "no_such_tool", "{}", "--json")...)))
	for i := 0; i < 3; i++ {
		run(callArgs(db, "acme", fmt.Sprintf("more-%d", i), "create_support_task", taskArgs("more"))...)
	}
	// A decision on one key under --json: the operation after it; a new
	// key: the superseded operation and the key.
	golden(t, "ops-resolve", shape(t, run("ops", "resolve", "--db", db, "--tenant", "acme", "--key", "n-lost", "--as", "applied", "--reason", "provider log", "--evidence", "msg-1", "--json")))
	golden(t, "ops-supersede", shape(t, run("ops", "supersede", "--db", db, "--tenant", "acme", "--key", "n-rej", "--reason", "resend", "--new-key", "n-rej-2", "--json")))
	run("tokens", "create", "--db", db, "--tenant", "acme", "--name", "agent")
	golden(t, "tokens-revoke", shape(t, run("tokens", "revoke", "--db", db, "--id", "1", "--json")))

	golden(t, "ops-list", shape(t, run("ops", "list", "--db", db, "--limit", "2", "--json")))
	golden(t, "ops-show", shape(t, run("ops", "show", "--db", db, "--tenant", "acme", "--key", "n-lost", "--json")))
	golden(t, "ops-show-superseded", shape(t, run("ops", "show", "--db", db, "--tenant", "acme", "--key", "n-rej", "--json")))
	golden(t, "ops-check", shape(t, run("ops", "check", "--db", db, "--tenant", "acme", "--key", "n-lost", "--json")))
	// The audit log: one decision with evidence, one with a new key.
	golden(t, "ops-decisions", shape(t, run("ops", "decisions", "--db", db, "--json")))
	golden(t, "ops-show-finding", shape(t, run("ops", "show", "--db", db, "--tenant", "acme", "--key", "n-lost", "--json")))
	golden(t, "ops-list-finding", shape(t, run("ops", "list", "--db", db, "--search", "n-lost", "--json")))
	run(callArgs(db, "acme", "n-lost-2", "send_notification", notifyArgs, "--fault", "lose-reply", "--json")...)
	golden(t, "triage", shape(t, run("triage", "--db", db, "--json")))
	golden(t, "sweep", shape(t, run("sweep", "--db", db, "--json")))
	golden(t, "version", shape(t, run("version", "--json")))
	golden(t, "migrate", shape(t, run("migrate", "--db", db, "--json")))
	// Several keys: the plan (--dry-run) and the results (--yes).
	for i := 0; i < 2; i++ {
		run(callArgs(db, "acme", fmt.Sprintf("lost-%d", i), "send_notification", notifyArgs, "--fault", "lose-reply", "--json")...)
	}
	bulk := []string{"ops", "resolve", "--db", db, "--tenant", "acme", "--key", "lost-0", "--key", "lost-1", "--as", "applied", "--reason", "provider log", "--evidence", "msg-2", "--json"}
	golden(t, "ops-resolve-dry-run", shape(t, run(append(bulk, "--dry-run")...)))
	golden(t, "ops-resolve-yes", shape(t, run(append(bulk, "--yes")...)))
	golden(t, "error", shape(t, run("ops", "show", "--db", db, "--tenant", "acme", "--key", "nope", "--json")))
}

// ops list pages with a cursor and says when it cut the list short.
func TestOpsListPagesWithACursor(t *testing.T) {
	db := newLedgerFile(t)
	for i := 0; i < 5; i++ {
		cli(t, callArgs(db, "acme", fmt.Sprintf("k%d", i), "create_support_task", taskArgs("page"))...)
	}
	var seen []string
	before := ""
	for page := 0; page < 4; page++ {
		args := []string{"ops", "list", "--db", db, "--limit", "2", "--json"}
		if before != "" {
			args = append(args, "--before", before)
		}
		out, errText, code := cli(t, args...)
		var p listPage
		if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil {
			t.Fatalf("page %d: exit %d %v %s", page, code, err, errText)
		}
		for _, op := range p.Operations {
			seen = append(seen, op.Key)
		}
		if !p.Truncated {
			if p.NextBefore != 0 {
				t.Errorf("last page has next_before %d", p.NextBefore)
			}
			break
		}
		before = fmt.Sprint(p.NextBefore)
	}
	if strings.Join(seen, ",") != "k4,k3,k2,k1,k0" {
		t.Errorf("paging saw %v; want every operation once, newest first", seen)
	}
	out, _, _ := cli(t, "ops", "list", "--db", db, "--limit", "2")
	if !strings.Contains(out, "more match") || !strings.Contains(out, "--before") {
		t.Errorf("a truncated text list does not say so:\n%s", out)
	}
	out, _, _ = cli(t, "ops", "list", "--db", db, "--limit", "5")
	if strings.Contains(out, "more match") {
		t.Errorf("a complete list says it was truncated:\n%s", out)
	}
}
