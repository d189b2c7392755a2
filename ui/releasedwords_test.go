package ui

import (
	"strings"
	"testing"
	"time"
)

// A claim released to be sent again (a lost reply to a provider that
// honours keys) was shown as "lease ended" in the list's STATE column and
// counted in the header's "lease ended", as if its worker had died holding
// it. Each says what happened: released, or its lease ended.
func TestTheListAndHeaderSayAReleasedClaimWasReleased(t *testing.T) {
	for _, c := range []struct {
		name        string
		make        func(t *testing.T, l *ledger)
		row, header []string // said on acme/k's row, in the header
		lacks       []string // said nowhere
	}{
		{"released", func(t *testing.T, l *ledger) { l.released(t, "acme", "k", "ops@acme.example") },
			[]string{"released"}, []string{"1 released"}, []string{"lease ended"}},
		{"lease ended", func(t *testing.T, l *ledger) {
			l.inFlight(t, "acme", "k", "ops@acme.example")
			l.clock.Advance(2 * time.Hour)
		}, []string{"lease ended"}, []string{"1 lease ended"}, []string{"released"}},
		{"both", func(t *testing.T, l *ledger) {
			l.inFlight(t, "acme", "gone", "ops@acme.example")
			l.clock.Advance(2 * time.Hour)
			l.released(t, "acme", "k", "ops@acme.example")
		}, []string{"released"}, []string{"1 lease ended", "1 released"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			c.make(t, l)
			h := open(t, config(l), 140, 30)
			var row string
			for _, line := range strings.Split(h.view(), "\n") {
				if strings.Contains(line, " k ") {
					row = line
				}
			}
			for _, w := range c.row {
				if !strings.Contains(row, w) {
					t.Errorf("acme/k's row lacks %q: %q", w, row)
				}
			}
			headerHas(t, h, c.header...)
			h.lacks(c.lacks...)
		})
	}
}
