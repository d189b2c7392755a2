package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// openLedger makes a new ledger in a fresh directory and closes it on cleanup.
func openLedger(t testing.TB, o store.Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	o.Create = true
	s, err := Open(path, o)
	if err != nil {
		t.Fatalf("Open new ledger: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// dirState is every file in dir with its bytes: what "nothing modified"
// is compared on.
func dirState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out
		}
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			out[e.Name()+"/"] = nil
			continue
		}
		if !e.Type().IsRegular() {
			out[e.Name()+" ("+e.Type().String()+")"] = nil // reading a FIFO would block
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameDir(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	var names []string
	for n := range before {
		names = append(names, n)
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			t.Errorf("file %s appeared", n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		a, ok := after[n]
		if !ok {
			t.Errorf("file %s disappeared", n)
		} else if !bytes.Equal(before[n], a) {
			t.Errorf("file %s was modified (%d → %d bytes)", n, len(before[n]), len(a))
		}
	}
}

// plainExec runs statements on path with the bare driver — no retrysafe
// code — and closes, which checkpoints the WAL into the main file.
func plainExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func oneLine(t *testing.T, err error) string {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "goroutine ") {
		t.Errorf("error is not one line: %q", msg)
	}
	return msg
}

func TestOpenRefusesWhatIsNotItsLedgerAndTouchesNothing(t *testing.T) {
	type setup func(t *testing.T, dir string) (path string)
	ledgerAt := func(version int) setup {
		return func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "ledger.db")
			s, err := Open(path, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			plainExec(t, path, fmt.Sprintf("PRAGMA user_version = %d", version))
			return path
		}
	}
	cases := []struct {
		name  string
		setup setup
		opts  store.Options
		code  model.Code
		says  string
	}{
		{"a ledger written by a newer schema", ledgerAt(99), store.Options{}, model.CodeUnsupported, "schema version 99; this retrysafe knows up to"},
		{"a newer ledger, opened read-only", ledgerAt(99), store.Options{ReadOnly: true}, model.CodeUnsupported, "upgrade retrysafe"},
		{"a text file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "notes.db")
			os.WriteFile(p, []byte("these are my notes, not a database\n"), 0o644)
			return p
		}, store.Options{Create: true}, model.CodeUnsupported, "is not a SQLite database"},
		{"a file shorter than a SQLite header", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "short.db")
			os.WriteFile(p, []byte("SQLite format 3\x00"), 0o644)
			return p
		}, store.Options{}, model.CodeUnsupported, "is not a SQLite database"},
		{"another program's SQLite database", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO customers (name) VALUES ('x')")
			return p
		}, store.Options{}, model.CodeUnsupported, "not a retrysafe ledger"},
		// Another application's SQLite files, whatever their user_version
		// or size: a schema version that happens to be 1 or 2 (the ledger's
		// own before it marked itself), a single page, an application id.
		{"another program's database at user_version 1", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "CREATE TABLE customers (id INTEGER PRIMARY KEY)", "PRAGMA user_version = 1")
			return p
		}, store.Options{Create: true}, model.CodeUnsupported, "not a retrysafe ledger"},
		{"another program's database at user_version 2", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "CREATE TABLE operations (id INTEGER PRIMARY KEY)", "PRAGMA user_version = 2")
			return p
		}, store.Options{}, model.CodeUnsupported, "not a retrysafe ledger"},
		{"another program's one-page database", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "PRAGMA user_version = 7")
			return p
		}, store.Options{}, model.CodeUnsupported, "not a retrysafe ledger"},
		{"a one-page database without a version", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "PRAGMA journal_mode = WAL")
			return p
		}, store.Options{}, model.CodeUnsupported, "not a retrysafe ledger"},
		{"another application's id", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			plainExec(t, p, "PRAGMA application_id = 1096045395", "PRAGMA user_version = 1")
			return p
		}, store.Options{}, model.CodeUnsupported, "application"},
		{"a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "ledger.db")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
			return p
		}, store.Options{Create: true}, model.CodeUnsupported, "not a regular file"},
		{"a missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "no-such-dir", "ledger.db")
		}, store.Options{Create: true}, model.CodeUnavailable, "does not exist"},
		{"a missing file without create", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "absent.db")
		}, store.Options{}, model.CodeNotFound, "no ledger at"},
		{"a missing file, read-only even with create", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "absent.db")
		}, store.Options{Create: true, ReadOnly: true}, model.CodeNotFound, "no ledger at"},
		{"a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "ledger.db")
			os.Mkdir(p, 0o755)
			return p
		}, store.Options{Create: true}, model.CodeUnavailable, "it is a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before := dirState(t, dir)
			s, err := Open(path, c.opts)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted it")
			}
			if model.CodeOf(err) != c.code {
				t.Errorf("code %q, want %q (%v)", model.CodeOf(err), c.code, err)
			}
			if msg := oneLine(t, err); !strings.Contains(msg, c.says) {
				t.Errorf("message %q does not say %q", msg, c.says)
			}
			sameDir(t, before, dirState(t, dir))
		})
	}
}

