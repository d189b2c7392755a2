package lab

import (
	"strings"
	"testing"
	"time"
)

// The demo's summary line after the per-tenant lines is their total, and
// says so: "background 291 operations" read as 291 more.
func TestDemoTotalLineSaysItIsTheTotal(t *testing.T) {
	line := demoTotalLine(5, 291, "09:38", "17:00", 82, 5884*time.Millisecond)
	for _, want := range []string{"all 5 tenants", "291 operations in total", "09:38 to 17:00", "82 deliveries"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q: want %q", line, want)
		}
	}
	if strings.Contains(line, "background") {
		t.Errorf("%q: reads as more operations, not the total", line)
	}
}
