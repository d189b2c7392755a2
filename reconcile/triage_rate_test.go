package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// The pace kept with a provider: a run's own rate (a command line's
// --rate) overrides every provider's; else the provider's configured
// rate; else the default.
func TestLookupRateResolution(t *testing.T) {
	svc := &reconcile.Service{LookupRates: map[string]float64{"pay": 25, "sandbox": 2000}}
	cases := []struct {
		provider string
		override float64
		want     float64
	}{
		{"pay", 0, 25},
		{"sandbox", 0, 2000},
		{"mail", 0, reconcile.DefaultTriageRate},
		{"pay", 500, 500},
		{"mail", 500, 500},
		{"pay", -1, 25},
	}
	for _, c := range cases {
		if got := svc.LookupRate(c.provider, c.override); got != c.want {
			t.Errorf("LookupRate(%q, %v) = %v, want %v", c.provider, c.override, got, c.want)
		}
	}
	if got := (&reconcile.Service{}).LookupRate("pay", 0); got != reconcile.DefaultTriageRate {
		t.Errorf("no configured rates: %v, want the default %v", got, reconcile.DefaultTriageRate)
	}
}

// Two providers with different configured rates: a triage run paces each
// with its own limiter, reported per provider (the limiter's limit, not a
// clock), and a run's own rate overrides both.
func TestTriageKeepsEachProvidersConfiguredRate(t *testing.T) {
	const doc = `
[[providers]]
name = "sandbox"
kind = "sandbox"
[providers.lookup]
rate = 2000

[[providers]]
name = "pay"
kind = "sandbox"
[providers.lookup]
rate = 25

[[providers]]
name = "mail"
kind = "sandbox"

[[tools]]
name = "send_notification"
provider = "sandbox"
arguments = '{"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}'

[[tools]]
name = "charge"
provider = "pay"
arguments = '{"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}'

[[tools]]
name = "mail"
provider = "mail"
arguments = '{"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}'
`
	cfg, err := config.Parse("t.toml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t, fast())
	l.svc.Tools = cfg.Tools
	l.svc.LookupRates = map[string]float64{}
	for _, p := range cfg.Providers {
		if p.LookupRate > 0 {
			l.svc.LookupRates[p.Name] = p.LookupRate
		}
	}
	// "pay" and "mail" are the same sandbox file under other names: what
	// they answer does not matter here, only the pace they are asked at.
	l.svc.Providers["pay"] = l.svc.Providers["sandbox"]
	l.svc.Providers["mail"] = l.svc.Providers["sandbox"]
	for _, tool := range []string{"send_notification", "charge", "mail"} {
		r := notify("acme", "k-"+tool, "a@example.com")
		r.Tool = tool
		if res := l.call(r, reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); res.Class != model.ClassUnknown {
			t.Fatalf("%s, lost reply: %+v; want unknown", tool, res)
		}
	}
	rates := func(override float64) map[string]float64 {
		t.Helper()
		rep, err := l.svc.Triage(context.Background(), reconcile.TriageOptions{Rate: override, By: "triage by test"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, p := range rep.Providers {
			out[p.Provider] = p.Rate
			if p.Checked != 1 {
				t.Errorf("%s: checked %d, want 1", p.Provider, p.Checked)
			}
		}
		return out
	}
	for _, c := range []struct {
		name     string
		override float64
		want     map[string]float64
	}{
		{"configured", 0, map[string]float64{"sandbox": 2000, "pay": 25, "mail": reconcile.DefaultTriageRate}},
		{"--rate overrides", 500, map[string]float64{"sandbox": 500, "pay": 500, "mail": 500}},
	} {
		got := rates(c.override)
		if len(got) != len(c.want) {
			t.Fatalf("%s: rates %v, want %v", c.name, got, c.want)
		}
		for p, w := range c.want {
			if got[p] != w {
				t.Errorf("%s: %s paced at %v, want %v", c.name, p, got[p], w)
			}
		}
	}
}
