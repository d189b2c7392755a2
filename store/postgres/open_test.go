package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

func TestOpenRefusesWhatIsNotItsLedgerAndTouchesNothing(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, url string)
		opts  store.Options
		code  model.Code
		says  string
	}{
		{"a ledger written by a newer schema", func(t *testing.T, url string) {
			s, err := postgres.Open(url, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			pgtest.Exec(t, url, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future.sql', 0)`)
		}, store.Options{}, model.CodeUnsupported, "schema version 99; this retrysafe knows up to"},
		{"another program's tables", func(t *testing.T, url string) {
			if err := pgtest.Exec(t, url, fmt.Sprintf(`CREATE SCHEMA %s; CREATE TABLE %s.customers (id int)`, postgres.SchemaOf(url), postgres.SchemaOf(url))); err != nil {
				t.Fatal(err)
			}
		}, store.Options{Create: true}, model.CodeUnsupported, "no retrysafe ledger"},
		{"a missing ledger without create", func(t *testing.T, url string) {}, store.Options{}, model.CodeNotFound, "no ledger at"},
		{"a missing ledger, read-only", func(t *testing.T, url string) {}, store.Options{ReadOnly: true, Create: true}, model.CodeNotFound, "no ledger at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := pgtest.URL(t)
			c.setup(t, url)
			before := schemaTables(t, url)
			_, err := postgres.Open(url, c.opts)
			if !model.IsCode(err, c.code) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Open: %v; want %s saying %q in one line", err, c.code, c.says)
			}
			if after := schemaTables(t, url); after != before {
				t.Errorf("tables before %q, after %q: a refused open changed the database", before, after)
			}
		})
	}
}

