package postgres_test

import (
	"testing"

	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
	"github.com/retrysafe/retrysafe/store/storetest"
)

var driver = storetest.Driver{
	Name:        "postgres",
	NewLocation: func(t testing.TB) string { return pgtest.URL(t) },
	Open:        postgres.OpenLedger,
	Exec:        pgtest.Exec,
}

func TestMain(m *testing.M) { storetest.Main(m, driver) }

func TestConformance(t *testing.T) { storetest.Run(t, driver) }
