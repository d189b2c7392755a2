package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
)

// Golden views: the screen as text (escape codes stripped, the colour
// profile pinned), compared with testdata/NAME.golden. After a deliberate
// change to the layout: go test ./ui -run TestGolden -update, and read the
// diff before committing it.

// updating reports -update. The flag itself is registered by
// charmbracelet/x/exp/golden (teatest imports it); defining it twice
// would panic, so it is looked up.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	// Trailing spaces carry no meaning on a terminal; keeping them out
	// keeps the files readable in a diff.
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	got = strings.Join(lines, "\n") + "\n"
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file:\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

// pinAttempts fixes the two fields the call path takes from the wall clock
// (an attempt's start and duration), so the detail's golden holds still.
func pinAttempts(msg tea.Msg) tea.Msg {
	d, ok := msg.(detailMsg)
	if !ok || d.Detail == nil {
		return msg
	}
	cp := *d.Detail
	cp.Attempts = append([]model.Attempt(nil), d.Detail.Attempts...)
	for i := range cp.Attempts {
		cp.Attempts[i].StartedAt = cp.Operation.CreatedAt.Add(time.Duration(i) * time.Second)
		cp.Attempts[i].Duration = time.Duration(i+1) * 1500 * time.Microsecond
	}
	d.Detail = &cp
	return d
}

func TestGoldenEmptyState(t *testing.T) {
	h := open(t, config(newLedger(t)), 100, 24)
	golden(t, "empty_state", h.view())
}

// pastGrace is fixture with the grace after each request off: its
// operations were called a second ago, and within the grace n and s say
// they need the override (keys_within_grace_* pin that). The layout
// goldens pin what an operation past its grace shows, the common case.
func pastGrace(t testing.TB) *ledger {
	l := fixture(t)
	noGrace(l)
	return l
}

func TestGoldenListWithSeveralStatesAndTenants(t *testing.T) {
	h := open(t, config(pastGrace(t)), 120, 24)
	h.keys("8")
	golden(t, "list_all_states", h.view())
}

func TestGoldenDetailWithAttemptsAndDecisions(t *testing.T) {
	h := open(t, config(fixture(t)), 110, 60)
	h.pin = pinAttempts
	h.keys("3", "enter")
	h.contains("acme / notify-contra")
	golden(t, "detail_attempts_decisions", h.view())
}

func TestGoldenConfirmation(t *testing.T) {
	h := open(t, config(fixture(t)), 100, 24)
	h.confirmMarkApplied("sbx_12", "found it in the provider's log")
	golden(t, "confirm_mark_applied", h.view())
}

func TestGoldenErrorBanner(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 100, 24)
	h.confirmMarkApplied("sbx_12", "seen it")
	l.decide(t, model.ActionMarkNotApplied, "acme", "notify-1")
	h.keys("y")
	golden(t, "banner_stale_decision", h.view())
}

func TestGolden80x24(t *testing.T) {
	h := open(t, config(pastGrace(t)), 80, 24)
	golden(t, "layout_80x24_list", h.view())
	h.pin = pinAttempts
	h.keys("enter")
	golden(t, "layout_80x24_detail", h.view())
	h.keys("esc", "8")
	golden(t, "layout_80x24_all", h.view())
}

// At 60 columns the tabs line shortens labels and drops the least urgent
// tabs, never the unknown count nor the contradicted one; the detail's
// help line keeps "esc back" and "? help".
func TestGolden60x20(t *testing.T) {
	h := open(t, config(pastGrace(t)), 60, 20)
	for _, keys := range [][]string{nil, {"8"}, {"7"}} {
		h.keys(keys...)
		tabs := strings.Split(h.view(), "\n")[1]
		if !strings.Contains(tabs, "unknown 2") || !strings.HasSuffix(strings.TrimRight(tabs, " "), "!1") {
			t.Fatalf("after %v the tabs line hides an alarm: %q", keys, tabs)
		}
	}
	h.keys("1")
	golden(t, "layout_60x20_list", h.view())
	h.keys("8")
	golden(t, "layout_60x20_all", h.view())
	h.pin = pinAttempts
	h.keys("1", "enter")
	golden(t, "layout_60x20_detail", h.view())
}

// pinCheck fixes what the sandbox stamps with the wall clock (the time of
// a delivery) in a provider check's answer.
func pinCheck(msg tea.Msg) tea.Msg {
	c, ok := msg.(checkMsg)
	if !ok || !c.Evidence.Found {
		return pinAttempts(msg)
	}
	c.Evidence.At = time.Date(2026, 3, 14, 9, 26, 54, 0, time.UTC)
	c.Evidence.Detail = "sandbox delivered " + c.Evidence.Ref + " at 2026-03-14T09:26:54Z (1 delivery under this key)"
	return c
}

