package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
)

// runGen builds a large ledger for the console's benchmarks: `retrysafe gen
// --db FILE --ops N [--tenants T]`. It goes through the call path in bulk
// (many calls per transaction, synchronous=OFF: the file is throw-away), so
// the counts, indexes and invariants are the ones real traffic leaves. On a
// postgres:// URL it generates the same rows on a scratch SQLite file and
// copies them into the (empty) schema with COPY; the sandbox file
// (SCHEMA.provider.db) is tied to the schema's ledger, which records it,
// so its checks and triage get the generated history's answers.
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("gen", stderr)
	db := fs.String("db", "", "ledger file to create (must not exist yet), or a postgres:// URL of an empty schema")
	ops := fs.Int("ops", 1_000_000, "operations to create")
	tenants := fs.Int("tenants", 20, "spread over this many tenants")
	seed := fs.Uint64("seed", 1, "the same seed builds the same mix")
	batch := fs.Int("batch", 5000, "calls per transaction")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case *db == "":
		return fail(stderr, model.Errorf(model.CodeInvalid, "--db is required (a new file)"))
	case *ops < 1 || *ops > 50_000_000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--ops must be between 1 and 50,000,000"))
	case *tenants < 1 || *tenants > 10_000:
		return fail(stderr, model.Errorf(model.CodeInvalid, "--tenants must be between 1 and 10,000"))
	}
	// A generator never adds to an existing ledger: its numbers would lie.
	where, providerDB := *db, ""
	var pg *postgres.Store
	var pl *ledger.Ledger // the PostgreSQL ledger, with its sandbox provider file
	if postgres.IsURL(*db) {
		// PostgreSQL: the rows are generated on a scratch SQLite file through
		// the same call path, then copied over with COPY (a statement per
		// round trip made a million operations take 40 minutes).
		var err error
		if pg, err = postgres.Open(*db, store.Options{Create: true, Durability: store.Fast}); err != nil {
			return fail(stderr, err)
		}
		defer pg.Close()
		if c, err := pg.Counts(ctx, ""); err != nil {
			return fail(stderr, err)
		} else if c.Total > 0 {
			return fail(stderr, model.Errorf(model.CodeInvalid, "%s holds %d operations; gen writes a new ledger (choose an empty schema with search_path=NAME)", pg.Path(), c.Total))
		}
		dir, err := os.MkdirTemp("", "retrysafe-gen-")
		if err != nil {
			return fail(stderr, model.Wrap(model.CodeUnavailable, err, "cannot make a scratch directory: %v", err))
		}
		defer os.RemoveAll(dir)
		where, providerDB = filepath.Join(dir, "gen.db"), providerPath(*db)
		// The sandbox file is the PostgreSQL ledger's: opened to dispatch
		// (nothing is sent through it here), which ties the file to it and
		// records the file's id in it, under every guard a call's opening
		// has — before it holds an operation, as a ledger's first call
		// does. The scratch ledger sends the generated history's real
		// calls through the same file; Load then moves that history here.
		if pl, err = openLedger(ctx, *db, config.Default(), opening{providerDB: providerDB, store: store.Options{Durability: store.Fast}, use: ledger.Dispatching}); err != nil {
			return fail(stderr, err)
		}
		defer pl.Close()
	} else if _, err := os.Stat(*db); err == nil {
		return fail(stderr, model.Errorf(model.CodeInvalid, "%s exists; gen writes a new ledger (remove it first)", *db))
	}
	l, err := openLedger(context.Background(), where, config.Default(), opening{providerDB: providerDB, store: store.Options{Create: true, Durability: store.Fast}, use: ledger.Dispatching})
	if err != nil {
		return fail(stderr, err)
	}
	defer l.Close()
	start := time.Now()
	last := time.Time{}
	progress := func(done, total int) {
		if *quiet || time.Since(last) < time.Second && done < total {
			return
		}
		last = time.Now()
		rate := float64(done) / time.Since(start).Seconds()
		fmt.Fprintf(stderr, "\r  %s / %s operations  (%.0f/s)   ", genCount(done), genCount(total), rate)
	}
	rep, err := l.Service().Bulk(ctx, reconcile.BulkSpec{Ops: *ops, Tenants: *tenants, Seed: *seed, Batch: *batch}, progress)
	if !*quiet {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return fail(stderr, err)
	}
	name := *db
	var load *postgres.LoadReport
	if pg != nil {
		src, ok := l.Store().(postgres.TableSource)
		if !ok {
			return fail(stderr, model.Errorf(model.CodeInternal, "gen: the scratch ledger cannot be read back"))
		}
		if !*quiet {
			fmt.Fprintf(stderr, "  copying into %s\n", pg.Path())
		}
		marks, err := genProviderMarks(ctx, l.Store(), pl.Store())
		if err != nil {
			return fail(stderr, err)
		}
		lr, err := pg.Load(ctx, src)
		if err != nil {
			return fail(stderr, err)
		}
		// How far the file went while the scratch ledger sent through it:
		// a later restore of an older copy of the file is told apart.
		if err := pl.Store().WithTx(ctx, func(tx store.Tx) error {
			for _, m := range marks {
				if _, err := tx.MarkProviderFile(m.name, m.fileID, m.mark); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fail(stderr, err)
		}
		load, name = &lr, pg.Path()
		rep.Elapsed = time.Since(start)
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			reconcile.BulkReport
			Load *postgres.LoadReport `json:"load,omitempty"`
		}{rep, load})
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	fmt.Fprintf(stdout, "generated %s: %s operations, %s attempts, %d decisions across %d tenants in %s\n",
		show(name), genCount(rep.Operations), genCount(rep.Attempts), rep.Decisions, *tenants, rep.Elapsed.Round(100*time.Millisecond))
	if load != nil {
		fmt.Fprintf(stdout, "  (copied into PostgreSQL in %s, VACUUM ANALYZE %s)\n", load.Copy.Round(100*time.Millisecond), load.Analyze.Round(100*time.Millisecond))
	}
	for _, st := range model.AllStates {
		if n := rep.ByState[string(st)]; n > 0 {
			fmt.Fprintf(stdout, "  %-12s %s\n", st, genCount(n))
		}
	}
	return exitOK
}

// genCount renders n with thousands separators.
func genCount(n int) string {
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// genMark is how far the scratch ledger saw its sandbox file go for one
// provider name.
type genMark struct {
	name, fileID string
	mark         store.FileMark
}

// genProviderMarks reads the scratch ledger's record of the file it sent
// through, per sandbox provider name, and checks it is the file the
// PostgreSQL ledger recorded: the generated history's deliveries are in
// the scratch ledger's file, and the loaded ledger must never take another
// for it (its "has nothing" would prove nothing).
func genProviderMarks(ctx context.Context, scratch, target store.Reader) ([]genMark, error) {
	var out []genMark
	for _, p := range config.Default().Providers {
		if p.Kind != config.KindSandbox {
			continue
		}
		fileID, mark, err := scratch.ProviderFileMark(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		recorded, err := target.ProviderFile(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		if fileID == "" {
			continue
		}
		if recorded != fileID {
			return nil, model.Errorf(model.CodeUnavailable, "gen: the sandbox provider's file changed while the ledger was generated (file id %s, then %s): nothing was copied; run gen again", recorded, fileID)
		}
		out = append(out, genMark{name: p.Name, fileID: fileID, mark: mark})
	}
	return out, nil
}
