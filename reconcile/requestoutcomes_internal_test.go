package reconcile

import (
	"slices"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// A batched read of many operations' requests (RequestHistories) asks the
// ledger only for the attempts of requestOutcomes: every attempt of any
// other outcome must be one lastRequest skips, whatever it carries, or the
// bulk paths would read a different grace than one operation's path —
// and every one of requestOutcomes is one it may read.
func TestRequestOutcomesAreEveryOutcomeLastRequestReads(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := &model.Operation{State: model.StateInProgress, LeaseUntil: t0.Add(time.Hour)}
	for _, o := range model.AllOutcomes {
		for _, c := range []struct {
			name string
			a    model.Attempt
			ops  []*model.Operation
		}{
			{"bare", model.Attempt{Outcome: o, StartedAt: t0}, nil},
			{"with a duration", model.Attempt{Outcome: o, StartedAt: t0, Duration: time.Minute}, nil},
			{"no definite answer", model.Attempt{Outcome: o, StartedAt: t0, Duration: time.Minute, Error: "no definite answer"}, nil},
			{"a reference", model.Attempt{Outcome: o, StartedAt: t0, ProviderRef: "ref-1", Error: "no definite answer"}, nil},
			{"a running claim", model.Attempt{Outcome: o, StartedAt: t0}, []*model.Operation{running}},
		} {
			sent, waited := lastRequest([]model.Attempt{c.a}, time.Minute, c.ops...)
			read := !sent.IsZero() || !waited.IsZero()
			if read && !slices.Contains(requestOutcomes, o) {
				t.Errorf("%s, %s: lastRequest reads it (sent %s, waited until %s), but requestOutcomes leaves it out", o, c.name, sent, waited)
			}
		}
	}
	for _, o := range requestOutcomes {
		if !o.Valid() {
			t.Errorf("requestOutcomes holds %q, no outcome", o)
		}
		a := model.Attempt{Outcome: o, StartedAt: t0, Duration: time.Minute, Error: "no definite answer"}
		if sent, _ := lastRequest([]model.Attempt{a}, time.Minute); sent.IsZero() {
			t.Errorf("requestOutcomes holds %s, which lastRequest never reads", o)
		}
	}
}
