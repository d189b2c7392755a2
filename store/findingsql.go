package store

import (
	"strings"

	"github.com/retrysafe/retrysafe/model"
)

// FindingStaledBySQL is model.Outcome.StalesFinding in SQL: a condition on
// the attempts column outcome (e.g. "b.outcome") that holds when an attempt
// with it, recorded after a lookup, makes the lookup's finding stale. Both
// drivers build their staleness from it, so neither can drift from the
// model: an outcome the model says sent nothing (a replay, a conflict, a
// refusal, an expiry, a lookup) leaves the finding standing; any other —
// an outcome a later schema adds included — stales it.
func FindingStaledBySQL(outcome string) string {
	neutral := model.FindingNeutralOutcomes()
	quoted := make([]string, len(neutral))
	for i, o := range neutral {
		// Outcomes are lower-case words and underscores (the schema's
		// CHECK): nothing to escape, but never trust that silently.
		if strings.ContainsAny(string(o), `'\`) {
			panic("store: outcome " + string(o) + " cannot be written into SQL")
		}
		quoted[i] = "'" + string(o) + "'"
	}
	return outcome + " NOT IN (" + strings.Join(quoted, ", ") + ")"
}

// LaterAttemptStalesSQL is whether an attempt that stales a finding
// (FindingStaledBySQL) came after the attempt aliased a (an SQL alias of
// attempts): the EXISTS both drivers' finding queries share.
func LaterAttemptStalesSQL(a string) string {
	return `EXISTS (SELECT 1 FROM attempts b WHERE b.operation_id = ` + a + `.operation_id AND b.seq > ` + a + `.seq AND ` +
		FindingStaledBySQL("b.outcome") + `)`
}
