package ui

import (
	"strings"
	"testing"
	"time"
)

// A claim whose lease runs out with no write moves no data_version: the
// header's "lease ended" count must still grow when it ends. The console
// arms one timer at the next lease's end (store.Counts.NextLeaseEnd) and
// recounts when it fires — no polling.
func TestTheLeaseCountGrowsWhenALeaseEndsWithNoWrite(t *testing.T) {
	l := newLedger(t)
	l.inFlight(t, "acme", "lease-1", "cfo@acme.example") // a one-hour lease, its worker gone
	h := open(t, config(l), 120, 30)
	h.lacks("lease ended")
	at := h.m.leaseAlarm
	if at.IsZero() || at.Sub(l.clock.Now()) > time.Hour || at.Before(l.clock.Now()) {
		t.Fatalf("no alarm armed at the lease's end: %v (now %v)", at, l.clock.Now())
	}
	l.clock.Advance(time.Hour + time.Second)
	h.tick() // nothing was written: no reload
	if strings.Contains(headerOf(h), "lease ended") {
		t.Fatalf("counted before the alarm: the test shows nothing")
	}
	h.send(leaseAlarmMsg{At: at})
	headerHas(t, h, "1 lease ended")
	if !h.m.leaseAlarm.IsZero() {
		t.Fatalf("an alarm armed with no lease left running: %v", h.m.leaseAlarm)
	}
}
