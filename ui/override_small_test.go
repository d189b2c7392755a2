package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// The box that asks for the typed override names what is overridden and
// for which key, at every size down to 40×10: the action, the operation's
// key (whole when it fits one line, else both its ends), the provider's
// "has it" and the prompt, inside a box whose bottom border is on screen.

const tinyTenant, tinyKey = "umbrella-logistics", "op_01JXZZM1QR3CVPC"

func overrideReview(t *testing.T, l *ledger, w, h int, action, key string) *harness {
	t.Helper()
	hs := open(t, config(l), w, h)
	hs.pin = pinFindingWords
	selectOp(t, hs, tinyTenant+"/"+key)
	hs.keys("enter", action)
	hs.typeText("customer says nothing arrived")
	hs.keys("tab")
	if action == "n" {
		hs.typeText("ticket 42")
	}
	hs.keys("enter")
	return hs
}

func overrideLedger(t *testing.T, keys ...string) *ledger {
	l := newLedger(t)
	for _, k := range keys {
		l.unknown(t, tinyTenant, k, "customs-desk@umbrella.example")
		lookNow(t, l, tinyTenant, k)
	}
	return l
}

// saysHasIt checks the box warns of the provider's "has it", in its
// long words or its short ones.
func saysHasIt(t *testing.T, h *harness) {
	t.Helper()
	flat := strings.Join(strings.Fields(boxText(h.view())), " ")
	if !strings.Contains(flat, "has it") && !strings.Contains(flat, "found the effect") {
		t.Fatalf("no word of the provider's finding at %dx%d:\n%s", h.m.width, h.m.height, h.view())
	}
}

// lastLine is the screen's help line.
func lastLine(h *harness) string {
	lines := strings.Split(h.view(), "\n")
	return lines[len(lines)-1]
}

func TestGoldenOverrideReviewAt40x10(t *testing.T) {
	verbs := map[string]string{"n": "Mark not applied", "s": "Authorize a new key"}
	for _, action := range []string{"n", "s"} {
		l := overrideLedger(t, tinyKey)
		h := overrideReview(t, l, 40, 10, action, tinyKey)
		visible(t, h, verbs[action], tinyKey, "has it", "override", "›", "╰")
		golden(t, "override_review_"+action+"_40x10", h.view())
		// A wrong word: the refusal, and still what and which.
		h.typeText("yes")
		h.keys("enter")
		visible(t, h, verbs[action], tinyKey, "has it", "override", "╰")
		h.m.Close()
	}
}

// Every size, and a key too long for one line: its two ends stay (keys
// differ at their ends), with the action and the warning.
func TestTheOverrideReviewNamesTheActionAndKeyAtEverySize(t *testing.T) {
	long := "refund-notification-for-order-1042-second-attempt-after-the-gateway-timed-out"
	l := overrideLedger(t, tinyKey, long)
	verbs := map[string]string{"n": "Mark not applied", "s": "Authorize a new key"}
	for _, size := range []struct{ w, h int }{{40, 10}, {50, 12}, {60, 15}, {80, 24}, {200, 50}} {
		for _, action := range []string{"n", "s"} {
			for _, key := range []string{tinyKey, long} {
				t.Run(fmt.Sprintf("%dx%d/%s/%s", size.w, size.h, action, key[:8]), func(t *testing.T) {
					h := overrideReview(t, l, size.w, size.h, action, key)
					visible(t, h, verbs[action], "override", "›", "╰")
					// The key whole, if on more lines than one, or its ends.
					flat := strings.NewReplacer("│", "", " ", "", "\n", "").Replace(h.view())
					if !strings.Contains(flat, key) && (key == tinyKey || !strings.Contains(flat, key[:8]) || !strings.Contains(flat, key[len(key)-6:])) {
						t.Fatalf("the key is not on screen:\n%s", h.view())
					}
					saysHasIt(t, h)
					h.m.Close()
				})
			}
		}
	}
}

