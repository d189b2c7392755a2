package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// unknownWithDelivery makes an unknown operation whose effect the
// provider holds (the reply was lost after it applied).
func unknownWithDelivery(t *testing.T, l *ledger, key string) {
	t.Helper()
	if res := l.call(notify("acme", key, "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); res.Class != model.ClassUnknown {
		t.Fatalf("lost reply: %+v; want unknown", res)
	}
}

// unknownWithoutDelivery makes an unknown operation the provider never
// applied (the caller gave up before the slow provider took it).
func unknownWithoutDelivery(t *testing.T, l *ledger, key string) {
	t.Helper()
	was := l.svc.DispatchTimeout
	l.svc.DispatchTimeout = 20 * time.Millisecond
	defer func() { l.svc.DispatchTimeout = was }()
	if res := l.call(notify("acme", key, "a@example.com"), reconcile.CallOptions{Faults: provider.Faults{Delay: time.Second}}); res.Class != model.ClassUnknown {
		t.Fatalf("timed out: %+v; want unknown", res)
	}
	// The tests that use it mean a lookup after the grace (a provider
	// still processing the request is grace_test's).
	if l.clock != nil {
		l.clock.Advance(l.svc.Lease + l.svc.DispatchGrace("sandbox"))
	} else {
		l.svc.Grace = -1
	}
}

func triage(t *testing.T, svc *reconcile.Service, opt reconcile.TriageOptions) reconcile.TriageReport {
	t.Helper()
	if opt.By == "" {
		opt.By = "triage by test"
	}
	if opt.Rate == 0 {
		opt.Rate = 10000
	}
	rep, err := svc.Triage(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Each kind of answer a provider gives, as a finding: has it, has nothing,
// down (cannot tell — never "nothing"), slow (a timeout: cannot tell).
// None of them moves the operation.
func TestTriageRecordsWhatTheProviderSays(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, l *ledger)
		want    model.FindingKind
		ref     bool
		detail  string
		tallied func(reconcile.TriageTally) int
	}{
		{"has it", func(t *testing.T, l *ledger) { unknownWithDelivery(t, l, "k") },
			model.FindingHasIt, true, "delivered", func(x reconcile.TriageTally) int { return x.HasIt }},
		{"has nothing", func(t *testing.T, l *ledger) { unknownWithoutDelivery(t, l, "k") },
			model.FindingHasNothing, false, "holds no delivery", func(x reconcile.TriageTally) int { return x.HasNothing }},
		{"provider down", func(t *testing.T, l *ledger) {
			unknownWithoutDelivery(t, l, "k")
			l.sb.Close() // the provider's store is gone: it cannot answer
		}, model.FindingCannotTell, false, "closed", func(x reconcile.TriageTally) int { return x.CannotTell }},
		{"slow provider", func(t *testing.T, l *ledger) {
			unknownWithoutDelivery(t, l, "k")
			l.sb.SetLookupDelay(2 * time.Second)
			l.svc.LookupTimeout = 50 * time.Millisecond
		}, model.FindingCannotTell, false, "no answer within 50ms", func(x reconcile.TriageTally) int { return x.CannotTell }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			c.setup(t, l)
			before := l.op("acme", "k")
			rep := triage(t, l.svc, reconcile.TriageOptions{})
			if rep.Candidates != 1 || rep.Checked != 1 || len(rep.Providers) != 1 || c.tallied(rep.Providers[0]) != 1 || !rep.Recorded {
				t.Errorf("report %+v; want one %s", rep, c.want)
			}
			d := l.detail("acme", "k")
			f := d.Operation.Finding
			if f == nil || f.Kind != c.want || (f.Ref != "") != c.ref || !strings.Contains(f.Detail, c.detail) || f.Stale || f.By != "triage by test" || f.Provider != "sandbox" {
				t.Fatalf("finding %+v; want %s (ref %v, detail ~%q)", f, c.want, c.ref, c.detail)
			}
			last := d.Attempts[len(d.Attempts)-1]
			if last.Outcome != model.OutcomeLookup || last.Finding != c.want {
				t.Errorf("last attempt %+v; want a %s lookup", last, c.want)
			}
			if d.Operation.State != model.StateUnknown || d.Operation.Version != before.Version || d.Operation.UpdatedAt != before.UpdatedAt {
				t.Errorf("the finding moved the operation: %s v%d; want unknown v%d", d.Operation.State, d.Operation.Version, before.Version)
			}
		})
	}
}

