package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/lab"
)

// hostilePath is a ledger file name that retitles the terminal and clears
// it: `--db "$(printf 'e\033]0;DBTITLE\007\033[2J.db')"`.
const hostilePath = "e\x1b]0;DBTITLE\x07\x1b[2J.db"

// The ledger's path (--db) and the operator's name reach the screen
// through the one sanitizer wherever they are drawn: the header at every
// width it shortens them for, the Lab's confirmation, an empty ledger's
// hints, a decision's review and a bulk review. The raw view holds no
// escape (the colour profile is ASCII: the console writes none itself),
// and the path is shown visibly, \x1b]0;DBTITLE.
func TestTheLedgerPathAndOperatorReachTheScreenInert(t *testing.T) {
	for _, w := range []int{160, 80, 60, 40} {
		t.Run(fmt.Sprintf("header %d", w), func(t *testing.T) {
			l := fixture(t)
			cfg := config(l)
			cfg.Ledger = hostilePath
			h := open(t, cfg, w, 20)
			rawInert(t, "header", h)
			if w >= 160 && !strings.Contains(h.view(), `e\x1b]0;DBTITLE`) {
				t.Errorf("the header does not show the path visibly:\n%s", h.view())
			}
		})
	}
	t.Run("lab confirmation", func(t *testing.T) {
		l := fixture(t)
		cfg := config(l)
		cfg.Ledger = hostilePath
		h := open(t, cfg, 120, 30)
		h.send(labLedgerMsg{Others: []string{"acme", "globex"}})
		h.contains("Run the lab in this ledger?", `e\x1b]0;DBTITLE\x07\x1b[2J.db is not a lab ledger`)
		rawInert(t, "lab confirmation", h)
	})
	t.Run("lab tenant", func(t *testing.T) {
		l := fixture(t)
		cfg := config(l)
		cfg.Lab, cfg.LabScenarios, cfg.LabTenant = &lab.Runner{Exe: "/nonexistent"}, []lab.Scenario{{ID: "s", Name: "a scenario"}}, "lab\x1b]0;T\x07"
		h := open(t, cfg, 120, 30)
		h.keys("L")
		h.contains(`run under tenant "lab\x1b]0;T\x07"`)
		rawInert(t, "lab screen", h)
	})
	t.Run("empty ledger", func(t *testing.T) {
		l := newLedger(t)
		cfg := config(l)
		cfg.Ledger = hostilePath
		h := open(t, cfg, 120, 30)
		h.contains("This ledger is empty.", `e\x1b]0;DBTITLE`)
		rawInert(t, "empty ledger", h)
	})
	t.Run("operator on the reviews", func(t *testing.T) {
		l := fixture(t)
		cfg := config(l)
		cfg.Operator = "alice\x1b]0;OPTITLE\x07\u202e"
		h := open(t, cfg, 140, 40)
		h.confirmMarkApplied("sbx_1", "seen in the provider")
		h.contains("Write this decision", `alice\x1b]0;OPTITLE`)
		rawInert(t, "review", h)
		h.keys("esc", "esc", "space", "j", "space", "a")
		h.typeText("sbx_1")
		h.keys("tab")
		h.typeText("seen in the provider")
		h.keys("enter")
		h.contains("Write 2 decisions", `alice\x1b]0;OPTITLE`)
		rawInert(t, "bulk review", h)
	})
}
