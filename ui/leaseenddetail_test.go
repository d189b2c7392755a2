package ui

import (
	"testing"
	"time"
)

// An open detail of a claimed operation said "A worker holds the claim"
// after its lease ended (the header and the list said "lease ended";
// reopening it did too): the lease-end alarm redraws it.
func TestAnOpenDetailSaysTheLeaseEndedWhenItEnds(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "notify-inflight", "ops@acme.example")
	h := open(t, config(l), 120, 40)
	selectOp(t, h, "acme/notify-inflight")
	h.keys("enter")
	containsText(t, h, "A worker holds the claim")
	if h.m.leaseAlarm.IsZero() {
		t.Fatal("no lease-end alarm armed")
	}
	l.clock.Advance(2 * time.Hour)
	h.send(leaseAlarmMsg{At: h.m.leaseAlarm})
	containsText(t, h, "The lease ended")
	h.lacks("A worker holds the claim")
}
