// Package storetest is the conformance suite every ledger driver runs, in
// the way river tests its drivers with riverdrivertest: one set of tests,
// written against the store interfaces only, that SQLite and PostgreSQL
// must both pass. A driver's test package calls Main from its TestMain (so
// the suite can re-execute the test binary as a worker process) and Run
// from one test:
//
//	func TestMain(m *testing.M) { storetest.Main(m, driver) }
//	func TestConformance(t *testing.T) { storetest.Run(t, driver) }
//
// Crash and concurrency tests use real processes (the test binary, run
// again), killed for real — never goroutines standing in for hosts.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/internal/reexec"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// Driver is what the suite needs of an implementation.
type Driver struct {
	// Name says which driver a failure is about.
	Name string
	// NewLocation returns where a new ledger for one test lives (a file in
	// t.TempDir(), a fresh PostgreSQL schema) — not created yet — and
	// removes it when the test ends.
	NewLocation func(t testing.TB) string
	// Open opens the ledger at location; with Options.Create it makes it.
	Open func(location string, o store.Options) (store.Ledger, error)
	// Exec runs one plain SQL statement (no parameters, valid on every
	// driver) on the ledger at location from a connection of its own,
	// outside the ledger's contract: how the suite breaks invariants on
	// purpose and writes rows the contract's methods never would.
	Exec func(t testing.TB, location, sql string) error
}

// Main is the TestMain of a driver's test package: a test binary that was
// re-executed as one of the suite's worker processes does that work and
// exits; otherwise the tests run.
func Main(m *testing.M, d Driver) {
	reexec.Main(m, map[string]func(string) int{childWorker: func(spec string) int { return runChild(d, spec) }})
}

// Run runs the whole suite on d, each test on a ledger of its own, in
// parallel.
func Run(t *testing.T, d Driver) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"SeedLostResponseAfterCommit", testSeedLostResponseAfterCommit},
		{"SeedFailureBeforeCommitRollsBackEverything", testSeedFailureBeforeCommit},
		{"SeedSameKeyIsOneOperation", testSeedSameKeyIsOneOperation},
		{"SeedTwoKeysAreTwoEffects", testSeedTwoKeysAreTwoEffects},
		{"SeedTenantScope", testSeedTenantScope},
		{"SeedInvalidInputWritesNothing", testSeedInvalidInputWritesNothing},
		{"SeedConcurrentProcessesOneKeyOneEffect", testConcurrentProcessesOneKeyOneEffect},
		{"CompareAndSetRefusesStaleVersionAndState", testCompareAndSet},
		{"CompareAndSetAcrossProcessesLosesNoUpdate", testCompareAndSetAcrossProcesses},
		{"KilledWriterLeavesNothingAndBlocksNobody", testKilledWriter},
		{"EveryStateOutcomeAndActionIsStorableAndNoOtherIs", testEnumsStorable},
		{"DecisionsAreKeptInOrderWithTheOperation", testDecisions},
		{"RetentionCompactsToTombstonesAndKeepsEffects", testRetention},
		{"RelaxedAttemptTxRerunsDurablyWhenItWritesMore", testRelaxedAttemptTx},
		{"RolledBackTransactionLeavesNothing", testRollback},
		{"ListPagesFiltersAndSearches", testList},
		{"CountsAndTenantsFollowEveryChange", testCounts},
		{"DetailReadsTheWholeOperation", testDetail},
		{"WatchSeesCommitsOfOtherConnectionsAndProcesses", testWatch},
		{"ErrorsByClass", testErrorsByClass},
		{"ReadOnlyRefusesWritesAndWritesNothing", testReadOnly},
		{"ExpiredLeasesListsOnlyEndedLeases", testExpiredLeases},
		{"AuditFindsBrokenInvariants", testAudit},
		{"ReopenKeepsEverything", testReopen},
		{"DecisionsListTheAuditLogNewestFirstWithFilters", testDecisionsAuditLog},
		{"CountsCountExpiredLeases", testCountsExpiredLeases},
		{"TokensKeepTheHashAndRevokeOnce", testTokens},
		{"StateAgesCountEachTenantsOperationsInAState", testStateAges},
		{"CompactExpiredRefusesANonPositiveTombstoneWindow", testCompactRefusesNonPositiveWindow},
		{"FindingsAreLatestLookupsStaleAfterAnotherAttemptAndFilterable", testFindings},
		{"LatestConclusiveFindingOutlivesALaterCannotTell", testLatestConclusiveFinding},
		{"ListsCarryTheEarlierFindingThatBindsAndFilterByIt", testBindingFindingInLists},
		{"EveryLookupHistoryListsTheFindingTheWriteRuleBindsBy", testBindingFindingEveryHistory},
		{"FindingStaleOnlyAfterAnAttemptThatMayHaveReachedTheProvider", testFindingStaleOnlyAfterAnAttemptThatMayHaveReachedTheProvider},
		{"SentToFindsOperationsOfAnyTenantSentToAProvider", testSentTo},
		{"LedgerIDIsMadeOnceKeptAndDiffersBetweenLedgers", testLedgerID},
		{"TxLedgerIDIsTheLedgersIDReadInsideTheTransaction", testTxLedgerID},
		{"ProviderFileIsRecordedOncePerProviderAndKept", testProviderFile},
		{"ProviderFileMarkOnlyMovesForwardAndStartsAgainWithAnotherFile", testProviderFileMark},
		{"LocalEffectsCommitWithTheirOperationAndRollBackWithIt", testLocalEffects},
		{"ListPagesInEverySortOrderBothWays", testListSortPaging},
		{"ListFiltersByProviderAndAge", testListProviderAndAge},
		{"ListPagesOnFromACursorRowThatMovedOrWent", testListCursorRowMovedOrGone},
		{"ReplaysSeeEveryChangeAndNoRolledBackOne", testReplaysSeeEveryChangeAndNoRolledBackOne},
		{"MidTransactionFailureWritesNothing", testMidTransactionFailureWritesNothing},
		{"TombstoneIsReadOnTheReadSideEvenReadOnly", testTombstoneRead},
		{"ClaimHonoursKeysIsKeptAsWrittenAndNeedsAProvider", testClaimHonoursKeys},
		{"ClaimRecordIsKeptAsWrittenAndNeedsAProvider", testClaimRecord},
		{"RetryNotBeforeIsKeptAsWrittenAndNeedsAProvider", testRetryNotBefore},
		{"DecisionsOnAnInProgressNobodyHoldsAndNoneOnALiveLease", testDecisionsOnAnInProgressNobodyHolds},
		{"ADecisionOnAClaimRenewedMeanwhileFailsWritingNothing", testADecisionOnAClaimRenewedMeanwhileFails},
		{"ALateResultAfterADecisionOnAnUnheldClaimIsLate", testALateResultAfterADecisionOnAnUnheldClaim},
		{"RequestHistoriesReadManyOperationsRequestsAtOnce", testRequestHistories},
		{"PageLimitsAreReadAsAskedUpToTheLargestAndRefusedBeyond", testPageLimits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newHarness(t, d))
		})
	}
}

