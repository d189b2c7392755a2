package ui

import (
	"strings"
	"testing"
)

// The operator's name goes through the one sanitizer on the header: a
// right-to-left override (or an escape) in it is shown as \u202e, never
// written raw to the terminal. (The command line refuses such a name; a Go
// program embedding the console might not.)
func TestTheHeaderShowsTheOperatorNameInertly(t *testing.T) {
	l := fixture(t)
	cfg := config(l)
	cfg.Operator = "a\u202eb\x1b]0;x\x07"
	v := open(t, cfg, 160, 30).view()
	if strings.ContainsRune(v, '\u202e') || strings.Contains(v, "\x1b]0;") {
		t.Errorf("the header holds the raw operator name:\n%q", strings.SplitN(v, "\n", 2)[0])
	}
	if !strings.Contains(v, `a\u202eb`) {
		t.Errorf("the header does not show the name visibly:\n%s", strings.SplitN(v, "\n", 2)[0])
	}
}
