package sandbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// oldRow is a delivery as the builds before this one kept it: no record of
// whether it came through `sandbox serve`.
type oldRow struct {
	prov, key, tool, args string
	at                    int64
}

const oldFileID = "00112233445566778899aabbccddeeff"

// oldFile makes a sandbox file as the builds before serve deliveries were
// marked made it (WAL, ties by provider, a file id), holding rows and tied
// to ledger "aaaa" for sandbox and sandbox-idem.
func oldFile(t *testing.T, rows []oldRow) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.provider.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE deliveries (id INTEGER PRIMARY KEY, provider TEXT NOT NULL, downstream_key TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, created_at INTEGER NOT NULL)`,
		`CREATE INDEX deliveries_key ON deliveries (downstream_key)`,
		`CREATE TABLE ledgers (ledger_id TEXT PRIMARY KEY, since INTEGER NOT NULL)`,
		`CREATE TABLE ledger_providers (ledger_id TEXT NOT NULL, provider TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY (ledger_id, provider))`,
		`INSERT INTO ledger_providers VALUES ('aaaa', 'sandbox', 1), ('aaaa', 'sandbox-idem', 1)`,
		`CREATE TABLE file_meta (one INTEGER PRIMARY KEY CHECK (one = 1), file_id TEXT NOT NULL CHECK (length(file_id) = 32))`,
		`INSERT INTO file_meta VALUES (1, '` + oldFileID + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		olderBuildDelivers(t, db, r)
	}
	return path
}

// olderBuildDelivers writes a delivery as a build before this one does
// (its columns, no more): into an old file, or into one this build has
// upgraded since (an older `sandbox serve` still running on it).
func olderBuildDelivers(t *testing.T, db *sql.DB, r oldRow) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO deliveries (provider, downstream_key, tool, args, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.prov, r.key, r.tool, r.args, r.at); err != nil {
		t.Fatal(err)
	}
}

// serve makes a delivery through `sandbox serve` (Server over HTTP), which
// is not told the tool: body is the request's body.
func serve(t *testing.T, url, prov, key, body string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, url+"/v1/"+prov+"/deliveries", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set(sandbox.KeyHeader, key)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("serve %s %s: %s", prov, key, resp.Status)
	}
}