// The bulk review at 40 columns: the help line names the keys that act
// (y writes, o overrides), not only esc; and once o is pressed, what
// typing the word does.
func TestGoldenBulkReviewAgainstAt40x10(t *testing.T) {
	l := findingsLedger(t)
	h := open(t, config(l), 40, 10)
	h.pin = pinFindingRefs
	h.keys("*", "n")
	h.typeText("provider incident INC-7")
	h.keys("tab")
	h.typeText("INC-7")
	h.keys("enter")
	visible(t, h, "Mark not applied", "3 marked", "1 to write", "2 refused", "has it", "╰")
	if f := lastLine(h); !strings.Contains(f, "y write") || !strings.Contains(f, "o override") || !strings.Contains(f, "esc") {
		t.Fatalf("the help line hides the keys that act: %q", f)
	}
	golden(t, "bulk_review_against_40x10", h.view())
	h.keys("o")
	visible(t, h, "Mark not applied", "3 marked", "override", "›", "╰")
	if f := lastLine(h); !strings.Contains(f, "override") || !strings.Contains(f, "enter") || !strings.Contains(f, "esc") {
		t.Fatalf("the help line hides how to override: %q", f)
	}
	golden(t, "bulk_override_40x10", h.view())
}

// The review by finding (R) at 40×10: what y writes — how many decisions
// of each kind — and the keys stay on screen with the box's bottom; the
// rows get what is left. Then its results the same way.
func TestGoldenReviewByFindingAt40x10(t *testing.T) {
	l := findingsLedger(t)
	if _, err := l.svc.Triage(t.Context(), reconcileTriageFast()); err != nil {
		t.Fatal(err)
	}
	h := open(t, config(l), 40, 10)
	h.keys("R")
	visible(t, h, "Review by finding", "Mark applied: 2", "One by one: 1", "reason", "╰")
	h.keys("enter")
	visible(t, h, "Review by finding", "Mark applied: 2", "One by one: 1", "Write 2 decisions", "y write 2", "esc", "╰")
	golden(t, "review_by_finding_40x10", h.view())
	h.keys("y")
	visible(t, h, "2 written", "esc close", "╰")
}

// A banner on screen when the review opens (the key just copied) gives
// the box its lines on a 10-line terminal: the review is never cut.
func TestABannerGivesWayToTheOverrideReviewAt40x10(t *testing.T) {
	l := overrideLedger(t, tinyKey)
	h := open(t, config(l), 40, 10)
	h.keys("y")
	h.contains("copy")
	h.keys("n")
	h.typeText("customer says nothing arrived")
	h.keys("tab")
	h.typeText("ticket 42")
	h.keys("enter")
	visible(t, h, "Mark not applied", tinyKey, "has it", "override", "›", "╰")
}

// The yes/no confirmations fit a 10-line terminal: the question, what y
// covers (every tenant; the lab among other tenants' operations) and the
// keys, inside the box.
func TestTheConfirmationsFitATenLineTerminal(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "gone", "ops@acme.example")
	l.unknown(t, "umbrella-logistics", "k-1", "ops@umbrella.example")
	l.clock.Advance(2 * time.Hour)
	h := open(t, config(l), 40, 10)
	h.m.scope = "acme"
	h.keys("S")
	visible(t, h, "Sweep expired leases?", "Every tenant, not only acme", "y yes", "esc cancel", "╰")
	h.keys("esc")
	h.send(labLedgerMsg{Others: []string{"acme", "globex-billing", "umbrella-logistics"}})
	visible(t, h, "Run the lab in this ledger?", "Holds 3 other tenants", `as tenant "`, "y yes", "╰")
}

// The tenant picker at 40×10: the row under the cursor is on screen with
// its name and unknown count, wherever the cursor goes, and the box is as
// wide as the terminal.
func TestTheTenantPickerAt40x10ShowsTheRowUnderTheCursor(t *testing.T) {
	l := newLedger(t)
	for _, tenant := range []string{"acme-support", "globex-billing", "hooli-platform", "initech-ops", "umbrella-logistics"} {
		l.unknown(t, tenant, "k-1", "ops@example.com")
	}
	h := open(t, config(l), 40, 10)
	h.keys("t")
	for i := 0; i < 6; i++ {
		v := h.view()
		sel := ""
		for _, line := range strings.Split(v, "\n") {
			if strings.Contains(line, "›") {
				sel = line
			}
			if ansi.StringWidth(line) > 40 {
				t.Fatalf("a line wider than the terminal: %q", line)
			}
		}
		if sel == "" || (i > 0 && !strings.Contains(sel, "1 unknown")) || !strings.Contains(v, "╰") {
			t.Fatalf("after %d downs the cursor's row is not on screen whole:\n%s", i, v)
		}
		h.keys("down")
	}
}
