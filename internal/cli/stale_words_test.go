package cli

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A stale finding says what made it stale: an attempt that may have
// reached the provider came after it (a refused retry, a replay send
// nothing and stale nothing) — not "another attempt", which a refused
// retry is too. ops show's finding line and a bulk decision's "not
// decided" reason both.
func TestAStaleFindingSaysAnAttemptMayHaveReachedTheProvider(t *testing.T) {
	db := newLedgerFile(t)
	if _, _, code := cli(t, callArgs(db, "acme", "k", "send_notification", notifyArgs, "--fault", "lose-reply")...); code != 5 {
		t.Fatalf("setup: exit %d", code)
	}
	recordHasNothing(t, db, "acme", "k")
	recordLateAnswer(t, db, "acme", "k") // came back from the provider: stales the finding
	const words = "an attempt that may have reached the provider came after it"
	out, errText, code := cli(t, "ops", "show", "--db", db, "--tenant", "acme", "--key", "k")
	if code != 0 || !strings.Contains(out, "stale ("+words+"; check again): has nothing") {
		t.Errorf("ops show: exit %d\n%s%s", code, out, errText)
	}
	// A bulk decision by finding leaves a stale one undecided, and says
	// why.
	op := model.Operation{Tenant: "acme", Key: "k", State: model.StateUnknown, Provider: "sandbox",
		Finding: &model.Finding{Kind: model.FindingHasNothing, Provider: "sandbox", Stale: true}}
	_, left := targetsByFinding(&reconcile.Service{}, model.ActionMarkNotApplied, []model.Operation{op})
	if len(left) != 1 || left[0] != "its finding (has nothing) is stale: "+words+"; check it again" {
		t.Errorf("bulk by finding: %q", left)
	}
}
