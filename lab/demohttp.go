package lab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// The demo's background reaches its sandbox providers the way the lab's
// external scenarios do: over HTTP, through the HTTP provider, to a
// `retrysafe sandbox serve` process over the demo's provider file. Two
// things the in-process sandbox did for it travel as the sandbox server's
// own request headers: the played clock (sandbox.TimeHeader, so the
// provider's records are dated on the ledger's clock) and each call's
// fault (sandbox.FaultHeader, so the plan's mix of outcomes is the same).

// demoTimeout is each HTTP request's bound, as in the lab's config.
const demoTimeout = 5 * time.Second

// demoFaultKey carries a dispatch's fault header value to the transport.
type demoFaultKey struct{}

// demoTransport adds the played clock and the call's fault to every
// delivery request, and counts them.
type demoTransport struct {
	base       http.RoundTripper
	clock      func() time.Time
	dispatches atomic.Int64
}

func (t *demoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set(sandbox.TimeHeader, t.clock().UTC().Format(time.RFC3339Nano))
	if f, _ := req.Context().Value(demoFaultKey{}).(string); f != "" {
		req.Header.Set(sandbox.FaultHeader, f)
	}
	t.dispatches.Add(1)
	return t.base.RoundTrip(req)
}

// demoProvider is an HTTP provider that hands each dispatch's sandbox
// fault switches to the transport.
type demoProvider struct {
	*httpapi.Provider
}

// Identity is where the claims it makes record their requests went: the
// demo's sandbox file, which its HTTP requests reach through the sandbox
// server, and which the built-in config's sandbox provider reads and sends
// to directly. Recorded as the HTTP server's address instead (a port of
// the build that is gone), every later lookup through the built-in config
// would be "asked elsewhere", and its "has nothing" would say nothing.
func (p demoProvider) Identity() provider.Identity { return sandbox.Identity() }

func (p demoProvider) Dispatch(ctx context.Context, req provider.Request) (provider.Response, error) {
	f, err := faultHeader(req.Faults)
	if err != nil {
		return provider.Response{}, err
	}
	if f != "" {
		ctx = context.WithValue(ctx, demoFaultKey{}, f)
	}
	return p.Provider.Dispatch(ctx, req)
}

// faultHeader is the server's fault for the in-process switches the plan
// sets, one at a time: a rejection (422), a refusal before accepting (503,
// which the demo's providers classify not_applied), a reply lost after the
// delivery (the connection dropped), and a provider too slow to take the
// request (it stalls past the caller's deadline and drops it).
func faultHeader(f provider.Faults) (string, error) {
	var out []string
	if f.Reject {
		out = append(out, string(sandbox.FaultReject))
	}
	if f.FailBefore {
		out = append(out, string(sandbox.FaultFailBefore))
	}
	if f.LoseReply {
		out = append(out, string(sandbox.FaultDropAfterApply))
	}
	if f.Delay > 0 {
		out = append(out, fmt.Sprintf("%s=%s", sandbox.FaultStall, f.Delay))
	}
	switch len(out) {
	case 0:
		return "", nil
	case 1:
		return out[0], nil
	}
	return "", fmt.Errorf("demo: one fault per call, got %v", out)
}

// demoProviders are the built-in registry's sandbox providers reached over
// HTTP at the server srv, on the demo's clock.
func demoProviders(srv *sandboxServer, clock func() time.Time) (provider.Registry, *demoTransport, error) {
	tr := &demoTransport{clock: clock, base: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: demoTimeout}).DialContext,
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
	}}
	reg := provider.Registry{}
	for _, p := range []struct {
		name    string
		honours bool
	}{{"sandbox", false}, {"sandbox-idem", true}} {
		base := "http://" + srv.addr + "/v1/" + p.name + "/deliveries"
		hp, err := httpapi.New(httpapi.Config{Name: p.name, HonoursKeys: p.honours, Timeout: demoTimeout,
			Dispatch:  httpapi.Endpoint{URL: base, RefPointer: "/id"},
			Lookup:    &httpapi.Endpoint{URL: base + "/{downstream_key}", RefPointer: "/id"},
			Classify:  map[int]httpapi.Class{http.StatusServiceUnavailable: httpapi.NotApplied},
			Transport: tr})
		if err != nil {
			return nil, nil, err
		}
		reg[p.name] = demoProvider{hp}
	}
	return reg, tr, nil
}

// workerConfig writes a config for one worker process the demo starts: the
// lab's HTTP providers, dating their deliveries at the played moment the
// worker starts (its --clock-offset is read at the same moment).
func (srv *sandboxServer) workerConfig(at time.Time) (string, error) {
	f, err := os.CreateTemp(srv.dir, "demo-worker-*.toml")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(labConfigWith(srv.addr, map[string]string{sandbox.TimeHeader: at.UTC().Format(time.RFC3339Nano)}))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return filepath.Clean(name), err
}
