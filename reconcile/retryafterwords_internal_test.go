package reconcile

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
)

// A busy answer says the wait the provider asked for and, when that is
// longer than any this holds, the wait held: "asks to wait 631831h" alone
// read as the wait the next call would get.
func TestABusyAnswerSaysTheWaitHeld(t *testing.T) {
	tests := []struct {
		asked time.Duration
		want  string
	}{
		{0, ""},
		{3 * time.Second, ", it asks to wait 3s"},
		{1500 * time.Millisecond, ", it asks to wait 1.5s"},
		{MaxRetryAfter, ", it asks to wait 5m0s"},
		{time.Hour, ", it asks to wait 1h0m0s (held 5m0s, the most this waits)"},
		// The most a provider reports: it may have asked longer (its
		// detail says how long, or until when).
		{provider.MaxRetryAfter, ", it asks to wait 24h0m0s or longer (held 5m0s, the most this waits)"},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.asked); got != tc.want {
			t.Errorf("retryAfter(%v) = %q, want %q", tc.asked, got, tc.want)
		}
	}
}