// A delivery through `sandbox serve` is kept under the provider's own name
// as its tool (the server is not told the tool), and cannot be compared
// with the request a lookup asks about: it counts as this request. A tool
// named exactly like its provider (tool "sandbox-idem" on provider
// "sandbox-idem") made its deliveries look like those: every one under
// the key was "has it", so another request under the key (a copy of the
// ledger sent it) was reported as this one — and "applied" accepted on
// it. A serve delivery is now recorded as one, so a same-named tool's
// delivery is compared like any other. A file from before keeps its
// deliveries as they were (a serve delivery then and a same-named tool's
// cannot be told apart, so such a row still counts by key alone); so does
// one an older build writes into the file after this one opened it.
func TestALookupTellsServeDeliveriesFromAToolNamedLikeItsProvider(t *testing.T) {
	const ours, theirs = `{"to":"a@example.com"}`, `{"to":"b@example.com"}`
	type step struct {
		how             string // legacy (in the file before this build opens it), older-build (after), dispatch (in process), serve (over HTTP)
		prov, key, tool string // serve: no tool
		args            string
	}
	legacy := func(prov, key, tool, args string) step { return step{"legacy", prov, key, tool, args} }
	cases := []struct {
		name       string
		steps      []step
		prov       string // the provider asked
		tool, args string // the query's, under dk
		found      bool
		ref        string
		other      string // words Evidence.Other has ("" = none)
	}{
		{"same-named-tool-other-arguments", []step{{"dispatch", "sandbox-idem", "dk", "sandbox-idem", theirs}},
			"sandbox-idem", "sandbox-idem", ours, false, "sbx_1", "sbx_1 is a sandbox-idem request with other arguments"},
		{"same-named-tool-this-request", []step{{"dispatch", "sandbox-idem", "dk", "sandbox-idem", ours}},
			"sandbox-idem", "sandbox-idem", ours, true, "sbx_1", ""},
		{"same-named-tool-other-tool-asked", []step{{"dispatch", "sandbox", "dk", "sandbox", ours}},
			"sandbox", "send_notification", ours, false, "sbx_1", "sbx_1 is a sandbox request, this operation a send_notification one"},
		{"served", []step{{"serve", "sandbox-idem", "dk", "", theirs}},
			"sandbox-idem", "sandbox-idem", ours, true, "sbx_1", ""},
		{"served-other-tool-asked", []step{{"serve", "sandbox", "dk", "", theirs}},
			"sandbox", "send_notification", ours, true, "sbx_1", ""},
		{"same-named-tool-then-served", []step{{"dispatch", "sandbox", "dk", "sandbox", theirs}, {"serve", "sandbox", "dk", "", theirs}},
			"sandbox", "sandbox", ours, true, "sbx_2", ""},
		{"legacy-serve-or-same-named", []step{legacy("sandbox-idem", "dk", "sandbox-idem", theirs)},
			"sandbox-idem", "sandbox-idem", ours, true, "sbx_1", ""},
		{"legacy-serve-other-tool-asked", []step{legacy("sandbox", "dk", "sandbox", theirs)},
			"sandbox", "send_notification", ours, true, "sbx_1", ""},
		{"legacy-other-tool-still-compared", []step{legacy("sandbox", "dk", "send_notification", theirs)},
			"sandbox", "send_notification", ours, false, "sbx_1", "other arguments"},
		{"legacy-then-same-named-tool", []step{legacy("sandbox-idem", "dk-old", "sandbox-idem", theirs), {"dispatch", "sandbox-idem", "dk", "sandbox-idem", theirs}},
			"sandbox-idem", "sandbox-idem", ours, false, "sbx_2", "sbx_2 is a sandbox-idem request with other arguments"},
		{"legacy-then-served", []step{legacy("sandbox-idem", "dk-old", "sandbox-idem", theirs), {"serve", "sandbox-idem", "dk", "", theirs}},
			"sandbox-idem", "sandbox-idem", ours, true, "sbx_2", ""},
		{"older-build-after-upgrade", []step{{"older-build", "sandbox-idem", "dk", "sandbox-idem", theirs}},
			"sandbox-idem", "sandbox-idem", ours, true, "sbx_1", ""},
	}
	for _, c := range cases {
		for _, start := range []string{"new-file", "old-file"} {
			var old []oldRow
			for _, s := range c.steps {
				if s.how == "legacy" {
					old = append(old, oldRow{s.prov, s.key, s.tool, s.args, 1700000000000})
				}
			}
			if start == "new-file" && len(old) > 0 {
				continue
			}
			t.Run(c.name+"/"+start, func(t *testing.T) {
				ctx := context.Background()
				path := filepath.Join(t.TempDir(), "provider.db")
				if start == "old-file" {
					path = oldFile(t, old)
				}
				sb, err := sandbox.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, sandbox.Fault{}).Handler())
				defer srv.Close()
				for _, s := range c.steps {
					switch s.how {
					case "dispatch":
						resp, err := sb.Provider(s.prov, s.prov == "sandbox-idem").Dispatch(ctx, provider.Request{DownstreamKey: s.key, Tool: s.tool, Args: []byte(s.args)})
						if err != nil || resp.Status != provider.Applied {
							t.Fatalf("set-up: %+v %v", resp, err)
						}
					case "serve":
						serve(t, srv.URL, s.prov, s.key, s.args)
					case "older-build":
						db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
						if err != nil {
							t.Fatal(err)
						}
						olderBuildDelivers(t, db, oldRow{s.prov, s.key, s.tool, s.args, 1700000000000})
						db.Close()
					}
				}
				p := sb.Provider(c.prov, c.prov == "sandbox-idem")
				q := provider.Query{DownstreamKey: "dk", Tool: c.tool, Args: []byte(c.args)}
				ev, err := p.(provider.QueryLooker).LookupQuery(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Found != c.found || ev.Ref != c.ref {
					t.Errorf("found %v ref %s; want %v %s (%s)", ev.Found, ev.Ref, c.found, c.ref, ev.Detail)
				}
				if (c.other == "") != (ev.Other == "") || !strings.Contains(ev.Other, c.other) {
					t.Errorf("other %q; want it to say %q", ev.Other, c.other)
				}
				_, err = provider.LookupFor(ctx, p, q)
				var other *provider.OtherRequest
				if (c.other != "") != errors.As(err, &other) {
					t.Errorf("LookupFor: %v; want another request: %v", err, c.other != "")
				}
				// By key alone, every delivery under the key is what it
				// holds, whichever way it came.
				if ev, err := p.Lookup(ctx, "dk"); err != nil || !ev.Found {
					t.Errorf("by key alone: %+v %v; want has it", ev, err)
				}
			})
		}
	}
}