// The review of a decision against the last check: the finding named,
// the typed override asked for.
func TestGoldenReviewAgainstTheFinding(t *testing.T) {
	h := open(t, config(fixture(t)), 100, 30)
	h.pin = pinCheck
	h.keys("enter", "c", "n")
	h.typeText("customer says nothing arrived")
	h.keys("tab")
	h.typeText("ticket 5521")
	h.keys("enter")
	golden(t, "review_against_finding", h.view())
}

// A bulk decision: the review listing each from → to, then each row's
// result (one refused as stale).
func TestGoldenBulkReviewAndResults(t *testing.T) {
	l := fixture(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	h := open(t, unreachableConfig(l), 100, 24)
	h.keys("space", "space", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	golden(t, "bulk_review", h.view())
	settleElsewhere(t, l)
	h.keys("y")
	golden(t, "bulk_results", h.view())
}

// A bulk "not applied" whose rows' providers were asked first: the rows
// the provider has are refused, each naming its finding; then the result.
func TestGoldenBulkReviewAgainstFindings(t *testing.T) {
	l := findingsLedger(t)
	h := open(t, config(l), 100, 24)
	h.pin = pinFindingRefs
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	golden(t, "bulk_review_against", h.view())
	h.keys("y")
	golden(t, "bulk_results_against", h.view())

	// At 60×20 each row's finding and result go on a line of their own
	// rather than being cut off.
	l = findingsLedger(t)
	h = open(t, config(l), 60, 20)
	h.pin = pinFindingRefs
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	golden(t, "bulk_review_against_60x20", h.view())
	h.keys("y")
	golden(t, "bulk_results_against_60x20", h.view())
}

// pinFindingRefs makes the sandbox's references in a bulk lookup's answer
// stable (they carry a random part).
func pinFindingRefs(msg tea.Msg) tea.Msg {
	c, ok := msg.(bulkCheckedMsg)
	if !ok {
		return pinAttempts(msg)
	}
	for i, op := range c.Ops {
		if op.Finding != nil && op.Finding.Ref != "" {
			f := *op.Finding
			f.Ref = fmt.Sprintf("sbx_%d", i+1)
			c.Ops[i].Finding = &f
		}
	}
	return c
}

func TestGoldenAuditLog(t *testing.T) {
	h := open(t, config(fixture(t)), 100, 24)
	h.keys("D")
	golden(t, "audit_log", h.view())
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	golden(t, "audit_log_80x24", h.view())
}

func TestGoldenSweepConfirmation(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "gone", "ops@acme.example")
	l.clock.Advance(2 * time.Hour)
	h := open(t, config(l), 100, 24)
	h.keys("S")
	golden(t, "sweep_confirm", h.view())
}

// The console at 80×24 and 120×40 after the on-call items: a sorted,
// filtered list; a long key's detail (the state badge whole, the key
// clipped in its middle); the copy menu; a stale refusal naming who moved
// the operation on, the cursor still on it.
func TestGoldenSortFiltersCopyAndStaleAt80x24And120x40(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		name := func(what string) string { return fmt.Sprintf("%s_%dx%d", what, size.w, size.h) }
		l := pastGrace(t)
		l.unknown(t, "umbrella-logistics", "refund-notification-for-order-1042-second-attempt", "dana@umbrella.example")
		h := open(t, config(l), size.w, size.h)
		h.pin = pinAttempts
		h.keys("8", ":")
		h.typeText("sort key")
		h.keys("enter", ":")
		h.typeText("provider sandbox")
		h.keys("enter")
		golden(t, name("list_sorted_by_key_provider"), h.view())
		h.keys("G", "enter")
		h.contains("UNKNOWN · v2")
		golden(t, name("detail_long_key"), h.view())
		h.keys("y")
		// The ledger's real path is a temporary directory: pinned.
		for i, it := range h.m.copyMenu.items {
			h.m.copyMenu.items[i].Text = strings.ReplaceAll(it.Text, l.st.Path(), "/var/lib/retrysafe/ledger.db")
		}
		golden(t, name("copy_menu"), h.view())
		h.keys("esc", "esc", ":")
		h.typeText("sort")
		h.keys("enter", ":")
		h.typeText("provider")
		h.keys("enter", "1")
		h.confirmMarkApplied("sbx_12", "seen it")
		l.decide(t, model.ActionMarkNotApplied, "umbrella-logistics", "refund-notification-for-order-1042-second-attempt")
		h.keys("y")
		golden(t, name("stale_refusal"), h.view())
	}
}
