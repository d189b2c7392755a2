package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// A stale finding says why in the CLI's words: what made it stale is an
// attempt that may have reached the provider, not any attempt.
func TestAStaleFindingSaysAnAttemptThatMayHaveReachedTheProviderCameAfterIt(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	e := env{now: now, loc: time.UTC}
	got := findingSentence(e, &model.Finding{Kind: model.FindingHasIt, Ref: "sbx_1", Provider: "sandbox", At: now.Add(-time.Minute), Stale: true})
	want := "stale: an attempt that may have reached the provider came after it; check again (c)"
	if !strings.Contains(got, want) {
		t.Fatalf("finding reads %q, want it to say %q", got, want)
	}
	if strings.Contains(got, "another attempt") {
		t.Fatalf("finding still says any attempt: %q", got)
	}
}