// An old file this process may not write (another user's, a read-only
// mount) cannot be given the via column: it still answers lookups as the
// builds before did (its rows are all from before: a delivery under the
// provider's name counts by key alone, any other is compared), where it
// used to fail the whole open; a delivery into it is refused as a write
// to a read-only file, nothing else; and it stays unchanged.
func TestAnOldFileThisProcessMayNotWriteStillAnswers(t *testing.T) {
	ctx := context.Background()
	const ours, theirs = `{"to":"a@example.com"}`, `{"to":"b@example.com"}`
	path := oldFile(t, []oldRow{
		{"sandbox-idem", "dk-served", "sandbox-idem", theirs, 1700000000000},
		{"sandbox", "dk-other", "send_notification", theirs, 1700000000000},
		{"sandbox", "dk-ours", "send_notification", ours, 1700000000000},
	})
	sb, err := sandbox.OpenUnwritable(path)
	if err != nil {
		t.Fatalf("open read-only: %v; want it to answer as before", err)
	}
	defer sb.Close()
	for _, c := range []struct {
		prov, key, tool string
		found           bool
		other           string
	}{
		{"sandbox-idem", "dk-served", "sandbox-idem", true, ""},
		{"sandbox", "dk-other", "send_notification", false, "other arguments"},
		{"sandbox", "dk-ours", "send_notification", true, ""},
		{"sandbox", "dk-none", "send_notification", false, ""},
	} {
		p := sb.Provider(c.prov, c.prov == "sandbox-idem")
		ev, err := p.(provider.QueryLooker).LookupQuery(ctx, provider.Query{DownstreamKey: c.key, Tool: c.tool, Args: []byte(ours)})
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		if ev.Found != c.found || (c.other == "") != (ev.Other == "") || !strings.Contains(ev.Other, c.other) {
			t.Errorf("%s: found %v other %q; want %v %q (%s)", c.key, ev.Found, ev.Other, c.found, c.other, ev.Detail)
		}
	}
	_, err = sb.Provider("sandbox", false).Dispatch(ctx, provider.Request{DownstreamKey: "dk-new", Tool: "send_notification", Args: []byte(ours)})
	if err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a delivery into the read-only file: %v; want SQLite's read-only refusal", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols, rows int
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM pragma_table_info('deliveries')), (SELECT COUNT(*) FROM deliveries)`).Scan(&cols, &rows); err != nil || cols != 6 || rows != 3 {
		t.Errorf("the file holds %d columns, %d deliveries (%v); want it unchanged: 6, 3", cols, rows, err)
	}
}

// An old file opened by this build is upgraded once, in place: its file
// id, ties and deliveries stay as they were, the mark a ledger recorded of
// it still holds (a mark of a delivery made since is the one a build
// before this one computes too), and its deliveries from before still
// count by key alone when they could have come through `sandbox serve`.
// Several processes opening it at once (each then delivering, in process
// and over HTTP) upgrade it once between them; opened again, nothing
// changes.
func TestAnOldSandboxFileIsUpgradedOnceAndKeepsWhatItHeld(t *testing.T) {
	const children = 3
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			ctx := context.Background()
			path := oldFile(t, []oldRow{
				{"sandbox-idem", "dk-old", "sandbox-idem", `{"to":"b@example.com"}`, 1700000000000},
				{"sandbox", "dk-old", "send_notification", `{"to":"a@example.com"}`, 1700000000001},
			})
			// The mark a ledger recorded of the file (store.FileMark), made
			// by a build before this one: its newest delivery.
			recorded := sandbox.Mark{Seq: 2, Check: "9d8b8b2f5385692957cfbf6a33dc07b4"}

			var wg sync.WaitGroup
			outs := make([][]byte, children)
			errs := make([]error, children+1)
			for i := range children {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxUpgradeChild$", "-test.v", "-test.count=1")
					cmd.Env = append(os.Environ(), "SANDBOX_UPGRADE_CHILD="+path, fmt.Sprintf("SANDBOX_UPGRADE_CHILD_N=%d", i))
					outs[i], errs[i] = cmd.CombinedOutput()
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sb, err := sandbox.Open(path)
				if err == nil {
					err = sb.Close()
				}
				errs[children] = err
			}()
			wg.Wait()
			for i := range children {
				if errs[i] != nil || !strings.Contains(string(outs[i]), "--- PASS: TestSandboxUpgradeChild") {
					t.Fatalf("child %d: %v\n%s", i, errs[i], outs[i])
				}
			}
			if errs[children] != nil {
				t.Fatalf("opening alongside the children: %v", errs[children])
			}

			for range 2 { // opened again: nothing changes
				sb, err := sandbox.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				if sb.FileID() != oldFileID {
					t.Errorf("file id %s; want the one it had, %s", sb.FileID(), oldFileID)
				}
				if ok, err := sb.Serves(ctx, "aaaa", "sandbox-idem"); err != nil || !ok {
					t.Errorf("Serves(aaaa, sandbox-idem) = %v, %v; want the tie it had", ok, err)
				}
				if ok, err := sb.Holds(ctx, recorded); err != nil || !ok {
					t.Errorf("Holds(the mark recorded before the upgrade) = %v, %v; want true", ok, err)
				}
				if n := deliveries(t, sb, ""); n != 2+2*children {
					t.Errorf("%d deliveries; want %d", n, 2+2*children)
				}
				// The delivery from before that a serve could have made
				// still counts by key alone; the one of another tool is
				// still compared.
				q := sb.Provider("sandbox-idem", true).(provider.QueryLooker)
				if ev, err := q.LookupQuery(ctx, provider.Query{DownstreamKey: "dk-old", Tool: "sandbox-idem", Args: []byte(`{"to":"a@example.com"}`)}); err != nil || !ev.Found || ev.Ref != "sbx_1" {
					t.Errorf("the old serve-or-same-named delivery: %+v %v; want has it, sbx_1", ev, err)
				}
				// Each child's deliveries: its same-named tool's is compared,
				// its serve's is not.
				for i := range children {
					key := fmt.Sprintf("dk-child-%d", i)
					ev, err := q.LookupQuery(ctx, provider.Query{DownstreamKey: key, Tool: "sandbox-idem", Args: []byte(`{"to":"a@example.com"}`)})
					if err != nil || ev.Found || ev.Other == "" {
						t.Errorf("%s, a same-named tool's delivery of other arguments: %+v %v; want another request", key, ev, err)
					}
					ev, err = q.LookupQuery(ctx, provider.Query{DownstreamKey: key + "-served", Tool: "sandbox-idem", Args: []byte(`{"to":"a@example.com"}`)})
					if err != nil || !ev.Found {
						t.Errorf("%s-served: %+v %v; want has it", key, ev, err)
					}
				}
				sb.Close()
			}
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var cols int
			if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('deliveries')`).Scan(&cols); err != nil || cols != 7 {
				t.Errorf("deliveries has %d columns, %v; want the six it had and one more", cols, err)
			}
		})
	}
}