// harness is one test's ledger.
type harness struct {
	d   Driver
	loc string
	L   store.Ledger
	now time.Time
}

func newHarness(t *testing.T, d Driver) *harness {
	h := &harness{d: d, loc: d.NewLocation(t), now: time.UnixMilli(1767225600000).UTC()} // 2026-01-01
	h.L = h.open(t, store.Options{Create: true})
	return h
}

// open opens another handle on the test's ledger (another connection
// pool, as another process would), closed when the test ends.
func (h *harness) open(t testing.TB, o store.Options) store.Ledger {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return h.now }
	}
	l, err := h.d.Open(h.loc, o)
	if err != nil {
		t.Fatalf("%s: open %s: %v", h.d.Name, h.loc, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func (h *harness) exec(t testing.TB, sql string) {
	t.Helper()
	if err := h.d.Exec(t, h.loc, sql); err != nil {
		t.Fatalf("%s: %s: %v", h.d.Name, sql, err)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (h *harness) snapshot(t testing.TB, skip ...string) string {
	t.Helper()
	s, err := h.L.Snapshot(ctxT(t), skip...)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

func (h *harness) tx(t testing.TB, fn func(store.Tx) error) {
	t.Helper()
	if err := h.L.WithTx(ctxT(t), fn); err != nil {
		t.Fatalf("transaction: %v", err)
	}
}

func (h *harness) audit(t testing.TB) {
	t.Helper()
	problems, err := h.L.Audit(ctxT(t))
	if err != nil || len(problems) > 0 {
		t.Errorf("audit: %v %v", problems, err)
	}
}

const fingerprint = "0000000000000000000000000000000000000000000000000000000000000000"

// newOp is an operation of tenant in state st, valid for the schema.
func newOp(tenant, key string, st model.State) *model.Operation {
	op := &model.Operation{Tenant: tenant, Key: key, Tool: "create_support_task", PayloadVersion: 1,
		Args: []byte(`{"subject":"` + key + `"}`), Summary: "subject " + key, Fingerprint: fingerprint, State: st}
	switch st {
	case model.StateApplied, model.StateFailed:
		op.Receipt = []byte(`{"status":"created"}`)
	case model.StateInProgress:
		op.LeaseUntil = time.UnixMilli(1767225600000 + 3600_000).UTC()
	}
	return op
}

// createApplied is the seed's create path inside one transaction: claim
// the key if nobody has, perform the local effect, store the receipt that
// names it. created reports whether this call made the operation.
func createApplied(tx store.Tx, tenant, key string) (created bool, err error) {
	return createAppliedIn(tx, model.TableTasks, tenant, key)
}

// effectTool is the tool whose effect createAppliedIn writes in table: the
// generic local_effects table keeps a team's own tool's rows.
func effectTool(table model.LocalTable) string {
	switch table {
	case model.TableReportJobs:
		return "create_report_job"
	case model.TableLocalEffects:
		return "team_local_tool"
	}
	return "create_support_task"
}

// createAppliedIn is createApplied with the effect in table.
func createAppliedIn(tx store.Tx, table model.LocalTable, tenant, key string) (created bool, err error) {
	if _, err := tx.GetOperation(tenant, key); err == nil {
		return false, nil
	} else if !model.IsCode(err, model.CodeNotFound) {
		return false, err
	}
	op := newOp(tenant, key, model.StateApplied)
	op.Tool = effectTool(table)
	if err := tx.InsertOperation(op); err != nil {
		return false, err
	}
	res, err := tx.InsertLocalEffect(store.LocalEffect{Table: table, Tool: op.Tool, Tenant: tenant, OperationID: op.ID, Text: key, Args: op.Args})
	if err != nil {
		return false, err
	}
	if err := tx.SetReceipt(op.ID, []byte(`{"status":"created","result":`+string(res)+`}`)); err != nil {
		return false, err
	}
	return true, tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeCreated, Fingerprint: op.Fingerprint})
}

func mustCode(t *testing.T, what string, err error, code model.Code) {
	t.Helper()
	if !model.IsCode(err, code) {
		t.Errorf("%s: err = %v (code %q); want %s", what, err, model.CodeOf(err), code)
		return
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
		t.Errorf("%s: error is not one line: %q", what, msg)
	}
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%02d", i)
	}
	return out
}
