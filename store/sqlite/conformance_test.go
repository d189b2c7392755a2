package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/retrysafe/retrysafe/store/storetest"
)

var driver = storetest.Driver{
	Name:        "sqlite",
	NewLocation: func(t testing.TB) string { return filepath.Join(t.TempDir(), "ledger.db") },
	Open:        OpenLedger,
	Exec: func(t testing.TB, path, q string) error {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Exec(q)
		return err
	},
}

func TestMain(m *testing.M) { storetest.Main(m, driver) }

func TestConformance(t *testing.T) { storetest.Run(t, driver) }
