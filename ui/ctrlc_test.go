package ui

import (
	"strings"
	"testing"
)

// ctrl+c in a decision form with text typed quit at once, dropping the
// typed decision without a word. It asks now: the form stays, with what
// was typed, the banner says a second ctrl+c quits (esc closes the form);
// a second ctrl+c quits. On an empty form, or anywhere else, ctrl+c quits
// at once. The help says so.
func TestCtrlCInAFormWithTextAsksBeforeQuitting(t *testing.T) {
	t.Run("typed", func(t *testing.T) {
		l := fixture(t)
		h := open(t, config(l), 120, 30)
		h.keys("a")
		h.typeText("sbx_1")
		h.keys("ctrl+c")
		if h.quit {
			t.Fatal("ctrl+c in a form with text typed quit at once")
		}
		if h.m.overlay != overlayAction || h.m.action.value("Evidence") != "sbx_1" {
			t.Fatal("ctrl+c dropped the form or what was typed")
		}
		h.contains("ctrl+c again quits", "esc closes the form")
		h.typeText("2")
		h.keys("ctrl+c")
		if h.quit {
			t.Fatal("a ctrl+c after another key quit: it asks again")
		}
		h.keys("ctrl+c")
		if !h.quit {
			t.Fatal("a second ctrl+c did not quit")
		}
	})
	t.Run("bulk review", func(t *testing.T) {
		l := fixture(t)
		h := open(t, config(l), 120, 30)
		h.keys("*", "a")
		h.typeText("sbx_1")
		h.keys("tab")
		h.typeText("seen")
		h.keys("enter", "ctrl+c")
		if h.quit || h.m.overlay != overlayAction {
			t.Fatal("ctrl+c on a bulk review with text typed quit at once")
		}
		h.keys("ctrl+c")
		if !h.quit {
			t.Fatal("a second ctrl+c did not quit")
		}
	})
	t.Run("empty form", func(t *testing.T) {
		l := fixture(t)
		h := open(t, config(l), 120, 30)
		h.keys("a", "ctrl+c")
		if !h.quit {
			t.Fatal("ctrl+c on an empty form did not quit")
		}
	})
	t.Run("list", func(t *testing.T) {
		l := fixture(t)
		h := open(t, config(l), 120, 30)
		h.keys("ctrl+c")
		if !h.quit {
			t.Fatal("ctrl+c on the list did not quit")
		}
	})
	t.Run("help", func(t *testing.T) {
		l := fixture(t)
		h := open(t, config(l), 120, 60)
		h.keys("?")
		if v := h.view(); !strings.Contains(v, "ctrl+c") || !strings.Contains(v, "asks first") {
			t.Fatalf("the help does not say what ctrl+c does in a form:\n%s", v)
		}
	})
}