// Special files are refused before SQLite sees them: /dev/null would
// otherwise read as a new, empty file.
func TestOpenRefusesDevNull(t *testing.T) {
	for _, o := range []store.Options{{Create: true}, {}, {ReadOnly: true}} {
		s, err := Open("/dev/null", o)
		if err == nil {
			s.Close()
			t.Fatalf("Open(/dev/null, %+v) accepted it", o)
		}
		if !model.IsCode(err, model.CodeUnsupported) || !strings.Contains(oneLine(t, err), "not a regular file") {
			t.Errorf("Open(/dev/null, %+v) = %v", o, err)
		}
	}
}

// A ledger made before ledgers marked themselves (application_id 0, schema
// version 3) is still recognised by its tables, and marked when first
// opened for writing.
func TestOpenMarksALedgerMadeBeforeTheApplicationID(t *testing.T) {
	path := legacyLedger(t)
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatalf("an old ledger is refused: %v", err)
	}
	if id, err := s.LedgerID(context.Background()); err != nil || len(id) != 32 {
		t.Errorf("an old ledger, migrated: LedgerID = %q, %v; want a new id", id, err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var app, uv int64
	db.QueryRow("PRAGMA application_id").Scan(&app)
	db.QueryRow("PRAGMA user_version").Scan(&uv)
	if app != applicationID || uv != int64(SchemaVersion()) {
		t.Errorf("after opening: application_id %d, user_version %d; want %d, %d", app, uv, applicationID, SchemaVersion())
	}
}

// A newer schema version that sits in the WAL (not yet checkpointed into the
// header the precheck reads) is still refused, by the version SQL reports.
func TestOpenRefusesANewerSchemaStillInTheWAL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// Keep this connection open: the WAL is not checkpointed on close.
	if _, err := db.Exec("PRAGMA user_version = 42"); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(path)
	_, err = Open(path, store.Options{})
	if !model.IsCode(err, model.CodeUnsupported) || !strings.Contains(err.Error(), "schema version 42") {
		t.Fatalf("Open = %v; want refusal naming schema version 42", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(main, after) {
		t.Error("the main ledger file changed")
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 42 {
		t.Errorf("user_version is %d (%v) after the refused Open; want 42 untouched", v, err)
	}
}

func TestMigrationsAreNumberedAndTrackedBySchemaVersion(t *testing.T) {
	ms := migrations()
	if len(ms) == 0 || SchemaVersion() != len(ms) {
		t.Fatalf("SchemaVersion %d, %d migrations", SchemaVersion(), len(ms))
	}
	entries, _ := os.ReadDir("migrations")
	if len(entries) != len(ms) {
		t.Errorf("%d files in migrations/, %d embedded", len(entries), len(ms))
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %s is number %d at position %d", m.Name, m.Version, i+1)
		}
	}

	s, path := openLedger(t, store.Options{})
	ctx := context.Background()
	var uv int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&uv); err != nil || uv != SchemaVersion() {
		t.Fatalf("new ledger has user_version %d (%v), want %d", uv, err, SchemaVersion())
	}
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertOperation(&model.Operation{Tenant: "t", Key: "k", Tool: "create_support_task", PayloadVersion: 1,
			Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64), State: model.StateNotApplied})
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopening a current ledger runs no migration: nothing is rewritten,
	// the row is still there.
	before, _ := os.ReadFile(path)
	s2, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("reopening a current ledger rewrote its file")
	}
	if _, err := s2.Get(ctx, "t", "k"); err != nil {
		t.Errorf("row lost across reopen: %v", err)
	}
}

// An empty file (what `touch` or a crashed first open leaves) becomes a
// ledger at the newest version.
func TestOpenMigratesAnEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatalf("Open empty file: %v", err)
	}
	defer s.Close()
	var uv int
	s.r.QueryRow("PRAGMA user_version").Scan(&uv)
	if uv != SchemaVersion() {
		t.Errorf("user_version %d, want %d", uv, SchemaVersion())
	}
}

