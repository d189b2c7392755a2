package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// packageDir is where go test runs this package's tests: the source
// directory, which no test may leave a file in.
var packageDir, _ = os.Getwd()

// pgURL is a PostgreSQL ledger of its own for one test (pgtest.URL). A
// command that opens such a ledger's sandbox provider without
// --provider-db makes SCHEMA.provider.db in the current directory
// (ledger.ProviderPath) — for a test, the package's source directory,
// where t_<hex>.provider.db files piled up. The test fails if it left one
// there: pass --provider-db with a file in t.TempDir() (or run in one).
func pgURL(t *testing.T) string {
	t.Helper()
	u := pgtest.URL(t)
	left := filepath.Join(packageDir, ledger.ProviderPath(u))
	t.Cleanup(func() {
		if _, err := os.Stat(left); err != nil {
			return
		}
		t.Errorf("the test left its ledger's sandbox file %s in the package directory: give its commands --provider-db in t.TempDir()", filepath.Base(left))
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(left + suffix)
		}
	})
	return u
}
