package reconcile_test

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An HTTP provider's configured timeout counts toward the grace after a
// request (its server may still apply one the client stopped waiting
// for), never below the default: a 90 s timeout gives 90 s, a 5 s one the
// default 30 s.
func TestTheGraceAfterARequestCountsTheHTTPProvidersTimeout(t *testing.T) {
	for _, c := range []struct {
		timeout, want time.Duration
	}{
		{90 * time.Second, 90 * time.Second},
		{5 * time.Second, reconcile.DefaultDispatchGrace},
	} {
		p, err := httpapi.New(httpapi.Config{Name: "mailer", Timeout: c.timeout,
			Dispatch: httpapi.Endpoint{Method: "POST", URL: "http://127.0.0.1:1/send"}})
		if err != nil {
			t.Fatal(err)
		}
		svc := &reconcile.Service{Providers: provider.Registry{"mailer": p}}
		if got := svc.DispatchGrace("mailer"); got != c.want {
			t.Errorf("timeout %v: grace %v, want %v", c.timeout, got, c.want)
		}
	}
}
