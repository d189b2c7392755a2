package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
)

var rfc3339OnScreen = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}`)

// Every time the console shows is in its one format and time zone — the
// times inside the ledger's and the providers' words too: a swept lease
// ("lease ended …"), a call refused while another worker holds the lease
// ("lease held by … until …"), a provider check ("delivered … at …"), a
// decision the ledger refused against a finding recorded meanwhile
// ("recorded … by …").
func TestTheConsoleShowsEveryTimeInItsOwnFormat(t *testing.T) {
	l := newLedger(t)
	noGrace(l) // decided right after the calls: what it tests is not the grace (grace_test.go)
	l.inFlight(t, "acme", "swept-1", "a@acme.example")
	l.clock.Advance(2 * time.Hour)
	if _, err := l.svc.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.inFlight(t, "acme", "held-1", "b@acme.example")
	if res := l.notify(t, "acme", "held-1", "b@acme.example", provider.Faults{}); res.Class != model.ClassInProgress {
		t.Fatalf("a second call while the lease is held: %s", res.Class)
	}
	l.unknown(t, "acme", "found-1", "c@acme.example")
	cfg := config(l)
	cfg.Location = time.FixedZone("UTC+1", 3600)
	h := open(t, cfg, 160, 60)
	noRFC3339 := func(where string) {
		t.Helper()
		if m := rfc3339OnScreen.FindString(h.view()); m != "" {
			t.Fatalf("%s shows %q, not the console's format:\n%s", where, m, h.view())
		}
	}
	h.keys("8")
	for _, c := range []struct{ key, want string }{
		{"acme/swept-1", "lease ended "},
		{"acme/held-1", "until "},
	} {
		h.keys("g")
		selectOp(t, h, c.key)
		h.keys("enter")
		containsText(t, h, c.want)
		noRFC3339("the detail of " + c.key)
		h.keys("esc")
	}
	// The lease ended an hour after the claim, at 10:26:53 UTC: 11:26:53 here.
	h.keys("g")
	selectOp(t, h, "acme/swept-1")
	h.keys("enter")
	containsText(t, h, "lease ended 2026-03-14 11:26:5")
	h.keys("esc")

	h.keys("g")
	selectOp(t, h, "acme/found-1")
	h.keys("enter", "c")
	containsText(t, h, "Provider check: sandbox delivered")
	noRFC3339("a provider check")
	h.keys("esc")

	// "not applied" on found-1 from the list (the check is recorded: the
	// form asks for the override); then a second "has it" is recorded
	// under the open form and the refusal names it.
	l2 := newLedger(t)
	noGrace(l2) // the refusal looked at here is against a finding (grace_test.go: within the grace)
	l2.unknown(t, "acme", "found-2", "d@acme.example")
	cfg = config(l2)
	cfg.Location = time.FixedZone("UTC+1", 3600)
	// The console's own lookup (n asks first) cannot tell: the review
	// opens on the typed evidence, and the "has it" comes after it.
	cfg.Service = cannotAsk(t, l2)
	h = open(t, cfg, 160, 60)
	selectOp(t, h, "acme/found-2")
	h.keys("n")
	h.typeText("customer says nothing arrived")
	h.keys("tab")
	h.typeText("ticket 5521")
	h.keys("enter")
	h.contains("Write this decision to the ledger?")
	if _, _, err := l2.svc.CheckAndRecord(context.Background(), "acme", "found-2", "triage by bob"); err != nil {
		t.Fatal(err)
	}
	h.keys("y")
	containsText(t, h, "Not written", "recorded 2026-03-14")
	if !strings.Contains(h.view(), "triage by bob") {
		t.Fatalf("the refusal does not name the finding:\n%s", h.view())
	}
	noRFC3339("the refusal of a decision")
}