// Findings that change between runs are all kept; the latest is shown; a
// refused retry leaves it standing, a later provider answer makes it stale.
func TestTriageKeepsEveryFindingAndShowsTheLatest(t *testing.T) {
	l := newLedger(t)
	unknownWithDelivery(t, l, "k")
	l.sb.SetLookupDelay(2 * time.Second)
	l.svc.LookupTimeout = 30 * time.Millisecond
	triage(t, l.svc, reconcile.TriageOptions{})
	if f := l.op("acme", "k").Finding; f == nil || f.Kind != model.FindingCannotTell {
		t.Fatalf("first run, slow provider: %+v; want cannot tell", f)
	}
	l.sb.SetLookupDelay(0)
	triage(t, l.svc, reconcile.TriageOptions{By: "second run"})
	d := l.detail("acme", "k")
	var kinds []model.FindingKind
	for _, a := range d.Attempts {
		if a.Outcome == model.OutcomeLookup {
			kinds = append(kinds, a.Finding)
		}
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]model.FindingKind{model.FindingCannotTell, model.FindingHasIt}) {
		t.Errorf("lookups kept: %v; want cannot tell, then has it", kinds)
	}
	if f := d.Operation.Finding; f == nil || f.Kind != model.FindingHasIt || f.By != "second run" || f.Stale {
		t.Errorf("latest finding %+v; want the second run's has it", f)
	}
	// A retry of the unknown key is refused (and recorded): it sent
	// nothing, so the provider knows no more and the finding stands.
	if res := l.call(notify("acme", "k", "a@example.com"), reconcile.CallOptions{}); res.Class != model.ClassUnknown || res.Outcome != model.OutcomeRefused {
		t.Fatalf("retry: %+v", res)
	}
	if f := l.op("acme", "k").Finding; f == nil || f.Stale || !f.Conclusive() {
		t.Errorf("after a refused retry the finding is %+v; want it standing", f)
	}
	// A late answer of the lost request is news from the provider: the
	// finding is stale.
	op := l.op("acme", "k")
	if err := l.st.WithTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLateResult, Fingerprint: op.Fingerprint,
			Error: "provider said no definite answer (reply lost)", WorkerID: "w", StartedAt: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	if f := l.op("acme", "k").Finding; f == nil || !f.Stale || f.Conclusive() {
		t.Errorf("after a late answer the finding is %+v; want stale", f)
	}
}

