package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A 409 / in_progress is not always another attempt holding the key: a
// provider that did not apply it, or one that honours keys and gave no
// definite answer, leaves nothing in flight. The title fits every case and
// the MCP text says which one it is.
func TestInProgressWordsFitEveryCase(t *testing.T) {
	if title := kinds()[KindInProgress].Title; strings.Contains(title, "another attempt holds this key;") || !strings.Contains(title, "has not finished") {
		t.Errorf("the 409 title %q claims another attempt holds the key", title)
	}
	held := reconcile.Result{Class: model.ClassInProgress, Outcome: model.OutcomeInProgress,
		Op: &model.Operation{State: model.StateInProgress, LeaseOwner: "w2", LeaseUntil: time.Now().Add(time.Minute)}}
	if got := whatToDo(held); !strings.Contains(got, "another attempt") {
		t.Errorf("held elsewhere: %q; want it to say another attempt is in progress", got)
	}
	for _, res := range []reconcile.Result{
		{Class: model.ClassInProgress, Outcome: model.OutcomeTimedOut, Message: "outcome unknown: HTTP 500; retrying the same key re-dispatches safely",
			Op: &model.Operation{State: model.StateInProgress, LeaseOwner: "released"}},
		{Class: model.ClassInProgress, Outcome: model.OutcomeNotApplied, Op: &model.Operation{State: model.StateNotApplied}},
		{Class: model.ClassInProgress, Outcome: model.OutcomeInProgress, Op: &model.Operation{State: model.StateInProgress, LeaseOwner: "released"}},
	} {
		if got := whatToDo(res); strings.Contains(got, "another attempt") || !strings.Contains(got, "same idempotency_key") {
			t.Errorf("%s: %q; want retry with the same key, no other attempt", res.Outcome, got)
		}
	}
}

// Every 503 carries the class its row of the table names (internal).
func TestBusyProblemsHaveTheirClass(t *testing.T) {
	w := httptest.NewRecorder()
	newProblem(KindBusy, "x").write(w)
	if !strings.Contains(w.Body.String(), `"class":"internal"`) {
		t.Errorf("busy problem %s without its class", w.Body.String())
	}
}
