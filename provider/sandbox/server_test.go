package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

// Every fault switch of the server, seen through the HTTP provider: what
// the caller is told, and what the sandbox really holds afterwards.
func TestServerFaultSwitches(t *testing.T) {
	cases := []struct {
		fault      string
		honours    bool
		status     provider.Status
		ambiguous  bool
		deliveries int
	}{
		{"", false, provider.Applied, false, 1},
		{"drop-after-apply", false, "", true, 1},
		{"reject", false, provider.Rejected, false, 0},
		{"5xx", false, "", true, 0},
		{"busy", false, provider.Busy, false, 0},
		{"delay=400ms", false, "", true, 1}, // the caller gives up at 200ms; the server applies anyway
		{"fail-before", false, "", true, 0}, // 503 from an API without honours_keys: unknown by default (a config may classify it not_applied)
		{"stall=400ms", false, "", true, 0}, // the caller gives up; the server drops it, nothing applied
	}
	for _, c := range cases {
		t.Run("fault "+c.fault, func(t *testing.T) {
			sb, err := sandbox.Open(filepath.Join(t.TempDir(), "sandbox.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			f, err := sandbox.ParseFault(c.fault)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, f).Handler())
			defer srv.Close()
			p, err := httpapi.New(httpapi.Config{Name: "s", Timeout: 200 * time.Millisecond,
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/sandbox/deliveries", RefPointer: "/id"},
				Lookup:   &httpapi.Endpoint{URL: srv.URL + "/v1/sandbox/deliveries/{downstream_key}", RefPointer: "/id"}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{"to":"x"}`)})
			if c.ambiguous != errors.Is(err, provider.ErrAmbiguous) || !c.ambiguous && resp.Status != c.status {
				t.Fatalf("got %+v, %v", resp, err)
			}
			time.Sleep(300 * time.Millisecond * time.Duration(boolInt(strings.HasPrefix(c.fault, "delay") || strings.HasPrefix(c.fault, "stall"))))
			n, _ := sb.Deliveries(context.Background(), "k1")
			// A delayed delivery lands when the server gets to it: on a
			// loaded machine later than 400 ms (waited for, up to 10 s).
			for deadline := time.Now().Add(10 * time.Second); n < c.deliveries && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				n, _ = sb.Deliveries(context.Background(), "k1")
			}
			if n != c.deliveries {
				t.Errorf("the sandbox holds %d deliveries, want %d", n, c.deliveries)
			}
			ev, err := p.Lookup(context.Background(), "k1")
			if err != nil || ev.Found != (c.deliveries > 0) {
				t.Errorf("lookup %+v, %v", ev, err)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A provider name that honours keys answers a repeated key with the first
// delivery; another name makes a second one.
func TestServerHonoursKeysByName(t *testing.T) {
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "sandbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	srv := httptest.NewServer(sandbox.NewServer(sb, []string{"sandbox-idem"}, sandbox.Fault{}).Handler())
	defer srv.Close()
	for _, c := range []struct {
		name string
		want [2]string
	}{{"sandbox-idem", [2]string{"sbx_1", "sbx_1"}}, {"sandbox", [2]string{"sbx_2", "sbx_3"}}} {
		name, want := c.name, c.want
		p, err := httpapi.New(httpapi.Config{Name: name, Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/" + name + "/deliveries", RefPointer: "/id"}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "same-" + name, Args: json.RawMessage(`{}`)})
			if err != nil || resp.Ref != want[i] {
				t.Errorf("%s dispatch %d: %+v %v; want %s", name, i+1, resp, err, want[i])
			}
		}
	}
}

// The sandbox-only headers: X-Sandbox-Fault picks one request's fault over
// the standing one, X-Sandbox-Time dates the delivery; a time that is not
// one, is later than the server's clock or too far back is refused and
// nothing is applied.
func TestServerHeadersPickTheFaultAndDateTheDelivery(t *testing.T) {
	past := time.Now().Add(-5 * time.Hour).Truncate(time.Millisecond)
	cases := []struct {
		name, fault, at string
		status          provider.Status
		ambiguous       bool
		deliveries      int
		stamped         time.Time
	}{
		{"standing fault", "", "", provider.Rejected, false, 0, time.Time{}},
		{"header fault none", "drop-after-apply", past.Format(time.RFC3339Nano), "", true, 1, past},
		{"header fail-before", "fail-before", "", provider.NotApplied, false, 0, time.Time{}},
		{"dated", "", past.Format(time.RFC3339Nano), provider.Rejected, false, 0, time.Time{}},
		{"not a time", "drop-after-apply", "yesterday", provider.Rejected, false, 0, time.Time{}},
		{"in the future", "drop-after-apply", time.Now().Add(time.Hour).Format(time.RFC3339Nano), provider.Rejected, false, 0, time.Time{}},
		{"too far back", "drop-after-apply", time.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339Nano), provider.Rejected, false, 0, time.Time{}},
		{"unknown fault", "explode", "", provider.Rejected, false, 0, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb, err := sandbox.Open(filepath.Join(t.TempDir(), "sandbox.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			srv := httptest.NewServer(sandbox.NewServer(sb, nil, sandbox.Fault{Kind: sandbox.FaultReject}).Handler())
			defer srv.Close()
			h := map[string]string{}
			if c.fault != "" {
				h[sandbox.FaultHeader] = c.fault
			}
			if c.at != "" {
				h[sandbox.TimeHeader] = c.at
			}
			p, err := httpapi.New(httpapi.Config{Name: "s", Timeout: time.Second,
				Classify: map[int]httpapi.Class{503: httpapi.NotApplied},
				Dispatch: httpapi.Endpoint{URL: srv.URL + "/v1/sandbox/deliveries", RefPointer: "/id", Headers: h},
				Lookup:   &httpapi.Endpoint{URL: srv.URL + "/v1/sandbox/deliveries/{downstream_key}", RefPointer: "/id"}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(context.Background(), provider.Request{DownstreamKey: "k1", Args: json.RawMessage(`{"to":"x"}`)})
			if c.ambiguous != errors.Is(err, provider.ErrAmbiguous) || !c.ambiguous && resp.Status != c.status {
				t.Fatalf("got %+v, %v", resp, err)
			}
			if n, _ := sb.Deliveries(context.Background(), "k1"); n != c.deliveries {
				t.Fatalf("the sandbox holds %d deliveries, want %d", n, c.deliveries)
			}
			if c.deliveries > 0 {
				ev, err := sb.Provider("sandbox", false).Lookup(context.Background(), "k1")
				if err != nil || !ev.At.Equal(c.stamped) {
					t.Errorf("lookup %+v, %v: want the delivery stamped %s", ev, err, c.stamped)
				}
			}
		})
	}
}

// POST /_sandbox/faults answers how many dispatches the queued faults
// cover as a number, {"queued":1}, not the string "1" — a fault queued with
// "count": 6 covers six; DELETE answers {"queued":0}.
func TestServerFaultQueueCountIsANumber(t *testing.T) {
	sb, err := sandbox.Open(filepath.Join(t.TempDir(), "sandbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	srv := httptest.NewServer(sandbox.NewServer(sb, nil, sandbox.Fault{}).Handler())
	defer srv.Close()
	for _, c := range []struct {
		method, body string
		want         int
	}{
		{"POST", `{"fault":"reject"}`, 1},
		{"POST", `{"fault":"reject"}`, 2},
		{"POST", `{"fault":"delay=1ms","count":6}`, 8},
		{"DELETE", ``, 0},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+"/_sandbox/faults", strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if n, ok := v["queued"].(float64); err != nil || !ok || int(n) != c.want {
			t.Errorf("%s /_sandbox/faults = %v (%v); want {\"queued\":%d}", c.method, v, err, c.want)
		}
	}
}
