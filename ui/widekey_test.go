package ui

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// At 200 columns the KEY column stopped at 36 cells and cut a 255-char
// key in its middle while SUMMARY got ~60: two keys that differ only
// past their first and last 17 characters looked the same. A wide
// screen gives the key what the summary does not need (down to 40
// cells of summary), and the clipped key keeps as much of both ends.
func TestWideListGivesTheKeyRoomBeforeTheSummary(t *testing.T) {
	long := func(mid string) string {
		return strings.Repeat("a", 60) + mid + strings.Repeat("z", 194)
	}
	rows := []model.Operation{
		{Tenant: "acme", Key: long("1"), Tool: "send_notification", Summary: "oncall@acme.example", State: model.StateUnknown},
		{Tenant: "acme", Key: long("2"), Tool: "send_notification", Summary: "oncall@acme.example", State: model.StateUnknown},
	}
	for _, tc := range []struct {
		w            int
		keyAtLeast   int
		summaryFloor int
	}{{200, 80, 40}, {160, 50, 40}, {120, 16, 14}} {
		c := layout(tc.w, rows, false)
		if c.key < tc.keyAtLeast || c.summary < tc.summaryFloor || c.width() > tc.w {
			t.Errorf("%d columns: key %d, summary %d, table %d; want key ≥ %d, summary ≥ %d", tc.w, c.key, c.summary, c.width(), tc.keyAtLeast, tc.summaryFloor)
		}
	}
	// Nothing to give: a short key keeps its natural width.
	short := []model.Operation{{Tenant: "acme", Key: "notify-1", Tool: "send_notification", Summary: "oncall@acme.example"}}
	if c := layout(200, short, false); c.key != 10 {
		t.Errorf("200 columns, short key: key %d, want 10", c.key)
	}
}
