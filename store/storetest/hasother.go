package storetest

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// HasOtherRowsAtSchema14 are the rows a driver's migration test writes in
// a ledger at schema 14 (before a lookup could find "has another
// request") for CheckHasOtherAfterMigration: an unknown operation t/looked
// (id 7, provider sandbox) sent once and found by a lookup by key alone
// ("has it", sbx_1). fp is a fingerprint (64 characters); the PostgreSQL
// spelling of a boolean is the same here (none is written).
func HasOtherRowsAtSchema14(fp string) []string {
	return []string{
		`INSERT INTO operations (id, tenant, op_key, tool, payload_version, args, fingerprint, state, claim_no, provider, downstream_key, created_at, updated_at)
			VALUES (7, 't', 'looked', 'send_notification', 1, '{}', '` + fp + `', 'unknown', 1, 'sandbox', 'dk-7', 1, 1)`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, started_at) VALUES (7, 1, 'dispatched', '` + fp + `', 1000)`,
		`INSERT INTO attempts (operation_id, seq, outcome, fingerprint, provider_ref, finding, detail, worker_id, started_at)
			VALUES (7, 2, 'lookup', '` + fp + `', 'sbx_1', 'has_it', 'sandbox delivered sbx_1', 'ops check by mo', 2000)`,
	}
}

// CheckHasOtherAfterMigration is what a driver's migration test checks
// once a ledger made at schema 14 with HasOtherRowsAtSchema14 is opened
// and migrated to schema 15: the lookup recorded before is kept as it
// was, and a lookup that found another request under the key
// (model.FindingHasOther) is recorded and read back faithfully — its
// reference and words, the latest finding, shown over the earlier "has
// it", selected by its filter — and is no evidence (the earlier "has it"
// is still the latest conclusive finding). The driver's own test checks
// its CHECK.
func CheckHasOtherAfterMigration(t *testing.T, s store.Ledger) {
	t.Helper()
	ctx := ctxT(t)
	op, err := s.Get(ctx, "t", "looked")
	if err != nil {
		t.Fatal(err)
	}
	if f := op.Finding; f == nil || f.Kind != model.FindingHasIt || f.Ref != "sbx_1" || f.Seq != 2 || f.Detail != "sandbox delivered sbx_1" {
		t.Fatalf("the lookup from before the migration: %+v; want has it sbx_1 at 2", f)
	}
	at := time.UnixMilli(3000).UTC()
	detail := "sandbox has a different request under this key: it holds sbx_1, which is not this operation's (sbx_1 is a send_notification request with other arguments than this operation's)"
	if err := s.WithAttemptTx(ctx, func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
			ProviderRef: "sbx_1", Finding: model.FindingHasOther, Detail: detail, WorkerID: "ops check by mo", StartedAt: at})
	}); err != nil {
		t.Fatalf("recording a has_other lookup after the migration: %v", err)
	}
	want := model.Finding{Kind: model.FindingHasOther, Provider: "sandbox", Ref: "sbx_1", Detail: detail, At: at, Seq: 3, By: "ops check by mo"}
	got, err := s.Get(ctx, "t", "looked")
	if err != nil {
		t.Fatal(err)
	}
	if got.Finding == nil || *got.Finding != want {
		t.Errorf("the has_other lookup read back: %+v\nwant %+v", got.Finding, want)
	}
	if f := got.Shown(); f == nil || f.Kind != model.FindingHasOther {
		t.Errorf("shown: %+v; want the has_other lookup", f)
	}
	if got.State != op.State || got.Version != op.Version {
		t.Errorf("the lookup moved the operation: %s v%d; want %s v%d", got.State, got.Version, op.State, op.Version)
	}
	var latest, conclusive *model.Finding
	if err := s.WithTx(ctx, func(tx store.Tx) error {
		var err error
		if latest, err = tx.LatestFinding(op.ID); err != nil {
			return err
		}
		conclusive, err = tx.LatestConclusiveFinding(op.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if latest == nil || *latest != want {
		t.Errorf("Tx.LatestFinding: %+v\nwant %+v", latest, want)
	}
	if conclusive == nil || conclusive.Kind != model.FindingHasIt || conclusive.Seq != 2 {
		t.Errorf("Tx.LatestConclusiveFinding: %+v; want the has it at 2 (has_other is no evidence)", conclusive)
	}
	list, err := s.List(ctx, store.ListQuery{Finding: model.FilterHasOther})
	if err != nil || len(list) != 1 || list[0].Key != "looked" {
		t.Errorf("the has-other filter: %+v %v; want t/looked", list, err)
	}
	if list, err := s.List(ctx, store.ListQuery{Finding: model.FilterHasIt}); err != nil || len(list) != 0 {
		t.Errorf("the has-it filter: %+v %v; want none (the latest lookup found another request)", list, err)
	}
}
