package ui

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The list's ATT counted provider lookups (a check, a triage) as
// attempts: an operation sent once and checked twice read 3. ATT counts
// the calls of the key (lookups apart); the detail's Attempts heading says how
// many of its rows are those and how many provider lookups.
func TestATTCountsCallsNotProviderLookups(t *testing.T) {
	for _, c := range []struct {
		name    string
		checks  int
		att     string // the row's ATT cell
		heading string // the detail's
	}{
		{"never checked", 0, "1", "Attempts (1)"},
		{"checked twice", 2, "1", "Attempts (3: 1 call, 2 provider lookups)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			l.unknown(t, "acme", "k", "ops@acme.example")
			l.clock.Advance(2 * time.Minute) // past the grace: a lookup can say has nothing
			for i := 0; i < c.checks; i++ {
				if _, _, err := l.svc.CheckAndRecord(context.Background(), "acme", "k", "test"); err != nil {
					t.Fatal(err)
				}
			}
			h := open(t, config(l), 140, 30)
			var head, row string
			for _, line := range strings.Split(h.view(), "\n") {
				switch {
				case strings.Contains(line, "ATT"):
					head = line
				case strings.Contains(line, " k "):
					row = line
				}
			}
			hr, rr := []rune(head), []rune(row) // one cell each: no wide text here
			at := strings.Index(head, "ATT")
			at = len([]rune(head[:max(at, 0)]))
			if at < 1 || len(rr) < at+3 || string(hr[at:at+3]) != "ATT" || strings.TrimSpace(string(rr[at:at+3])) != c.att {
				t.Fatalf("ATT cell; want %q:\n%s\n%s", c.att, head, row)
			}
			h.keys("enter", "G") // the attempts are at the end
			containsText(t, h, c.heading)
		})
	}
}
