// Package pgtest gives tests a PostgreSQL ledger of their own: a fresh
// schema in the database named by $RETRYSAFE_TEST_POSTGRES, dropped when
// the test ends. Without that variable the test is skipped; with it set
// but the server unusable, the test fails — CI sets it, and a PostgreSQL
// half that silently skipped would prove nothing.
//
// .ci/postgres.sh start DIR starts a throwaway server and prints the URL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retrysafe/retrysafe/store/postgres"
)

// Env names the variable holding the test server's URL.
const Env = "RETRYSAFE_TEST_POSTGRES"

// BaseURL returns the test server's URL, skipping the test when none is
// configured and failing it when the server does not answer.
func BaseURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(Env)
	if raw == "" {
		t.Skip(Env + " is not set; start a server with .ci/postgres.sh start DIR and export the URL it prints")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", Env, err)
	}
	conn.Close(ctx)
	return raw
}

// URL returns the URL of a new, empty schema for one test (not created:
// Open with Create makes it), dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	u, err := postgres.WithSchema(BaseURL(t), NewSchemaName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := postgres.DropSchema(ctx, u); err != nil {
			t.Errorf("drop the test schema: %v", err)
		}
	})
	return u
}

// NewSchemaName is a schema name no other test uses.
func NewSchemaName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "t_" + hex.EncodeToString(b)
}

// Exec runs one statement on the database at raw from a connection of its
// own.
func Exec(t testing.TB, raw, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
