package reconcile_test

import (
	"context"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// A review by finding sorts the rows it leaves to decide one by one by
// why: a "has nothing" whose latest lookup could not tell (an earlier
// one found nothing — the provider may be authoritative) is not a
// provider "not declared authoritative".
func TestAReviewByFindingSaysWhyARowIsDecidedOneByOne(t *testing.T) {
	for _, tc := range []struct {
		name          string
		authoritative bool
		findings      []model.FindingKind
		want          string // "one-by-one", "later-unsure", "not-applied"
	}{
		{"authoritative, nothing then cannot tell", true, []model.FindingKind{model.FindingHasNothing, model.FindingCannotTell}, "later-unsure"},
		{"not authoritative, nothing then cannot tell", false, []model.FindingKind{model.FindingHasNothing, model.FindingCannotTell}, "later-unsure"},
		{"not authoritative, nothing", false, []model.FindingKind{model.FindingHasNothing}, "one-by-one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, fast())
			if tc.authoritative {
				l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
			}
			unknownWithDelivery(t, l, "k")
			recordHistory(t, l, "k", "", tc.findings)
			ops, err := l.st.List(context.Background(), store.ListQuery{State: model.StateUnknown})
			if err != nil {
				t.Fatal(err)
			}
			r := l.svc.ReviewByFinding(ops)
			got := map[string]int{"one-by-one": len(r.OneByOne), "later-unsure": len(r.LaterUnsure), "not-applied": len(r.NotApplied) + len(r.Recheck)}
			for k, n := range got {
				if want := map[bool]int{true: 1}[k == tc.want]; n != want {
					t.Errorf("%s: %d rows; want %d (review %v)", k, n, want, got)
				}
			}
		})
	}
}