func TestReadOnlyStoreRefusesWritesAndWritesNothing(t *testing.T) {
	s, path := openLedger(t, store.Options{})
	s.Close()
	dir := filepath.Dir(path)
	before := dirState(t, dir)
	ro, err := Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if _, err := ro.Counts(context.Background(), ""); err != nil {
		t.Errorf("read-only ledger cannot be read: %v", err)
	}
	err = ro.WithTx(context.Background(), func(tx store.Tx) error { return nil })
	if !model.IsCode(err, model.CodeInvalid) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("WithTx on a read-only store = %v; want a read-only refusal", err)
	}
	ro.Close()
	after := dirState(t, dir)
	// A WAL reader needs the -shm index and an (empty) -wal beside the
	// ledger; neither holds data. The ledger itself must not move.
	for _, aux := range []string{"ledger.db-shm", "ledger.db-wal"} {
		if _, had := before[aux]; !had && len(after[aux]) == 0 {
			delete(after, aux)
		}
		if aux == "ledger.db-shm" {
			delete(before, aux)
			delete(after, aux)
		}
	}
	sameDir(t, before, after)
}

// A ledger file the process may not write must be refused for writing
// with one line (and nothing modified), and still open read-only. As root,
// file permissions do not stop us, so the check runs in a child process
// with the credentials of "nobody" — the kernel's refusal, not a mock.
func TestOpenRefusesAFileItMayNotWrite(t *testing.T) {
	if os.Getenv("STORE_RO_CHILD") != "" {
		t.Skip("parent-only test")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)
	if os.Geteuid() != 0 {
		checkReadOnlyFile(t, path)
		sameDir(t, before, dirState(t, dir))
		return
	}
	// Root: let "nobody" reach the file (and the test binary), then run the
	// checks as nobody.
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "store.test")
	testfiles.Copy(t, exe, bin)
	before = dirState(t, dir)
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyFileChild$", "-test.v")
	cmd.Env = append(os.Environ(), "STORE_RO_CHILD="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("running as root and cannot drop to uid 65534 (%v): no real read-only mechanism here", err)
		}
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestReadOnlyFileChild") {
		t.Fatalf("child did not run the checks:\n%s", out)
	}
	sameDir(t, before, dirState(t, dir))
}

func TestReadOnlyFileChild(t *testing.T) {
	path := os.Getenv("STORE_RO_CHILD")
	if path == "" {
		t.Skip("runs only as the child of TestOpenRefusesAFileItMayNotWrite")
	}
	checkReadOnlyFile(t, path)
}

func checkReadOnlyFile(t *testing.T, path string) {
	t.Helper()
	s, err := Open(path, store.Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open for writing accepted a file this process may not write")
	}
	if !model.IsCode(err, model.CodeUnavailable) || !strings.Contains(oneLine(t, err), "permission denied") {
		t.Errorf("Open = %q (%s); want a one-line permission refusal", err, model.CodeOf(err))
	}
	ro, err := Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a read-only file: %v", err)
	}
	defer ro.Close()
	if _, err := ro.Counts(context.Background(), ""); err != nil {
		t.Errorf("cannot read it read-only: %v", err)
	}
	// In a directory it may not write (the child, as nobody) it reads
	// the file as a snapshot, and says so.
	dirWritable := syscall.Access(filepath.Dir(path), 2 /* W_OK */) == nil
	if ro.Frozen() == dirWritable {
		t.Errorf("read-only Open: Frozen() = %v with the directory writable = %v", ro.Frozen(), dirWritable)
	}
}

// legacyLedger makes a ledger as a retrysafe before ledgers marked
// themselves left it (application_id 0, schema version legacyVersions): a
// new one with what came later dropped — ledger_meta (migration 7), the
// sort indexes (8) and provider_files (10, with its marks, 11). Its path.
func legacyLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	plainExec(t, path, "PRAGMA application_id = 0", fmt.Sprintf("PRAGMA user_version = %d", legacyVersions), "DROP TABLE ledger_meta",
		"DROP INDEX operations_tool_id", "DROP INDEX operations_provider_id", "DROP TABLE provider_files",
		"DROP INDEX operations_supersedes", "DROP INDEX operations_superseded_by", "DROP INDEX tombstones_forget")
	return path
}
