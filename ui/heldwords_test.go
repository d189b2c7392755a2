package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// heldFor leaves tenant/key released (released) with its provider's
// Retry-After d ahead of now, as a busy answer with Retry-After does.
func (l *ledger) heldFor(t testing.TB, tenant, key string, d time.Duration) {
	t.Helper()
	l.released(t, tenant, key, "ops@acme.example")
	err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := tx.GetOperation(tenant, key)
		if err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.RetryNotBefore = tx.Now().Add(d).UTC().Truncate(time.Millisecond)
		return tx.UpdateOperation(op, from, ver)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A released claim whose provider asked to be left alone (Retry-After)
// is held: a call or sweep before then sends nothing. The list says
// "held", not "released"; the detail says until when and offers no
// "S sweeps now" — until the wait has passed. The header counts it held,
// not released.
func TestAHeldClaimIsShownHeld(t *testing.T) {
	for _, c := range []struct {
		name   string
		wait   time.Duration
		row    string
		header string
		says   []string
		lacks  []string
	}{
		{"held", 2 * time.Minute, "held", "1 held", []string{"held: provider sandbox-idem asked to be left alone until", "(its Retry-After, in 120 s); a call or sweep before then sends nothing"},
			[]string{"S sweeps now", "to be sent again"}},
		{"wait passed", -time.Second, "released", "1 released", []string{"to be sent again", "S sweeps now"}, []string{"held:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			l.heldFor(t, "acme", "k", c.wait)
			h := open(t, config(l), 160, 40)
			var row string
			for _, line := range strings.Split(h.view(), "\n") {
				if strings.Contains(line, " k ") {
					row = line
				}
			}
			if !strings.Contains(row, " "+c.row+" ") {
				t.Errorf("acme/k's row: %q; want %q", row, c.row)
			}
			other := map[string]string{"1 held": "released", "1 released": "held"}[c.header]
			if head := headerOf(h); !strings.Contains(head, c.header) || strings.Contains(head, other) {
				t.Errorf("header %q; want %q, not %q", head, c.header, other)
			}
			if c.row == "held" {
				// The sweep's question counts it held too.
				h.keys("S")
				containsText(t, h, "1 claim held by its provider's Retry-After (nothing is sent before then)")
				h.keys("esc")
			}
			selectOp(t, h, "acme/k")
			h.keys("enter")
			for _, w := range c.says {
				containsText(t, h, w)
			}
			h.lacks(c.lacks...)
		})
	}
}

// R's review: a "has nothing" whose latest lookup could not tell is
// decided one by one under its own heading, not under "the provider's
// lookup is not declared authoritative" — the provider here is.
func TestTheReviewSaysTheLatestLookupCouldNotTell(t *testing.T) {
	l := newLedger(t)
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	l.nothingThere(t, "acme", "k", "c@acme.example")
	d := l.get(t, "acme", "k")
	testledger.Lookups{Worker: "triage by test", Detail: func(f model.FindingKind) string { return string(f) }}.
		Record(t, l.st, &d.Operation, model.FindingHasNothing, model.FindingCannotTell)
	h := open(t, config(l), 140, 40)
	h.keys("R")
	h.contains("Decide one by one — the latest lookup could not tell (an earlier one found nothing) (1)")
	h.lacks("not declared authoritative")
}
