package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// clipMiddle counted runes as cells: wide characters (CJK, emoji — a
// tenant or key may hold them) overflowed the width asked for (a row's
// column, a box's border) or lost the head entirely — the detail's title
// of 租户/キー… read "…界界界", without its tenant.
func TestAdvClipMiddleKeepsBothEndsWithinTheWidthOfWideText(t *testing.T) {
	for _, s := range []string{
		"acme/" + strings.Repeat("界", 40),
		strings.Repeat("租", 20) + " / " + strings.Repeat("界", 40),
		"租户🦄テナント / キー🔑" + strings.Repeat("界", 60) + "-end",
		strings.Repeat("a", 30) + strings.Repeat("界", 30),
	} {
		for w := 2; w <= 60; w++ {
			got := clipMiddle(s, w)
			if gw := ansi.StringWidth(got); gw > w {
				t.Fatalf("clipMiddle(%q, %d) = %q: %d cells", s, w, got, gw)
			}
			if w >= 12 {
				head, tail, ok := strings.Cut(got, "…")
				if !ok || ansi.StringWidth(head) < (w-1)/2-1 || ansi.StringWidth(tail) < (w-1)/2-2 {
					t.Fatalf("clipMiddle(%q, %d) = %q: an end is lost", s, w, got)
				}
			}
		}
	}
}
