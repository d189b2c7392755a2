package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A check that could not tell names times in its reason (a file that
// went back in time, a lease): they read in the console's clock as every
// other time on the screen, not as raw RFC 3339.
func TestCheckErrorTimesAreLocal(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	d := l.get(t, "acme", "notify-1")
	e := h.m.env()
	chk := &checkState{tenant: "acme", key: "notify-1", at: l.clock.Now(),
		err: errors.New("cannot tell: sandbox provider has not answered since 2026-03-14T09:20:00.123Z")}
	out := ansi.Strip(renderDetail(e, d, nil, chk, false, 120))
	// The answer at the top, where the question was asked.
	top, rest, _ := strings.Cut(out, "Operation")
	flat := strings.Join(strings.Fields(top), " ")
	if strings.Contains(flat, "2026-03-14T09:20:00") || !strings.Contains(flat, "not answered since 2026-03-14 09:20:00") {
		t.Fatalf("check error times not local:\n%s", out)
	}
	// And in the Provider section's "check cannot tell: …".
	_, prov, _ := strings.Cut(rest, "Provider")
	flat = strings.Join(strings.Fields(prov), " ")
	if strings.Contains(flat, "2026-03-14T09:20:00") || !strings.Contains(flat, "cannot tell: sandbox provider has not answered since 2026-03-14 09:20:00") {
		t.Fatalf("the Provider section's check error times not local:\n%s", prov)
	}
}
