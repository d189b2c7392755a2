package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// At 80 columns the KEY column has 14 cells: keys that differ only in
// their middle ("invoice-…-customer-0001-…-email", "…-0002-…") read the
// same, "invoice…-email", on every row. Each such key shows both its ends
// and, between them, where it differs from the others; a key no other
// reads like keeps clipMiddle's cut. The full key stays in the detail.
func TestKeysThatDifferInTheMiddleReadApartInANarrowList(t *testing.T) {
	key := func(n string) string { return "invoice-2026-12-reminder-customer-" + n + "-second-notice-email" }
	for _, c := range []struct {
		name string
		keys []string
		w    int
		want []string // each key's cell, in order ("" : as clipMiddle cuts it)
	}{
		{"three alike", []string{key("0001"), key("0002"), key("0003")}, 14, []string{"inv…0001-s…ail", "inv…0002-s…ail", "inv…0003-s…ail"}},
		{"alike and apart", []string{key("0001"), key("0002"), "refund-42"}, 14, []string{"inv…0001-s…ail", "inv…0002-s…ail", "refund-42"}},
		{"none alike", []string{key("0001"), "order-7-receipt-email-to-the-customer"}, 14, []string{"", ""}},
		{"wide letters", []string{"請求書-顧客-0001-メール通知-送信", "請求書-顧客-0002-メール通知-送信"}, 14, nil},
		{"a control in the middle", []string{key("00\x1b]1"), key("00\x1b]2")}, 14, nil},
		{"six cells", []string{key("0001"), key("0002")}, 6, []string{"i…01…l", "i…02…l"}},
		{"too narrow for three parts", []string{key("0001"), key("0002")}, 5, []string{"", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := clipKeys(c.keys, c.w)
			seen := map[string]string{}
			for i, k := range c.keys {
				cell, ok := got[k]
				if !ok {
					cell = clipMiddle(k, c.w)
				}
				if w := ansi.StringWidth(cell); w > c.w {
					t.Errorf("%q: %q is %d cells, more than %d", k, cell, w, c.w)
				}
				if strings.ContainsAny(cell, "\x1b\a") {
					t.Errorf("%q: %q holds a control character: the sanitizer was skipped", k, cell)
				}
				if c.want != nil {
					want := c.want[i]
					if want == "" {
						want = clipMiddle(k, c.w)
					}
					if cell != want {
						t.Errorf("%q: %q; want %q", k, cell, want)
					}
				}
				if c.w >= 6 {
					if other, dup := seen[cell]; dup && other != k {
						t.Errorf("%q and %q both read %q", other, k, cell)
					}
					seen[cell] = k
				}
			}
		})
	}
}

// The list at 80×24: three keys alike but for their middle read apart,
// each with both ends; the detail shows the key whole.
func TestGoldenListKeysThatDifferInTheMiddle80x24(t *testing.T) {
	l := newLedger(t)
	for _, n := range []string{"0001", "0002", "0003"} {
		l.task(t, "acme", "invoice-2026-12-reminder-customer-"+n+"-second-notice-email", "reminder "+n)
	}
	h := open(t, config(l), 80, 24)
	v := h.view()
	for _, n := range []string{"0001-s", "0002-s", "0003-s"} {
		if !strings.Contains(v, "inv…"+n+"…ail") {
			t.Errorf("the list lacks inv…%s…ail:\n%s", n, v)
		}
	}
	golden(t, "list_middle_keys_80x24", v)
	h.keys("enter")
	containsText(t, h, "invoice-2026-12-reminder-customer-0003-second-notice-email")
}
