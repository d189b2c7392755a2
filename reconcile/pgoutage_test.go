package reconcile_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/postgres/pgtest"
)

// PostgreSQL's connections die right after a provider that ignores
// downstream keys took the request, before its answer is written: the
// outage is busy ("retry later") now, and a call with retries must still
// stop at unknown — never re-run the call, which would send it again once
// the lease ended. The effect is delivered once, whatever the call said.
func TestAPostgreSQLOutageAfterTheDispatchIsUnknownNeverARetry(t *testing.T) {
	// The outage is this ledger's connections' alone, told apart by their
	// application_name: the tests of other packages, running meanwhile on
	// the same server, lost theirs too when every connection to the
	// database was ended (SQLSTATE 57P01 in store/postgres's conformance).
	app := "rs_outage_" + pgtest.NewSchemaName()
	u := pgtest.URL(t) + "&application_name=" + app
	st, err := postgres.Open(u, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "provider.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	svc := reconcile.New(st, config.Default().Tools, sb.Providers())
	// A retry after the lease would re-dispatch if the call were re-run; the
	// lease still outlasts the claim's commit on a loaded machine (at 50 ms
	// it sometimes ended first, and the claim rightly sent nothing).
	svc.Lease = time.Second
	killed := false
	svc.At = func(p reconcile.Point) {
		if p != reconcile.PointAfterDispatch || killed {
			return
		}
		killed = true
		// Every server process of this ledger but the killer's.
		if err := pgtest.Exec(t, u, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = '`+app+`' AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
	}
	req := model.Request{Tenant: "acme", Key: "outage-1", Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":"cfo@acme.example","body":"invoice"}`)}
	p := reconcile.DefaultPolicy()
	p.Deadline, p.BaseDelay, p.MaxDelay = 5*time.Second, 100*time.Millisecond, 200*time.Millisecond
	res, n, err := svc.CallWithRetry(context.Background(), req, reconcile.CallOptions{}, p)
	if !killed {
		t.Fatal("the dispatch point was never reached")
	}
	if res.Class != model.ClassUnknown && res.Class != model.ClassDone {
		t.Errorf("after the outage: class %s after %d attempts (%v, code %q): %s; want unknown (or done, if the answer was written)",
			res.Class, n, err, model.CodeOf(err), res.Message)
	}
	if res.Class == model.ClassUnknown && strings.Contains(res.Message, "retry later") {
		t.Errorf("the unknown call's message tells the caller to retry: %s", res.Message)
	}
	lid, err := st.LedgerID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d, err := sb.Deliveries(context.Background(), reconcile.DownstreamKey(lid, "acme", "outage-1")); err != nil || d != 1 {
		t.Fatalf("deliveries %d, %v; want exactly 1", d, err)
	}
	t.Logf("class %s after %d attempt(s), code %q: %s", res.Class, n, model.CodeOf(err), res.Message)
}
