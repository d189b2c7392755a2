package sandbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
)

func openSandbox(t *testing.T) (*sandbox.Sandbox, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "provider.db")
	sb, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, path
}

func deliveries(t *testing.T, sb *sandbox.Sandbox, key string) int {
	t.Helper()
	n, err := sb.Deliveries(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func req(key string, f provider.Faults) provider.Request {
	return provider.Request{DownstreamKey: key, Tool: "send_notification", Args: []byte(`{"body":"hi","to":"a@example.com"}`), Faults: f}
}

func TestSandboxFaults(t *testing.T) {
	cases := []struct {
		name      string
		faults    provider.Faults
		status    provider.Status
		ambiguous bool
		effects   int
	}{
		{"no fault applies and answers", provider.Faults{}, provider.Applied, false, 1},
		{"lose reply applies, then the answer is lost", provider.Faults{LoseReply: true}, "", true, 1},
		{"fail before applies nothing, definitely", provider.Faults{FailBefore: true}, provider.NotApplied, false, 0},
		{"reject applies nothing, for good", provider.Faults{Reject: true}, provider.Rejected, false, 0},
		{"a delay inside the deadline still applies", provider.Faults{Delay: 5 * time.Millisecond}, provider.Applied, false, 1},
	}
	for _, name := range []string{"sandbox", "sandbox-idem"} {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				sb, _ := openSandbox(t)
				p := sb.Providers()[name]
				resp, err := p.Dispatch(context.Background(), req("dk-1", c.faults))
				if c.ambiguous {
					if !errors.Is(err, provider.ErrAmbiguous) {
						t.Fatalf("err = %v; want an ambiguous outcome", err)
					}
				} else if err != nil || resp.Status != c.status {
					t.Fatalf("Dispatch = %+v, %v; want %s", resp, err, c.status)
				}
				if got := deliveries(t, sb, "dk-1"); got != c.effects {
					t.Errorf("%d deliveries, want %d", got, c.effects)
				}
				if c.status == provider.Applied && !strings.HasPrefix(resp.Ref, "sbx_") {
					t.Errorf("applied without a provider reference: %+v", resp)
				}
			})
		}
	}
}

// A caller deadline shorter than the provider's delay: the caller sees an
// ambiguous outcome, and the sandbox applies nothing.
func TestSandboxDelayPastTheDeadlineIsAmbiguousAndAppliesNothing(t *testing.T) {
	sb, _ := openSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := sb.Providers()["sandbox"].Dispatch(ctx, req("dk", provider.Faults{Delay: time.Second}))
	if !errors.Is(err, provider.ErrAmbiguous) {
		t.Fatalf("err = %v; want ambiguous", err)
	}
	if n := deliveries(t, sb, "dk"); n != 0 {
		t.Errorf("%d deliveries after a dispatch that never reached the provider", n)
	}
}

func TestDownstreamKeysHonouredOrIgnored(t *testing.T) {
	sb, _ := openSandbox(t)
	ctx := context.Background()
	plain, idem := sb.Providers()["sandbox"], sb.Providers()["sandbox-idem"]
	if plain.HonoursKeys() || !idem.HonoursKeys() {
		t.Fatal("sandbox must ignore keys and sandbox-idem honour them")
	}
	// Ignoring: every dispatch is a new delivery, even under one key.
	r1, _ := plain.Dispatch(ctx, req("same", provider.Faults{}))
	r2, _ := plain.Dispatch(ctx, req("same", provider.Faults{}))
	if r1.Ref == r2.Ref || deliveries(t, sb, "same") != 2 {
		t.Errorf("sandbox: refs %s %s, %d deliveries; want two deliveries", r1.Ref, r2.Ref, deliveries(t, sb, "same"))
	}
	// Honouring: a repeated key returns the first delivery, whatever the
	// repeat would have met — a lost reply, a refusal — and never a second.
	first, err := idem.Dispatch(ctx, req("idem", provider.Faults{LoseReply: true}))
	if !errors.Is(err, provider.ErrAmbiguous) {
		t.Fatalf("first dispatch: %+v %v", first, err)
	}
	for _, f := range []provider.Faults{{}, {FailBefore: true}, {Reject: true}, {}} {
		r, err := idem.Dispatch(ctx, req("idem", f))
		if err != nil || r.Status != provider.Applied || r.Ref != "sbx_3" {
			t.Errorf("repeat with %+v = %+v, %v; want the first delivery sbx_3", f, r, err)
		}
	}
	if n := deliveries(t, sb, "idem"); n != 1 {
		t.Errorf("sandbox-idem holds %d deliveries under one key, want 1", n)
	}
	// A key the provider has not applied may still be refused.
	if r, _ := idem.Dispatch(ctx, req("fresh", provider.Faults{Reject: true})); r.Status != provider.Rejected {
		t.Errorf("reject on a fresh key = %+v", r)
	}
}

func TestLookupIsTheAuthoritativeStatusPathAndChangesNothing(t *testing.T) {
	sb, _ := openSandbox(t)
	ctx := context.Background()
	p := sb.Providers()["sandbox"]
	ev, err := p.Lookup(ctx, "nothing-here")
	if err != nil || ev.Found || ev.Effects != 0 || !strings.Contains(ev.Detail, "no delivery") {
		t.Errorf("lookup of an unknown key = %+v, %v", ev, err)
	}
	p.Dispatch(ctx, req("k", provider.Faults{LoseReply: true}))
	before := deliveries(t, sb, "")
	for i := 0; i < 3; i++ {
		ev, err = p.Lookup(ctx, "k")
	}
	if err != nil || !ev.Found || ev.Effects != 1 || ev.Ref != "sbx_1" || ev.Status != "delivered" || ev.At.IsZero() {
		t.Errorf("lookup after a lost reply = %+v, %v; want the delivery sbx_1", ev, err)
	}
	if deliveries(t, sb, "") != before {
		t.Error("Lookup changed the provider")
	}
	// The two providers share a file but not their deliveries.
	if ev, _ := sb.Providers()["sandbox-idem"].Lookup(ctx, "k"); ev.Found {
		t.Error("sandbox-idem sees sandbox's delivery")
	}
}

// The sandbox is its own file: a second handle (another process's) sees
// the same deliveries.
func TestSandboxIsSharedThroughItsFile(t *testing.T) {
	sb, path := openSandbox(t)
	sb.Providers()["sandbox-idem"].Dispatch(context.Background(), req("k", provider.Faults{}))
	other, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if n := deliveries(t, other, "k"); n != 1 {
		t.Errorf("second handle sees %d deliveries", n)
	}
	if r, _ := other.Providers()["sandbox-idem"].Dispatch(context.Background(), req("k", provider.Faults{})); r.Ref != "sbx_1" {
		t.Errorf("second handle re-applied: %+v", r)
	}
}

func TestMissingDownstreamKeyIsRejected(t *testing.T) {
	sb, _ := openSandbox(t)
	r, err := sb.Providers()["sandbox"].Dispatch(context.Background(), req("", provider.Faults{}))
	if err != nil || r.Status != provider.Rejected || deliveries(t, sb, "") != 0 {
		t.Errorf("dispatch without a downstream key = %+v, %v", r, err)
	}
}

func TestRegistryNamesTheProviderItLacks(t *testing.T) {
	_, err := provider.Registry{}.Get("mailgun")
	if err == nil || !strings.Contains(err.Error(), `"mailgun"`) {
		t.Errorf("Get of an unknown provider: %v", err)
	}
}
