package reconcile_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A provider looked up by its own reference ({provider_ref} in the lookup
// URL) is asked with the reference the operation recorded (here, as a late
// provider result records it); an operation with none cannot tell, and
// nothing is asked — ops check, the console's c and triage alike (Look).
func TestALookupByReferenceAsksWithTheRecordedReference(t *testing.T) {
	l := newLedger(t)
	unknownWithDelivery(t, l, "with-ref")
	unknownWithDelivery(t, l, "no-ref")
	ctx := context.Background()
	if err := l.st.WithTx(ctx, func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "with-ref")
		if err != nil {
			return err
		}
		op.ProviderRef = "ch_7"
		return tx.UpdateOperation(op, op.State, op.Version)
	}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path == "/charges/ch_7" {
			io.WriteString(w, `{"id":"ch_7","status":"succeeded"}`)
			return
		}
		w.WriteHeader(404)
	}))
	defer srv.Close()
	providers := provider.Registry{}
	for _, name := range []string{"sandbox", "sandbox-idem"} {
		p, err := httpapi.New(httpapi.Config{Name: name, Dispatch: httpapi.Endpoint{URL: srv.URL + "/charges"},
			Lookup: &httpapi.Endpoint{URL: srv.URL + "/charges/{provider_ref}", RefPointer: "/id"}})
		if err != nil {
			t.Fatal(err)
		}
		providers[name] = p
	}
	svc := reconcile.New(l.st, config.Default().Tools, providers)

	looked, err := svc.Look(ctx, l.op("acme", "with-ref"), "test")
	if err != nil || looked.Finding.Kind != model.FindingHasIt || looked.Finding.Ref != "ch_7" {
		t.Errorf("with a recorded reference: %+v, %v; want has it, ch_7", looked.Finding, err)
	}
	if _, ev, err := svc.Check(ctx, "acme", "with-ref"); err != nil || !ev.Found || ev.Ref != "ch_7" {
		t.Errorf("Check with a recorded reference: %+v, %v", ev, err)
	}
	if strings.Join(asked, ",") != "/charges/ch_7,/charges/ch_7" {
		t.Errorf("asked %v; want the recorded reference twice", asked)
	}
	asked = nil
	looked, err = svc.Look(ctx, l.op("acme", "no-ref"), "test")
	if err != nil || looked.Finding.Kind != model.FindingCannotTell || !strings.Contains(looked.Finding.Detail, "no reference is recorded") {
		t.Errorf("without a reference: %+v, %v; want cannot tell, saying why", looked.Finding, err)
	}
	if _, _, err := svc.Check(ctx, "acme", "no-ref"); err == nil || !strings.Contains(err.Error(), "cannot tell") {
		t.Errorf("Check without a reference: %v; want cannot tell", err)
	}
	if len(asked) != 0 {
		t.Errorf("asked %v without a reference; want nothing asked", asked)
	}
}