// TestSandboxUpgradeChild is a process of its own opening an old file
// alongside others (TestAnOldSandboxFileIsUpgradedOnceAndKeepsWhatItHeld):
// it delivers once in process (a tool named like its provider) and once
// through `sandbox serve`.
func TestSandboxUpgradeChild(t *testing.T) {
	path := os.Getenv("SANDBOX_UPGRADE_CHILD")
	if path == "" {
		t.Skip("runs only as a child of TestAnOldSandboxFileIsUpgradedOnceAndKeepsWhatItHeld")
	}
	key := "dk-child-" + os.Getenv("SANDBOX_UPGRADE_CHILD_N")
	sb, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	resp, err := sb.Provider("sandbox-idem", true).Dispatch(context.Background(), provider.Request{DownstreamKey: key, Tool: "sandbox-idem", Args: []byte(`{"to":"b@example.com"}`)})
	if err != nil || resp.Status != provider.Applied {
		t.Fatalf("%+v %v", resp, err)
	}
	srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, sandbox.Fault{}).Handler())
	defer srv.Close()
	serve(t, srv.URL, "sandbox-idem", key+"-served", `{"to":"b@example.com"}`)
}

// The check of a delivery's mark is over what builds before this one
// check (provider, key, tool, arguments, time), whichever way it came: a
// ledger that records a mark with one build and checks it with another
// agrees with itself.
func TestAMarkIsTheSameForEveryBuild(t *testing.T) {
	ctx := context.Background()
	for _, start := range []string{"new-file", "old-file"} {
		t.Run(start, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "provider.db")
			if start == "old-file" {
				path = oldFile(t, nil)
			}
			sb, err := sandbox.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			at := time.UnixMilli(1700000002000)
			sb.SetClock(func() time.Time { return at })
			if _, err := sb.Provider("sandbox-idem", true).Dispatch(ctx, provider.Request{DownstreamKey: "dk-new", Tool: "sandbox-idem", Args: []byte(`{"to":"b@example.com"}`)}); err != nil {
				t.Fatal(err)
			}
			if m, err := sb.Mark(ctx); err != nil || m != (sandbox.Mark{Seq: 1, Check: "506ab2ae3cf334be1a42dcf9e38a1389"}) {
				t.Errorf("mark of an in-process delivery %+v, %v; want the check of its five columns", m, err)
			}
			at = time.UnixMilli(1700000003000)
			srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, sandbox.Fault{}).Handler())
			defer srv.Close()
			serve(t, srv.URL, "sandbox-idem", "dk-served", `{"to":"b@example.com"}`)
			if m, err := sb.Mark(ctx); err != nil || m != (sandbox.Mark{Seq: 2, Check: "7ed92e402fbf2f13253c96eac2a9ac3b"}) {
				t.Errorf("mark of a serve delivery %+v, %v; want the check of its five columns", m, err)
			}
		})
	}
}
