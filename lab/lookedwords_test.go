package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A lookup that cannot tell reads "cannot tell" once: the grace's and the
// providers' errors already start with it (the lab's authorize-new-key row
// read "lookup cannot tell: cannot tell: a request sent at …"), a claim in
// flight's does not.
func TestLookedWordsSaysCannotTellOnce(t *testing.T) {
	for _, c := range []struct {
		name string
		l    reconcile.Looked
		want string
	}{
		{"grace (already says it)", reconcile.Looked{Err: errors.New("cannot tell: a request sent at 2026-12-03T07:39:30Z may still be applied")},
			"cannot tell: a request sent at 2026-12-03T07:39:30Z may still be applied"},
		{"provider (already says it)", reconcile.Looked{Err: errors.New("cannot tell: provider pay has no lookup configured")},
			"cannot tell: provider pay has no lookup configured"},
		{"in flight (does not)", reconcile.Looked{Err: errors.New("asked while a claim was in flight (…)")},
			"cannot tell: asked while a claim was in flight (…)"},
		{"bare", reconcile.Looked{Err: errors.New("cannot tell:")}, "cannot tell"},
		{"found", reconcile.Looked{Evidence: provider.Evidence{Found: true, Ref: "sbx_3", Effects: 2}}, "found sbx_3 (2 deliveries)"},
		{"nothing", reconcile.Looked{}, "found nothing"},
	} {
		got := lookedWords(c.l)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if strings.Count(got, "cannot tell") > 1 {
			t.Errorf("%s: says cannot tell twice: %q", c.name, got)
		}
	}
}
