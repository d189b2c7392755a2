package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/retrysafe/retrysafe/model"
)

// A provider check (c) whose finding the ledger's write lock held back
// said the driver's "context deadline exceeded" after "cannot tell", as
// if the provider had not answered. Its error goes through writeErrText,
// as every other write's does: the ledger is busy, nothing was written.
func TestACheckHeldBackByTheWriteLockSaysSo(t *testing.T) {
	l := fixture(t)
	h := open(t, config(l), 120, 40)
	d := l.get(t, "acme", "notify-1")
	e := h.m.env()
	for _, tc := range []struct {
		name string
		err  error
		want []string
		lack []string
	}{
		{"busy", model.Wrap(model.CodeBusy, context.DeadlineExceeded, "record lookup: %v", context.DeadlineExceeded),
			[]string{"not recorded", "another process holds its write lock", "Nothing was written"}, []string{"deadline exceeded", "Cannot tell"}},
		{"provider down", model.Errorf(model.CodeUnavailable, "provider sandbox lookup failed: cannot tell: connection refused"),
			[]string{"Cannot tell", "connection refused"}, []string{"write lock"}},
	} {
		chk := &checkState{tenant: "acme", key: "notify-1", at: l.clock.Now(), err: tc.err}
		out := strings.Join(strings.Fields(ansi.Strip(renderDetail(e, d, nil, chk, false, 120))), " ")
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the detail lacks %q:\n%s", tc.name, w, out)
			}
		}
		for _, w := range tc.lack {
			if strings.Contains(out, w) {
				t.Errorf("%s: the detail says %q:\n%s", tc.name, w, out)
			}
		}
	}
}
