package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/lab"
)

// At 60 columns the list gives up whole columns (summary, tool, provider
// reference, attempts) rather than cutting the state and the finding off
// at the right edge: a "has it" stays in sight of the operator about to
// press n.
func TestANarrowListKeepsTheStateAndTheFinding(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{60, 64, 72, 80} {
		h := open(t, config(l), w, 20)
		h.contains("STATE", "FINDING", "unknown", "has it", "has nothing")
		for _, line := range strings.Split(h.view(), "\n") {
			if ansi.StringWidth(line) > w {
				t.Fatalf("%d columns: a line of %d cells: %q", w, ansi.StringWidth(line), line)
			}
		}
		h.m.Close()
	}
	h := open(t, config(l), 60, 20)
	h.contains("has it · sbx_1", "has nothing")
	golden(t, "list_findings_60x20", h.view())
}

// The help has more lines than 80×24 (or 60×20) shows: it scrolls, says
// so, and every key it lists can be reached — the global ones at its end
// (audit log, sweep, refresh) included.
func TestHelpScrollsToEveryKeyOnASmallTerminal(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 20}} {
		h := open(t, config(fixture(t)), size.w, size.h)
		h.keys("?")
		h.contains("Keys", "↓ more", "esc/?/q close help · ↑↓ pgup/pgdn scroll")
		h.lacks("audit log (decisions)")
		h.keys("G")
		h.contains("audit log (decisions)", "sweep expired leases", "refresh now", "↑ more above")
		h.keys("g")
		h.contains("Keys")
		h.keys("q")
		h.lacks("close help")
		if h.quit {
			t.Fatal("q on the help quit the console")
		}
		h.m.Close()
	}
	h := open(t, config(fixture(t)), 120, 40)
	h.keys("?")
	h.contains("audit log (decisions)")
	h.lacks("↓ more")
}

func TestGoldenHelp80x24(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.keys("?")
	golden(t, "help_80x24_top", h.view())
	h.keys("G")
	golden(t, "help_80x24_end", h.view())
}

// At 60 columns the audit log keeps each decision's action whole (where
// the operation went), and the tenant picker's box fits the screen.
func TestAuditLogAndTenantPickerAt60Columns(t *testing.T) {
	h := open(t, config(fixture(t)), 60, 20)
	h.keys("D")
	h.contains("→ not_applied", "→ superseded", "→ applied")
	for _, line := range strings.Split(h.view(), "\n") {
		if ansi.StringWidth(line) > 60 {
			t.Fatalf("a line of %d cells: %q", ansi.StringWidth(line), line)
		}
	}
	golden(t, "audit_log_60x20", h.view())
	h.keys("esc", "t")
	h.contains("Tenant scope", "all tenants", "initech", "total", "╮", "╯")
	golden(t, "tenant_picker_60x20", h.view())
}

// The Lab's help line names what the screen is for (enter, space) and the
// way back before the arrows: at 80 columns the arrows pushed space and
// esc off its end.
func TestLabHelpLineKeepsStepModeAndTheWayBack(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.m.lab = newLab(nil, lab.Scenarios(), lab.LabTenant)
	h.m.goTo(screenLab)
	c, _ := h.m.lab.SetSize(h.m.env(), 80, h.m.bodyHeight())
	h.m.lab = c.(labModel)
	lines := strings.Split(h.view(), "\n")
	help := lines[len(lines)-1]
	for _, want := range []string{"enter run scenario", "space run step by step", "esc back"} {
		if !strings.Contains(help, want) {
			t.Errorf("the Lab's help line lacks %q: %q", want, help)
		}
	}
}

// The review by finding names each operation by its key's end when the
// name is too long for its column (the tenant and the key's start were
// all that showed).
func TestReviewByFindingClipsLongNamesInTheMiddle(t *testing.T) {
	l := newLedger(t)
	l.unknown(t, "umbrella-logistics", "refund-notification-for-order-1042", "dana@umbrella.example")
	h := open(t, config(l), 80, 24)
	h.keys("R")
	h.contains("Review by finding", "…", "1042")
}

// At 60 columns the review of a new key says where the new key goes
// (authorized), not "→ authoriz…".
func TestNewKeyReviewAt60ColumnsNamesTheNewKeysState(t *testing.T) {
	h := open(t, config(fixture(t)), 60, 20)
	h.keys("enter", "s")
	h.typeText("send it again")
	h.keys("enter", "enter")
	h.contains("Write this decision", "(generated on write)  → authorized")
}

// With a banner on screen the detail's viewport is shorter; G must still
// reach the last line (the links), and the position must say 100%.
func TestDetailScrollsToTheEndWithABannerOnScreen(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 24)
	h.keys("6", "enter")
	h.contains("globex / notify-super", "SUPERSEDED")
	h.keys("a") // refused: a two-line banner takes room from the viewport
	h.contains("Cannot mark applied globex/notify-super")
	h.keys("G")
	h.contains("superseded by", "globex/notify-super-2", "100%")
	h.keys("esc") // the banner goes: the viewport grows and still ends at the end
	h.lacks("Cannot mark applied")
	h.contains("superseded by", "100%")
	if lines := strings.Split(h.view(), "\n"); len(lines) != 24 {
		t.Fatalf("%d lines at 80×24", len(lines))
	}
}

// A decision's header line is wrapped in a narrow detail, not clipped at
// the edge.
func TestDecisionLinesWrapInANarrowDetail(t *testing.T) {
	h := open(t, config(fixture(t)), 80, 40)
	h.keys("6", "enter")
	h.contains("authorize a new key  unknown → superseded", "(seen at v2)")
}

// Wrapping never breaks a hyphenated tenant or key across lines.
func TestBannersKeepHyphenatedNamesWhole(t *testing.T) {
	h := open(t, config(fixture(t)), 40, 20)
	h.send(bannerMsg{kind: bannerErr, text: "Cannot mark applied umbrella-logistics/op_1: it is applied."})
	h.contains("umbrella-logistics/op_1")
	if got := wrap("see rs-a93953a4e1348737c2e55cf03d064c5b now", 40, " "); !strings.Contains(got, "rs-a93953a4e1348737c2e55cf03d064c5b") {
		t.Fatalf("downstream key split: %q", got)
	}
}
