package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
)

// A released claim whose latest lookup found another request under its
// key is never sent again under it (R18 H1): the detail used to say "to
// be sent again" and "S sweeps now". It says the key holds another
// request, that a sweep or call makes it unknown, and that a new key is
// the way.
func TestAReleasedClaimWhoseKeyHoldsAnotherRequestIsNotOfferedASweep(t *testing.T) {
	l := newLedger(t)
	l.released(t, "acme", "k", "ops@acme.example")
	d := l.get(t, "acme", "k")
	testledger.Lookups{Worker: "triage by test", Ref: "sbx_9", Detail: func(model.FindingKind) string { return "another request under the key" }}.
		Record(t, l.st, &d.Operation, model.FindingHasOther)
	h := open(t, config(l), 160, 40)
	selectOp(t, h, "acme/k")
	h.keys("enter")
	containsText(t, h, "the latest lookup found a different request under its key", "a sweep or the next call makes it unknown", "authorize a new key")
	h.lacks("S sweeps now", "to be sent again")
}

// M2: at 40x10 the sweep's question is its short form; with a claim held
// by its provider's Retry-After it used to say every claim nobody holds
// is made unknown or re-sent now. It says the held one is not sent yet,
// and "their key" of more than one.
func TestTheSweepsShortQuestionCountsHeldClaims(t *testing.T) {
	l := newLedger(t)
	l.heldFor(t, "acme", "h", 2*time.Minute)
	l.released(t, "acme", "r1", "a@acme.example")
	l.released(t, "acme", "r2", "b@acme.example")
	h := open(t, config(l), 40, 10)
	h.keys("S")
	v := boxText(h.view())
	for _, w := range []string{"2 claims → unknown or re-sent", "1 held by Retry-After, not sent yet"} {
		if !strings.Contains(v, w) {
			t.Errorf("the short sweep question lacks %q:\n%s", w, h.view())
		}
	}
	if strings.Contains(v, "3 claims") {
		t.Errorf("the short sweep question counts the held claim as sent now:\n%s", h.view())
	}
	h2 := open(t, config(l), 160, 40)
	h2.keys("S")
	if v := boxText(h2.view()); strings.Contains(v, "claims released to be sent again under its key") || !strings.Contains(v, "2 claims released to be sent again under their key") {
		t.Errorf("the sweep question says \"claims … under its key\":\n%s", h2.view())
	}
}