func schemaTables(t *testing.T, url string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(context.Background(), `SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, postgres.SchemaOf(url))
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(tables, ",")
}

// Two processes' worth of Opens at once on a new schema: the advisory lock
// lets one migrate; every one opens a complete ledger.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.URL(t)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			s, err := postgres.Open(url, store.Options{Create: true})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
	var n int
	s, _ := postgres.Open(url, store.Options{})
	defer s.Close()
	if err := postgres.QueryRow(context.Background(), s, `SELECT COUNT(*) FROM schema_migrations`, &n); err != nil || n != postgres.SchemaVersion() {
		t.Errorf("%d migrations recorded (%v); want %d, each once", n, err, postgres.SchemaVersion())
	}
}

func TestPathHasNoPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://ana:s3cret@db.example:5432/ledger?search_path=acme",
		"postgresql://ana@db.example/ledger?password=s3cret&sslmode=require",
		// The client key's passphrase (pgx's sslpassword) is a secret too:
		// the console's header and a copied ops command showed it.
		"postgres://ana@db.example/ledger?sslmode=verify-full&sslkey=/k.pem&sslpassword=s3cret",
	} {
		got := postgres.Redact(raw)
		if strings.Contains(got, "s3cret") || !strings.Contains(got, "ana@db.example") {
			t.Errorf("Redact(%q) = %q", raw, got)
		}
	}
	_, err := postgres.Open("postgres://ana:s3cret@127.0.0.1:1/ledger?connect_timeout=2", store.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !model.IsCode(err, model.CodeBusy) {
		t.Errorf("connecting to nothing: %v; want busy (an outage: retry later) without the password", err)
	}
}

// A database that does not exist is the caller's setup: the error says
// which database and that it does not exist (the server's own words), not
// only a SQLSTATE a person has to look up.
func TestOpenOfAMissingDatabaseSaysSo(t *testing.T) {
	u, err := url.Parse(pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_db_" + pgtest.NewSchemaName()
	q := u.Query()
	q.Set("search_path", "ledger")
	u.RawQuery = q.Encode()
	_, err = postgres.Open(u.String(), store.Options{Create: true})
	if !model.IsCode(err, model.CodeUnavailable) || !strings.Contains(err.Error(), `database "`+strings.TrimPrefix(u.Path, "/")+`" does not exist`) {
		t.Errorf("open of a missing database: %v; want unavailable, naming the database and saying it does not exist", err)
	}
}

// Errors are classed by SQLSTATE and by type, never by message text: the
// messages below are nonsense on purpose.
func TestErrorsAreClassedBySQLSTATE(t *testing.T) {
	cases := []struct {
		err  error
		code model.Code
	}{
		{&pgconn.PgError{Code: "40001", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "40P01", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "55P03", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "57014", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "23505", Message: "x"}, model.CodeConflict},
		{&pgconn.PgError{Code: "23514", Message: "x"}, model.CodeConflict},
		{&pgconn.PgError{Code: "23503", Message: "x"}, model.CodeConflict},
		// An outage is busy (retry later); a refused login or a database
		// that does not exist is the caller's setup: unavailable.
		{&pgconn.PgError{Code: "08006", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "57P01", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "53300", Message: "x"}, model.CodeBusy},
		{&pgconn.PgError{Code: "28P01", Message: "x"}, model.CodeUnavailable},
		{&pgconn.PgError{Code: "3D000", Message: "x"}, model.CodeUnavailable},
		// The server's disk full or failing is the machine, as SQLite's is:
		// internal (exit 1, retry later), not a refusal of the request.
		{&pgconn.PgError{Code: "53100", Message: "x"}, model.CodeInternal},
		{&pgconn.PgError{Code: "58030", Message: "x"}, model.CodeInternal},
		{&pgconn.PgError{Code: "22P05", Message: "x"}, model.CodeInvalid},
		{&pgconn.PgError{Code: "42601", Message: "deadlock detected"}, model.CodeInternal},
		// A connection that broke in the middle of a reply: an outage,
		// by type and errors.Is; the same words as text are not.
		{io.ErrUnexpectedEOF, model.CodeBusy},
		{fmt.Errorf("read: %w", io.EOF), model.CodeBusy},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, model.CodeBusy},
		{fmt.Errorf("write: %w", syscall.EPIPE), model.CodeBusy},
		{errors.New("unexpected EOF"), model.CodeInternal},
		{context.DeadlineExceeded, model.CodeBusy},
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "23505"}), model.CodeConflict},
		{errors.New("serialization failure"), model.CodeInternal},
	}
	for _, c := range cases {
		if got := model.CodeOf(postgres.Translate(c.err)); got != c.code {
			t.Errorf("%v: %s; want %s", c.err, got, c.code)
		}
	}
}

// The counts are deltas until folded (migration 8): concurrent writers'
// counts are exact before a fold and after it, a fold empties the deltas
// into state_counts, and a state change moves one count to another.
func TestCountDeltasFoldToTheSameCounts(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	postgres.NoAutoFold(s)
	ctx := context.Background()
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				errs <- s.WithTx(ctx, func(tx store.Tx) error {
					op := &model.Operation{Tenant: "t" + strconv.Itoa(w%2), Key: "k" + strconv.Itoa(w) + "-" + strconv.Itoa(i),
						Tool: "create_support_task", PayloadVersion: 1, Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64),
						State: model.StateUnknown}
					return tx.InsertOperation(op)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One operation moves from unknown to failed.
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		op, err := tx.GetOperation("t0", "k0-0")
		if err != nil {
			return err
		}
		from := op.State
		op.State, op.Receipt = model.StateFailed, []byte(`{"status":"failed"}`)
		return tx.UpdateOperation(op, from, op.Version)
	}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		all, err := s.Counts(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		one, err := s.Counts(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if all.Total != workers*each || all.ByState[model.StateUnknown] != workers*each-1 || all.ByState[model.StateFailed] != 1 ||
			one.Total != workers*each/2 || one.ByState[model.StateUnknown] != workers*each/2 {
			t.Errorf("%s: counts %+v, t1 %+v", when, all, one)
		}
		if tenants, err := s.Tenants(ctx); err != nil || strings.Join(tenants, ",") != "t0,t1" {
			t.Errorf("%s: tenants %v %v", when, tenants, err)
		}
	}
	var deltas, folded int
	if err := postgres.QueryRow(ctx, s, `SELECT COUNT(*) FROM state_count_deltas`, &deltas); err != nil || deltas == 0 {
		t.Fatalf("%d deltas before a fold (%v); want the triggers' rows", deltas, err)
	}
	check("before the fold")
	before, _ := s.Snapshot(ctx)
	if problems, err := s.Audit(ctx); err != nil || len(problems) > 0 { // folds first
		t.Fatalf("audit: %v %v", problems, err)
	}
	if err := postgres.QueryRow(ctx, s, `SELECT (SELECT COUNT(*) FROM state_count_deltas), (SELECT SUM(n) FROM state_counts)`, &deltas, &folded); err != nil {
		t.Fatal(err)
	}
	if deltas != 0 || folded != workers*each {
		t.Errorf("after the fold: %d deltas, %d counted in state_counts; want 0 and %d", deltas, folded, workers*each)
	}
	check("after the fold")
	if after, _ := s.Snapshot(ctx); after != before {
		t.Error("folding the counts changed the ledger's snapshot")
	}
}

// A process that writes and closes within the fold gap (one `retrysafe
// call`) folds what it wrote on its way out: deltas do not pile up where
// only short-lived processes write.
func TestCloseFoldsTheCountDeltas(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		s, err := postgres.Open(url, store.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WithTx(ctx, func(tx store.Tx) error {
			return tx.InsertOperation(&model.Operation{Tenant: "acme", Key: "k" + strconv.Itoa(i), Tool: "create_support_task",
				PayloadVersion: 1, Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64), State: model.StateUnknown})
		}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	s, err := postgres.Open(url, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var deltas, folded int
	if err := postgres.QueryRow(ctx, s, `SELECT (SELECT COUNT(*) FROM state_count_deltas), (SELECT COALESCE(SUM(n), 0) FROM state_counts)`, &deltas, &folded); err != nil {
		t.Fatal(err)
	}
	if deltas != 0 || folded != 3 {
		t.Errorf("after three short-lived writers: %d deltas, %d folded; want 0 and 3", deltas, folded)
	}
}

// The deltas table has no key, yet a publication that replicates deletes
// (logical replication of the ledger) does not stop the fold.
func TestFoldUnderAPublicationThatReplicatesDeletes(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	s, err := postgres.Open(url, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pub := pgx.Identifier{"rs_pub_" + postgres.SchemaOf(url)}.Sanitize()
	if err := postgres.Exec(ctx, s, `CREATE PUBLICATION `+pub+` FOR TABLE state_count_deltas WITH (publish = 'insert, delete')`); err != nil {
		t.Fatal(err)
	}
	defer postgres.Exec(context.Background(), s, `DROP PUBLICATION `+pub)
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		return tx.InsertOperation(&model.Operation{Tenant: "acme", Key: "k", Tool: "create_support_task",
			PayloadVersion: 1, Args: []byte(`{}`), Fingerprint: strings.Repeat("a", 64), State: model.StateUnknown})
	}); err != nil {
		t.Fatal(err)
	}
	if problems, err := s.Audit(ctx); err != nil || len(problems) > 0 { // folds first
		t.Fatalf("audit: %v %v", problems, err)
	}
	var deltas int
	if err := postgres.QueryRow(ctx, s, `SELECT COUNT(*) FROM state_count_deltas`, &deltas); err != nil || deltas != 0 {
		t.Errorf("%d deltas left after a fold under a publication (%v); want 0", deltas, err)
	}
}
