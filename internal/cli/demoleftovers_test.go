package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	return cmd.Process.Pid
}

// demoTarget is where a demo is built in the current directory (made a
// t.TempDir()): a file, or a PostgreSQL schema of its own.
type demoTarget struct {
	name string
	db   func(t *testing.T) string
	// building lists the demo's building leftovers of pid there: the
	// files (a PostgreSQL demo's provider file), and for PostgreSQL the
	// schema's name.
	leftovers func(t *testing.T, db string) (files []string, schemas []string)
}

func demoTargets() []demoTarget {
	return []demoTarget{
		{"sqlite", func(t *testing.T) string { return filepath.Join(mustGetwd(t), "demo.db") },
			func(t *testing.T, db string) ([]string, []string) {
				files, _ := filepath.Glob(filepath.Join(filepath.Dir(db), "*.building-*"))
				return files, nil
			}},
		{"postgres", func(t *testing.T) string {
			if os.Getenv("RETRYSAFE_TEST_POSTGRES") == "" {
				t.Skip("RETRYSAFE_TEST_POSTGRES not set")
			}
			return pgURL(t)
		}, func(t *testing.T, db string) ([]string, []string) {
			files, _ := filepath.Glob(filepath.Join(mustGetwd(t), "*_building_*"))
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, postgres.SchemaOf(db)+"_building_%")
			if err != nil {
				t.Fatal(err)
			}
			schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			return files, schemas
		}},
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// An interrupted demo build says it was interrupted (not "context
// deadline exceeded before the transaction finished") and leaves no
// half-built ledger, schema or provider file behind (M5).
func TestAnInterruptedDemoSaysSoAndLeavesNothing(t *testing.T) {
	for _, tc := range demoTargets() {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			db := tc.db(t)
			cmd := reexec.Command(t, asCLI, nil, "demo", "--no-console", "--db", db)
			pr, pw := io.Pipe()
			var errb bytes.Buffer
			cmd.Stderr = io.MultiWriter(&errb, pw)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					if strings.Contains(sc.Text(), "acme-support") { // the build is under way
						close(started)
						break
					}
				}
				io.Copy(io.Discard, pr)
			}()
			select {
			case <-started:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the demo did not start building: %s", errb.String())
			}
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
			pw.Close()
			errText := errb.String()
			if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(errText, "interrupted") || strings.Contains(errText, "deadline") {
				t.Errorf("interrupted demo: exit %d, want it to say it was interrupted:\n%s", code, errText)
			}
			if files, schemas := tc.leftovers(t, db); len(files)+len(schemas) > 0 {
				t.Errorf("left behind: files %v, schemas %v", files, schemas)
			}
		})
	}
}

// A demo build killed where it could not clean up (SIGKILL, a closed
// terminal) leaves its building ledger; the next run removes those whose
// process is gone — and only the demo's own building names of this
// target, never a live build's (M5). On PostgreSQL every command the demo
// prints names the provider file by its absolute path (M4).
func TestTheNextDemoRemovesAGoneBuildsLeftovers(t *testing.T) {
	for _, tc := range demoTargets() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			db := tc.db(t)
			gone, live := strconv.Itoa(deadPID(t)), strconv.Itoa(os.Getpid())
			var goneFiles, keepFiles []string
			var goneSchema, liveSchema string
			if tc.name == "sqlite" {
				for _, pid := range []string{gone, live} {
					base := filepath.Join(dir, "demo.building-"+pid+".db")
					fs := []string{base, base + "-wal", filepath.Join(dir, "demo.building-"+pid+".provider.db")}
					if pid == gone {
						goneFiles = fs
					} else {
						keepFiles = fs
					}
				}
				keepFiles = append(keepFiles, filepath.Join(dir, "other.building-"+gone+".db"))
			} else {
				s := postgres.SchemaOf(db)
				goneSchema, liveSchema = s+"_building_"+gone, s+"_building_"+live
				goneFiles = []string{filepath.Join(dir, goneSchema+".provider.db"), filepath.Join(dir, goneSchema+".provider.db-wal")}
				keepFiles = []string{filepath.Join(dir, liveSchema+".provider.db")}
				ctx := context.Background()
				conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				for _, n := range []string{goneSchema, liveSchema} {
					if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{n}.Sanitize()); err != nil {
						t.Fatal(err)
					}
				}
				t.Cleanup(func() {
					c, err := pgx.Connect(context.Background(), pgtest.BaseURL(t))
					if err == nil {
						c.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{liveSchema}.Sanitize()+`, `+pgx.Identifier{goneSchema}.Sanitize()+` CASCADE`)
						c.Close(context.Background())
					}
				})
			}
			for _, f := range append(append([]string{}, goneFiles...), keepFiles...) {
				if err := os.WriteFile(f, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, errText, code, _ := asBinary(t, "demo", "--no-console", "--db", db)
			if code != 0 {
				t.Fatalf("demo: exit %d\n%s", code, errText)
			}
			for _, f := range goneFiles {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("a gone build's %s is still there", filepath.Base(f))
				}
			}
			for _, f := range keepFiles {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%s, not a gone build's, was removed: %v", filepath.Base(f), err)
				}
			}
			if tc.name == "postgres" {
				_, schemas := tc.leftovers(t, db)
				if strings.Join(schemas, ",") != liveSchema {
					t.Errorf("building schemas after the demo: %v; want only the live build's %s", schemas, liveSchema)
				}
				want := "--provider-db " + filepath.Join(dir, postgres.SchemaOf(db)+".provider.db")
				if !strings.Contains(errText, want) {
					t.Errorf("the demo on PostgreSQL prints no command with %q:\n%s", want, errText)
				}
				_, errText, _, _ = asBinary(t, "demo", "--no-console", "--db", db)
				if !strings.Contains(errText, want) {
					t.Errorf("the demo reused prints no command with %q:\n%s", want, errText)
				}
			}
		})
	}
}
