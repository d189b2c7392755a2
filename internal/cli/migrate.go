package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// migrated is what `retrysafe migrate --json` prints.
type migrated struct {
	Ledger   string `json:"ledger"`
	From     int    `json:"from"`
	To       int    `json:"to"`
	Migrated bool   `json:"migrated"`
}

// runMigrate brings an existing ledger's schema up to this build's and
// says from which version to which. Every writable open does the same
// on its way; this command does only that, for the read commands (which
// open read-only and refuse an older ledger, naming this command) and for
// a PostgreSQL schema whose workers' role may not change it (its owner
// runs this once). It creates no ledger.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", stderr)
	db := fs.String("db", defaultDB(), dbUsage)
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	m := migrated{From: sqlite.SchemaVersion()}
	if postgres.IsURL(*db) {
		m.From = postgres.SchemaVersion()
	}
	m.To = m.From
	st, err := ledger.OpenStore(*db, store.Options{HostClock: hostClock(ctx), OnMigrate: func(from, to int) {
		m.From, m.To, m.Migrated = from, to, true
	}})
	if err != nil {
		return fail(stderr, err)
	}
	m.Ledger = st.Path()
	if err := st.Close(); err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, m)
	}
	if m.Migrated {
		fmt.Fprintf(stdout, "ledger %s migrated from schema version %d to %d\n", show(m.Ledger), m.From, m.To)
	} else {
		fmt.Fprintf(stdout, "ledger %s is at schema version %d: nothing to migrate\n", show(m.Ledger), m.To)
	}
	return exitOK
}
