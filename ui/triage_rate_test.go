package ui

import (
	"testing"
)

// The console's triage paces each provider at its configured rate, as
// `retrysafe triage` does without --rate (read from the report: the
// limiter's limit, not a clock).
func TestConsoleTriageKeepsTheConfiguredRate(t *testing.T) {
	l := findingsLedger(t)
	l.svc.LookupRates = map[string]float64{"sandbox": 3000}
	_, cmd := startTriage(t.Context(), l.svc, 1, "", "alice")
	for {
		msg := cmd()
		done, ok := msg.(triageDoneMsg)
		if !ok {
			continue // a finding's step
		}
		if done.Err != nil {
			t.Fatal(done.Err)
		}
		if ps := done.Report.Providers; len(ps) != 1 || ps[0].Provider != "sandbox" || ps[0].Rate != 3000 || ps[0].Checked != 3 {
			t.Fatalf("providers %+v; want sandbox, 3 checked at 3000 a second", ps)
		}
		return
	}
}
