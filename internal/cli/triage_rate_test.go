package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// triage paces each provider at its config entry's [providers.lookup]
// rate (the built-in sandbox's: 1000 a second) unless --rate is given,
// which overrides every provider's. The pace is read from the report (the
// limiter's limit), not from a clock.
func TestTriageRateFromTheConfigUnlessGiven(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	if _, errText, code := cli(t, callArgs(db, "acme", "k1", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("lose-reply: exit %d %q", code, errText)
	}
	cases := []struct {
		name string
		args []string
		want float64
	}{
		{"the config's", nil, 1000},
		{"--rate overrides", []string{"--rate", "7"}, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errText, code := cli(t, append([]string{"triage", "--db", db, "--read-only", "--json"}, c.args...)...)
			var rep struct {
				Providers []struct {
					Provider string  `json:"provider"`
					Rate     float64 `json:"rate"`
				} `json:"providers"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitTriageOK {
				t.Fatalf("exit %d %v %q", code, err, errText)
			}
			if len(rep.Providers) != 1 || rep.Providers[0].Provider != "sandbox" || rep.Providers[0].Rate != c.want {
				t.Errorf("providers %+v; want sandbox paced at %v", rep.Providers, c.want)
			}
		})
	}
}