// The candidates: unknown operations and in-progress ones past their
// lease, with a provider, in the tenant and provider asked for.
func TestTriageAsksUnknownsAndEndedLeasesOnly(t *testing.T) {
	clk := newClock()
	l := newLedger(t, withClock(clk))
	unknownWithDelivery(t, l, "unknown")
	// An honouring provider's lost reply leaves the claim in progress.
	if res := l.call(notify("acme", "claimed", "b@example.com"), reconcile.CallOptions{Provider: "sandbox-idem", Faults: provider.Faults{LoseReply: true}}); res.Class != model.ClassInProgress {
		t.Fatalf("honoured lost reply: %+v", res)
	}
	if res := l.call(task("acme", "local", "a task"), reconcile.CallOptions{}); res.Class != model.ClassDone {
		t.Fatalf("local call: %+v", res)
	}
	if res := l.call(notify("globex", "other", "c@example.com"), reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}}); res.Class != model.ClassUnknown {
		t.Fatalf("globex: %+v", res)
	}
	keys := func(opt reconcile.TriageOptions) string {
		ops, err := l.svc.TriageCandidates(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, op := range ops {
			out = append(out, op.Tenant+"/"+op.Key)
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name    string
		advance time.Duration
		opt     reconcile.TriageOptions
		want    string
	}{
		{"lease running", 0, reconcile.TriageOptions{}, "globex/other acme/unknown"},
		{"one tenant", 0, reconcile.TriageOptions{Tenant: "acme"}, "acme/unknown"},
		{"lease ended", reconcile.DefaultLease + time.Second, reconcile.TriageOptions{}, "globex/other acme/unknown acme/claimed"},
		{"one provider", 0, reconcile.TriageOptions{Provider: "sandbox-idem"}, "acme/claimed"},
	}
	for _, c := range cases {
		clk.Advance(c.advance)
		if got := keys(c.opt); got != c.want {
			t.Errorf("%s: candidates %q; want %q", c.name, got, c.want)
		}
	}
	rep := triage(t, l.svc, reconcile.TriageOptions{Tenant: "acme"})
	if rep.Candidates != 2 || rep.Totals().HasIt != 2 {
		t.Errorf("acme's triage: %+v; want both found", rep)
	}
	if f := l.op("acme", "claimed").Finding; f == nil || f.Kind != model.FindingHasIt || l.op("acme", "claimed").State != model.StateInProgress {
		t.Errorf("the claim past its lease: finding %+v; want has it, still in progress", f)
	}
	if f := l.op("globex", "other").Finding; f != nil {
		t.Errorf("another tenant's operation was asked about: %+v", f)
	}
}

// Each provider gets at most Rate lookups a second, however many run at
// once; progress hears every operation once, in order of completion.
func TestTriagePacesEachProvider(t *testing.T) {
	l := newLedger(t, fast())
	const n = 12
	for i := range n {
		unknownWithDelivery(t, l, fmt.Sprintf("k%d", i))
	}
	var mu sync.Mutex
	var done []int
	start := time.Now()
	rep := triage(t, l.svc, reconcile.TriageOptions{Concurrency: 8, Rate: 20, Progress: func(ev reconcile.TriageEvent) {
		mu.Lock()
		done = append(done, ev.Done)
		mu.Unlock()
		if ev.Total != n {
			t.Errorf("progress total %d, want %d", ev.Total, n)
		}
	}})
	// A burst of one at 20/s: the 12th lookup starts 11/20 s after the first.
	if el := time.Since(start); el < 540*time.Millisecond {
		t.Errorf("%d lookups at 20/s took %v; the rate limit was not kept", n, el)
	}
	if rep.Totals().HasIt != n || len(done) != n || done[n-1] != n {
		t.Errorf("report %+v, progress %v", rep.Totals(), done)
	}
}

// Read-only: the findings are shown (reported), and nothing is written.
func TestTriageOnAReadOnlyLedgerRecordsNothing(t *testing.T) {
	l := newLedger(t)
	unknownWithDelivery(t, l, "k")
	before := l.snapshot()
	ro, err := sqlite.Open(l.path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	svc := reconcile.New(ro, config.Default().Tools, l.sb.Providers())
	var seen []reconcile.TriageEvent
	rep := triage(t, svc, reconcile.TriageOptions{Progress: func(ev reconcile.TriageEvent) { seen = append(seen, ev) }})
	if rep.Recorded || len(seen) != 1 || seen[0].Looked.Recorded || seen[0].Looked.Finding.Kind != model.FindingHasIt || seen[0].Err != nil {
		t.Errorf("read-only triage: %+v, events %+v; want one has-it finding shown, not recorded", rep, seen)
	}
	if l.snapshot() != before {
		t.Error("a read-only triage wrote to the ledger")
	}
}

// A review by finding proposes "mark applied" for a fresh "has it" (the
// reference is the evidence), "mark not applied" for a fresh "has nothing"
// only from an authoritative provider, and nothing for the rest; written
// through DecideMany, each decision is refused if its finding moved.
func TestReviewByFindingProposesOnlyWhatTheFindingsSupport(t *testing.T) {
	l := newLedger(t)
	unknownWithDelivery(t, l, "found")
	unknownWithoutDelivery(t, l, "nothing")
	unknownWithDelivery(t, l, "moved")
	triage(t, l.svc, reconcile.TriageOptions{})
	unknownWithoutDelivery(t, l, "unchecked")
	list := func() []model.Operation {
		ops, err := l.st.List(context.Background(), store.ListQuery{State: model.StateUnknown})
		if err != nil {
			t.Fatal(err)
		}
		return ops
	}
	keysOf := func(ts []reconcile.Target) string {
		var out []string
		for _, x := range ts {
			out = append(out, x.Key)
		}
		return strings.Join(out, " ")
	}
	// Not authoritative: "has nothing" is shown, decided one by one.
	r := l.svc.ReviewByFinding(list())
	if keysOf(r.Apply) != "moved found" || len(r.NotApplied) != 0 || len(r.OneByOne) != 1 || r.OneByOne[0].Key != "nothing" || len(r.Left) != 1 {
		t.Fatalf("review without an authoritative provider: apply %q, not applied %q, one by one %v, left %d",
			keysOf(r.Apply), keysOf(r.NotApplied), r.OneByOne, len(r.Left))
	}
	l.svc.AuthoritativeLookups = map[string]bool{"sandbox": true}
	ops := list()
	r = l.svc.ReviewByFinding(ops)
	if keysOf(r.NotApplied) != "nothing" || len(r.OneByOne) != 0 {
		t.Fatalf("review with an authoritative provider: not applied %q, one by one %v", keysOf(r.NotApplied), r.OneByOne)
	}
	// "moved" is looked up again after the screen showed it.
	if _, _, err := l.svc.CheckAndRecord(context.Background(), "acme", "moved", "another look"); err != nil {
		t.Fatal(err)
	}
	d := reconcile.Decision{Operator: "oncall", Reason: "triage findings reviewed"}
	out, err := l.svc.DecideMany(context.Background(), model.ActionMarkApplied, d, r.Apply)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]reconcile.Verdict{}
	for _, o := range out {
		verdicts[o.Key] = o.Verdict
	}
	if verdicts["found"] != reconcile.VerdictWritten || verdicts["moved"] != reconcile.VerdictStale {
		t.Errorf("verdicts %v; want found written, moved refused as stale", verdicts)
	}
	found := l.detail("acme", "found")
	ref := r.Apply[1].Finding.Ref
	if found.Operation.State != model.StateApplied || found.Operation.ProviderRef != ref || len(found.Decisions) != 1 || found.Decisions[0].Evidence != ref {
		t.Errorf("found: %s ref %q decisions %+v; want applied with %s as evidence", found.Operation.State, found.Operation.ProviderRef, found.Decisions, ref)
	}
	out, err = l.svc.DecideMany(context.Background(), model.ActionMarkNotApplied, d, r.NotApplied)
	if err != nil || len(out) != 1 || out[0].Verdict != reconcile.VerdictWritten {
		t.Fatalf("not applied on the authoritative finding: %+v %v", out, err)
	}
	nothing := l.detail("acme", "nothing")
	if nothing.Operation.State != model.StateNotApplied || !strings.HasPrefix(nothing.Decisions[0].Evidence, "provider lookup: ") {
		t.Errorf("nothing: %s, decisions %+v; want not applied on the lookup's evidence", nothing.Operation.State, nothing.Decisions)
	}
}

// A provider's answer is the provider's: a reference with escape sequences
// or longer than evidence may be (an HTTP provider's ref_pointer can pick
// any string) must not fail the whole review. Each "has it" still gets
// written, with the reference as inert, bounded text for its evidence.
func TestReviewByFindingWritesEvenWhenAProviderReferenceIsHostile(t *testing.T) {
	l := newLedger(t)
	unknownWithDelivery(t, l, "plain")
	unknownWithDelivery(t, l, "hostile")
	triage(t, l.svc, reconcile.TriageOptions{})
	hostileRef := "ref\x1b]52;c;SGk=\x07\u202e" + strings.Repeat("Q", 3000)
	op := l.op("acme", "hostile")
	err := l.st.WithAttemptTx(context.Background(), func(tx store.Tx) error {
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
			WorkerID: "triage by test", ProviderRef: hostileRef, Finding: model.FindingHasIt, Detail: "found", StartedAt: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := l.st.List(context.Background(), store.ListQuery{State: model.StateUnknown})
	if err != nil {
		t.Fatal(err)
	}
	r := l.svc.ReviewByFinding(ops)
	if len(r.Apply) != 2 {
		t.Fatalf("review proposes %d to mark applied; want 2", len(r.Apply))
	}
	d := reconcile.Decision{Operator: "oncall", Reason: "triage findings reviewed"}
	out, err := l.svc.DecideMany(context.Background(), model.ActionMarkApplied, d, r.Apply)
	if err != nil {
		t.Fatalf("one hostile reference failed the whole review: %v", err)
	}
	for _, o := range out {
		if o.Verdict != reconcile.VerdictWritten {
			t.Errorf("%s: %s (%v); want written", o.Key, o.Verdict, o.Err)
		}
	}
	got := l.detail("acme", "hostile")
	if len(got.Decisions) != 1 || !strings.HasPrefix(got.Decisions[0].Evidence, `ref\x1b]52;c;SGk=\x07\u202eQQ`) || len(got.Decisions[0].Evidence) > reconcile.MaxReasonLen {
		t.Errorf("hostile: decisions %+v; want the reference escaped and bounded as evidence", got.Decisions)
	}
}

// A recorded finding binds every path to a decision, not only the console
// that shows it: after triage found the effect, "not applied" — one key or
// many, from ops resolve or the Go API — is refused without the explicit
// second confirmation; the retry that follows would send it again.
func TestADecisionAgainstTheRecordedFindingNeedsTheSecondConfirmation(t *testing.T) {
	for _, tc := range againstHasIt {
		t.Run(string(tc.action), func(t *testing.T) {
			l := newLedger(t)
			unknownWithDelivery(t, l, "one")
			unknownWithDelivery(t, l, "many")
			triage(t, l.svc, reconcile.TriageOptions{})
			ctx := context.Background()
			d := reconcile.Decision{Tenant: "acme", Key: "one", Operator: "oncall", Reason: tc.reason, Evidence: tc.evidence, WithinGrace: true}
			err := tc.decide(l.svc, ctx, d)
			if !model.IsCode(err, model.CodeIllegal) || !strings.Contains(err.Error(), "found the effect") || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("one key against a has-it finding: %v; want refused, naming the finding and %q", err, tc.names)
			}
			out, err := l.svc.DecideMany(ctx, tc.action, d, []reconcile.Target{reconcile.TargetOf(*l.op("acme", "many"))})
			if err != nil || len(out) != 1 || out[0].Verdict != reconcile.VerdictIllegal {
				t.Errorf("many against a has-it finding: %+v %v; want refused as illegal", out, err)
			}
			for _, k := range []string{"one", "many"} {
				if op := l.op("acme", k); op.State != model.StateUnknown {
					t.Errorf("%s is %s after refused decisions; want unknown", k, op.State)
				}
			}
			d.Override = true
			if err := tc.decide(l.svc, ctx, d); err != nil {
				t.Errorf("with the second confirmation: %v", err)
			}
			if op := l.op("acme", "one"); op.State != tc.to {
				t.Errorf("with the second confirmation one is %s; want %s", op.State, tc.to)
			}
		})
	}
}

// againstHasIt are the decisions against a "has it" finding: "not
// applied", and authorizing a new key, which makes the effect a second time
// (the new key's first call sends it again).
var againstHasIt = []struct {
	action           model.Action
	reason, evidence string
	names            string // what the refusal must name besides the finding
	decide           func(*reconcile.Service, context.Context, reconcile.Decision) error
	to               model.State
}{
	{model.ActionMarkNotApplied, "looks unsent", "ticket 7", "", func(s *reconcile.Service, ctx context.Context, d reconcile.Decision) error {
		_, err := s.MarkNotApplied(ctx, d)
		return err
	}, model.StateNotApplied},
	{model.ActionAuthorizeKey, "send it again", "", "--against-finding", func(s *reconcile.Service, ctx context.Context, d reconcile.Decision) error {
		_, n, err := s.AuthorizeNewKey(ctx, d)
		if err == nil && n.State != model.StateAuthorized {
			return fmt.Errorf("the new key is %s; want authorized", n.State)
		}
		return err
	}, model.StateSuperseded},
}
