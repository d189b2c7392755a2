package reconcile_test

// Every transition of DESIGN.md's state table: each legal one does what the
// table says; every illegal one is refused with the ledger unchanged.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// makeState leaves tenant/key in state st, reached only through the real
// call, crash and decision paths, and returns it.
func (l *ledger) makeState(st model.State, tenant, key string) *model.Operation {
	l.t.Helper()
	r := notify(tenant, key, "ops@example.com")
	switch st {
	case model.StateApplied:
		l.call(r, reconcile.CallOptions{})
	case model.StateFailed:
		l.call(r, reconcile.CallOptions{Faults: provider.Faults{Reject: true}})
	case model.StateNotApplied:
		l.call(r, reconcile.CallOptions{Faults: provider.Faults{FailBefore: true}})
	case model.StateUnknown:
		l.call(r, reconcile.CallOptions{Faults: provider.Faults{LoseReply: true}})
	case model.StateInProgress:
		if died, res := l.callDying(r, reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
			l.t.Fatalf("call did not stop after its claim: %+v", res)
		}
	case model.StateSuperseded:
		l.makeState(model.StateUnknown, tenant, key)
		l.authorize(tenant, key, key+"-next")
	case model.StateAuthorized:
		l.makeState(model.StateUnknown, tenant, key+"-prev")
		l.authorize(tenant, key+"-prev", key)
	default:
		l.t.Fatalf("no way to make state %q", st)
	}
	op := l.op(tenant, key)
	if op.State != st {
		l.t.Fatalf("made %s/%s %s, want %s", tenant, key, op.State, st)
	}
	return op
}

func (l *ledger) authorize(tenant, key, newKey string) {
	l.t.Helper()
	if _, _, err := l.svc.AuthorizeNewKey(context.Background(), reconcile.Decision{Tenant: tenant, Key: key,
		Operator: "oncall", Reason: "provider cannot tell; send again deliberately", NewKey: newKey, WithinGrace: true}); err != nil {
		l.t.Fatal(err)
	}
}

// decision is an operator's decision on op as seen. These tests decide
// right after a timeout or a sweep — within the grace after the request —
// on purpose (what they test is what follows), so it overrides the grace
// (WithinGrace); decidegrace_test.go tests the grace itself.
func decision(op *model.Operation) reconcile.Decision {
	return reconcile.Decision{Tenant: op.Tenant, Key: op.Key, Operator: "oncall", Reason: "checked the provider console",
		Evidence: "sbx_1", ExpectState: op.State, ExpectVersion: op.Version, WithinGrace: true}
}

func (l *ledger) decide(action model.Action, d reconcile.Decision) error {
	ctx := context.Background()
	var err error
	switch action {
	case model.ActionMarkApplied:
		_, err = l.svc.MarkApplied(ctx, d)
	case model.ActionMarkNotApplied:
		_, err = l.svc.MarkNotApplied(ctx, d)
	case model.ActionAuthorizeKey:
		_, _, err = l.svc.AuthorizeNewKey(ctx, d)
	}
	return err
}

// legalDecisions is DESIGN.md's table, written out here (not read from
// reconcile.Legal) so a change to the rules has to change this test too.
var legalDecisions = map[model.State]map[model.Action]model.State{
	model.StateUnknown: {
		model.ActionMarkApplied:    model.StateApplied,
		model.ActionMarkNotApplied: model.StateNotApplied,
		model.ActionAuthorizeKey:   model.StateSuperseded,
	},
	model.StateNotApplied: {model.ActionAuthorizeKey: model.StateSuperseded},
	model.StateFailed:     {model.ActionAuthorizeKey: model.StateSuperseded},
}

// legalDecisionsUnheld is the table's row for an in_progress operation
// nobody holds (its claim released, or its lease ended: reconcile.Unheld)
// — the decisions of an unknown one. In_progress with its lease live
// allows none (legalDecisions has no in_progress row).
var legalDecisionsUnheld = legalDecisions[model.StateUnknown]

func TestEveryDecisionFromAnInProgressNobodyHolds(t *testing.T) {
	c := newClock()
	l := newLedger(t, withClock(c))
	defer func() { l.t = t }()
	for _, how := range []string{"released", "lease ended"} {
		for _, action := range model.AllActions {
			to, legal := legalDecisionsUnheld[action]
			t.Run(how+"/"+string(action), func(t *testing.T) {
				l.t = t
				key := strings.ReplaceAll("k-"+how+"-"+string(action), " ", "-")
				r := notify("acme", key, "ops@example.com")
				if how == "released" {
					l.call(r, reconcile.CallOptions{Provider: "sandbox-idem", Faults: provider.Faults{LoseReply: true}})
				} else if died, _ := l.callDying(r, reconcile.CallOptions{}, reconcile.PointAfterClaim); !died {
					t.Fatal("the worker did not die")
				}
				c.Advance(reconcile.DefaultLease + time.Second)
				op := l.op("acme", key)
				if !reconcile.Unheld(*op, c.Now()) {
					t.Fatalf("set-up: %s lease %q until %v; want in_progress, nobody holding it", op.State, op.LeaseOwner, op.LeaseUntil)
				}
				if reconcile.AllowedAt(*op, action, c.Now()) != legal {
					t.Errorf("reconcile.AllowedAt = %v, the table says %v", !legal, legal)
				}
				d := decision(op)
				d.NewKey = key + "-authorized"
				if err := l.decide(action, d); err != nil {
					t.Fatalf("legal decision refused: %v", err)
				}
				det := l.detail("acme", key)
				if got := det.Operation; got.State != to || got.Version != op.Version+1 {
					t.Errorf("after %s: %s v%d, want %s v%d", action, got.State, got.Version, to, op.Version+1)
				}
				if dc := det.Decisions[0]; len(det.Decisions) != 1 || dc.FromState != model.StateInProgress || dc.ToState != to {
					t.Errorf("decision rows %+v; want one, in_progress → %s", det.Decisions, to)
				}
				l.checkAfterDecision(t, action, op, d.NewKey)
			})
		}
	}
}

func TestEveryDecisionFromEveryState(t *testing.T) {
	l := newLedger(t, withClock(newClock()))
	defer func() { l.t = t }()
	for _, st := range model.AllStates {
		for _, action := range model.AllActions {
			to, legal := legalDecisions[st][action]
			name := fmt.Sprintf("%s/%s", st, action)
			if reconcile.Allowed(st, action) != legal {
				t.Errorf("%s: reconcile.Allowed = %v, the design says %v", name, !legal, legal)
			}
			t.Run(name, func(t *testing.T) {
				l.t = t
				key := "k-" + string(st) + "-" + string(action)
				op := l.makeState(st, "acme", key)
				before := l.snapshot()
				d := decision(op)
				d.NewKey = key + "-authorized"
				if !legal {
					err := l.decide(action, d)
					if !model.IsCode(err, model.CodeIllegal) {
						t.Fatalf("illegal decision: err %v; want CodeIllegal", err)
					}
					if !strings.Contains(err.Error(), "it is "+string(st)) {
						t.Errorf("refusal %q does not say the state", err)
					}
					if l.snapshot() != before {
						t.Error("an illegal decision changed the ledger")
					}
					return
				}
				// A stale view (older version, or another state) is refused
				// with what changed, and changes nothing.
				for _, stale := range []reconcile.Decision{
					func() reconcile.Decision { s := d; s.ExpectVersion = op.Version - 1; return s }(),
					func() reconcile.Decision { s := d; s.ExpectState = model.StateInProgress; return s }(),
				} {
					err := l.decide(action, stale)
					if !model.IsCode(err, model.CodeStale) || !strings.Contains(err.Error(), "changed since you looked") ||
						!strings.Contains(err.Error(), fmt.Sprintf("is now %s (version %d)", st, op.Version)) {
						t.Errorf("stale decision: %v; want CodeStale saying what it is now", err)
					}
					if l.snapshot() != before {
						t.Error("a stale decision changed the ledger")
					}
				}
				if err := l.decide(action, d); err != nil {
					t.Fatalf("legal decision refused: %v", err)
				}
				det := l.detail("acme", key)
				got := det.Operation
				if got.State != to || got.Version != op.Version+1 {
					t.Errorf("after %s: %s v%d, want %s v%d", action, got.State, got.Version, to, op.Version+1)
				}
				if n := len(det.Decisions); n != 1 {
					t.Fatalf("%d decision rows, want 1", n)
				}
				dc := det.Decisions[0]
				if dc.Action != action || dc.FromState != st || dc.ToState != to || dc.FromVersion != op.Version ||
					dc.Operator != "oncall" || dc.Reason != d.Reason || dc.Evidence != "sbx_1" {
					t.Errorf("decision row %+v does not record who, what, why, evidence and from → to", dc)
				}
				l.checkAfterDecision(t, action, op, d.NewKey)
			})
		}
	}
}

// checkAfterDecision follows a legal decision with the next call, as the
// runner would make it.
func (l *ledger) checkAfterDecision(t *testing.T, action model.Action, op *model.Operation, newKey string) {
	again := notify(op.Tenant, op.Key, "ops@example.com")
	switch action {
	case model.ActionMarkApplied:
		res := l.call(again, reconcile.CallOptions{})
		if res.Class != model.ClassDone || res.Outcome != model.OutcomeReplayed || res.Receipt.ProviderRef != "sbx_1" {
			t.Errorf("replay after mark applied = %+v; want the receipt the decision stored", res)
		}
	case model.ActionMarkNotApplied:
		res := l.call(again, reconcile.CallOptions{})
		if res.Outcome != model.OutcomeCreated || l.op(op.Tenant, op.Key).State != model.StateApplied {
			t.Errorf("call after mark not applied = %+v; want it to claim and apply", res)
		}
	case model.ActionAuthorizeKey:
		old := l.detail(op.Tenant, op.Key)
		nu := l.detail(op.Tenant, newKey)
		if nu.Operation.State != model.StateAuthorized || nu.Operation.Fingerprint != op.Fingerprint ||
			old.SupersededBy == nil || old.SupersededBy.Key != newKey || nu.Supersedes == nil || nu.Supersedes.Key != op.Key {
			t.Errorf("authorize: old %+v new %+v; want linked both ways, the new one authorized with the same request", old.SupersededBy, nu.Operation)
		}
		res := l.call(again, reconcile.CallOptions{})
		if res.Class != model.ClassSuperseded || res.NewKey != newKey || res.Class.ExitCode() != 6 {
			t.Errorf("old key after authorize = %+v; want superseded naming %q", res, newKey)
		}
		res = l.call(notify(op.Tenant, newKey, "ops@example.com"), reconcile.CallOptions{})
		if res.Outcome != model.OutcomeCreated || l.deliveries(op.Tenant, newKey) != 1 {
			t.Errorf("first call of the new key = %+v; want it to claim and apply once", res)
		}
	}
}

func TestInvalidDecisionsAreRefusedAndChangeNothing(t *testing.T) {
	l := newLedger(t)
	op := l.makeState(model.StateUnknown, "acme", "k")
	cases := []struct {
		name   string
		action model.Action
		edit   func(*reconcile.Decision)
		code   model.Code
	}{
		{"no reason", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Reason = "  " }, model.CodeInvalid},
		{"no operator", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Operator = "" }, model.CodeInvalid},
		{"not applied without evidence", model.ActionMarkNotApplied, func(d *reconcile.Decision) { d.Evidence = "" }, model.CodeInvalid},
		{"applied without evidence", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Evidence = " " }, model.CodeInvalid},
		{"not applied when the check found the effect", model.ActionMarkNotApplied, func(d *reconcile.Decision) {
			d.Finding = &provider.Evidence{Found: true, Ref: "sbx_1", Detail: "sandbox delivered sbx_1"}
		}, model.CodeInvalid},
		{"applied when the check found nothing", model.ActionMarkApplied, func(d *reconcile.Decision) {
			d.Finding = &provider.Evidence{Detail: "sandbox holds no delivery"}
		}, model.CodeInvalid},
		{"not applied with only the found effect's reference as evidence", model.ActionMarkNotApplied, func(d *reconcile.Decision) {
			d.Finding, d.Evidence = &provider.Evidence{Found: true, Ref: "sbx_1"}, "sbx_1"
		}, model.CodeInvalid},
		{"reason with a control character", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Reason = "ok\x1b[2J" }, model.CodeInvalid},
		{"new key equal to the old", model.ActionAuthorizeKey, func(d *reconcile.Decision) { d.NewKey = "k" }, model.CodeInvalid},
		{"new key with a control character", model.ActionAuthorizeKey, func(d *reconcile.Decision) { d.NewKey = "k\x01" }, model.CodeInvalid},
		{"new key that exists", model.ActionAuthorizeKey, func(d *reconcile.Decision) { d.NewKey = "taken" }, model.CodeConflict},
		{"unknown key", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Key = "nope" }, model.CodeNotFound},
		{"another tenant's key", model.ActionMarkApplied, func(d *reconcile.Decision) { d.Tenant = "rival" }, model.CodeNotFound},
	}
	l.makeState(model.StateApplied, "acme", "taken")
	before := l.snapshot()
	for _, c := range cases {
		d := decision(op)
		c.edit(&d)
		err := l.decide(c.action, d)
		if model.CodeOf(err) != c.code {
			t.Errorf("%s: %v (code %q), want %q", c.name, err, model.CodeOf(err), c.code)
		}
		if l.snapshot() != before {
			t.Errorf("%s: the refused decision changed the ledger", c.name)
		}
	}
	// Not found in another tenant reads exactly like a key nobody used.
	d := decision(op)
	d.Tenant = "rival"
	errOther := l.decide(model.ActionMarkApplied, d)
	d.Key = "never-used"
	errNobody := l.decide(model.ActionMarkApplied, d)
	if errOther == nil || errNobody == nil ||
		strings.ReplaceAll(errOther.Error(), `"k"`, `"never-used"`) != errNobody.Error() {
		t.Errorf("another tenant's key: %q; a key nobody used: %q; they must read alike", errOther, errNobody)
	}
}

// What a call does from each state: the same request, and a changed one.
func TestEveryCallFromEveryState(t *testing.T) {
	c := newClock()
	l := newLedger(t, withClock(c))
	defer func() { l.t = t }()
	type want struct {
		class   model.Class
		outcome model.Outcome
		state   model.State // after the call
		claims  bool        // the call takes the operation (it changes beyond its attempt row)
	}
	cases := []struct {
		from model.State
		prov string
		aged time.Duration // advance the clock before the call
		want want
	}{
		{model.StateApplied, "", 0, want{model.ClassDone, model.OutcomeReplayed, model.StateApplied, false}},
		{model.StateFailed, "", 0, want{model.ClassFailed, model.OutcomeReplayed, model.StateFailed, false}},
		{model.StateUnknown, "", 0, want{model.ClassUnknown, model.OutcomeRefused, model.StateUnknown, false}},
		{model.StateSuperseded, "", 0, want{model.ClassSuperseded, model.OutcomeRefused, model.StateSuperseded, false}},
		{model.StateInProgress, "", 0, want{model.ClassInProgress, model.OutcomeInProgress, model.StateInProgress, false}},
		{model.StateNotApplied, "", 0, want{model.ClassDone, model.OutcomeCreated, model.StateApplied, true}},
		{model.StateAuthorized, "", 0, want{model.ClassDone, model.OutcomeCreated, model.StateApplied, true}},
		// A lease that ended with no result: unknown where a re-dispatch
		// could apply twice, a safe re-dispatch where the provider honours keys.
		{model.StateInProgress, "sandbox", reconcile.DefaultLease + time.Second, want{model.ClassUnknown, model.OutcomeLeaseExpired, model.StateUnknown, true}},
		{model.StateInProgress, "sandbox-idem", reconcile.DefaultLease + time.Second, want{model.ClassDone, model.OutcomeCreated, model.StateApplied, true}},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s %s aged %v", tc.from, tc.prov, tc.aged), func(t *testing.T) {
			l.t = t
			key := fmt.Sprintf("k%d", i)
			var op *model.Operation
			if tc.prov == "sandbox-idem" {
				if died, _ := l.callDying(notify("acme", key, "ops@example.com"), reconcile.CallOptions{Provider: "sandbox-idem"}, reconcile.PointAfterClaim); !died {
					t.Fatal("no crash")
				}
				op = l.op("acme", key)
			} else {
				op = l.makeState(tc.from, "acme", key)
			}
			c.Advance(tc.aged)
			// A changed request conflicts from every state, writing only its attempt.
			before := l.snapshot("attempts")
			changed := l.call(notify("acme", key, "someone-else@example.com"), reconcile.CallOptions{})
			if changed.Class != model.ClassConflict || l.snapshot("attempts") != before {
				t.Errorf("changed request from %s = %+v (ledger changed: %v); want a conflict that writes only its attempt",
					tc.from, changed, l.snapshot("attempts") != before)
			}
			deliveriesBefore := l.deliveries("acme", key)
			res := l.call(notify("acme", key, "ops@example.com"), reconcile.CallOptions{})
			if res.Class != tc.want.class || res.Outcome != tc.want.outcome {
				t.Errorf("call from %s = %s/%s (%s); want %s/%s", tc.from, res.Class, res.Outcome, res.Message, tc.want.class, tc.want.outcome)
			}
			after := l.op("acme", key)
			if after.State != tc.want.state {
				t.Errorf("state after the call %s, want %s", after.State, tc.want.state)
			}
			if !tc.want.claims && (after.Version != op.Version || l.snapshot("attempts") != before) {
				t.Error("a refused or replayed call changed the operation")
			}
			wantDeliveries := deliveriesBefore
			if tc.want.outcome == model.OutcomeCreated {
				wantDeliveries = 1
			}
			if n := l.deliveries("acme", key); n != wantDeliveries {
				t.Errorf("%d deliveries after the call, want %d", n, wantDeliveries)
			}
			if tc.from == model.StateSuperseded && res.NewKey != key+"-next" {
				t.Errorf("superseded call names new key %q", res.NewKey)
			}
			if tc.want.class == model.ClassFailed && (res.Receipt == nil || res.Receipt.Status != "replayed") {
				t.Errorf("stored failure not replayed as a receipt: %+v", res.Receipt)
			}
		})
	}
}

// The sweep moves only in_progress operations whose lease ended; every
// other state — unknown above all — is left exactly as it is.
func TestSweepTouchesOnlyExpiredLeases(t *testing.T) {
	c := newClock()
	l := newLedger(t, withClock(c))
	for _, st := range model.AllStates {
		l.makeState(st, "acme", "k-"+string(st))
	}
	before := l.snapshot()
	rep, err := l.svc.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep != (reconcile.SweepReport{}) || l.snapshot() != before {
		t.Errorf("sweep before any lease ended: %+v; it changed the ledger: %v", rep, l.snapshot() != before)
	}
	c.Advance(reconcile.DefaultLease + time.Second)
	rep, err = l.svc.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unknown != 1 || rep.Redispatched != 0 {
		t.Errorf("sweep after the lease: %+v; want one lease → unknown", rep)
	}
	for _, st := range model.AllStates {
		want := st
		if st == model.StateInProgress {
			want = model.StateUnknown
		}
		if got := l.op("acme", "k-"+string(st)).State; got != want {
			t.Errorf("after the sweep %s is %s, want %s", st, got, want)
		}
	}
	// Nothing ever leaves unknown on its own: sweeps at any later time leave
	// it there.
	for _, later := range []time.Duration{time.Minute, 48 * time.Hour, 90 * 24 * time.Hour} {
		c.Advance(later)
		if _, err := l.svc.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"k-unknown", "k-in_progress"} {
			if got := l.op("acme", k).State; got != model.StateUnknown {
				t.Errorf("%s is %s after %v; unknown must wait for a person", k, got, later)
			}
		}
	}
}

// The rule the CLI and the console share: what each decision needs, and
// the second confirmation a decision against the provider's finding needs.
func TestDecisionRuleNeedsEvidenceAndConfirmsAgainstTheFinding(t *testing.T) {
	found := &provider.Evidence{Found: true, Ref: "sbx_7", Detail: "sandbox delivered sbx_7"}
	nothing := &provider.Evidence{Detail: "sandbox holds no delivery under rs-1"}
	cases := []struct {
		name   string
		action model.Action
		d      reconcile.Decision
		fields []reconcile.Field
	}{
		{"applied with a reference", model.ActionMarkApplied, reconcile.Decision{Reason: "r", Evidence: "sbx_7"}, nil},
		{"applied without evidence", model.ActionMarkApplied, reconcile.Decision{Reason: "r"}, []reconcile.Field{reconcile.FieldEvidence}},
		{"applied agreeing with the finding", model.ActionMarkApplied, reconcile.Decision{Reason: "r", Evidence: "sbx_7", Finding: found}, nil},
		{"applied against an empty lookup", model.ActionMarkApplied, reconcile.Decision{Reason: "r", Evidence: "ticket 9", Finding: nothing}, []reconcile.Field{reconcile.FieldFinding}},
		{"applied against an empty lookup, confirmed", model.ActionMarkApplied, reconcile.Decision{Reason: "r", Evidence: "ticket 9", Finding: nothing, Override: true}, nil},
		{"not applied on an empty lookup alone", model.ActionMarkNotApplied, reconcile.Decision{Reason: "r", Finding: nothing}, nil},
		{"not applied on a timeout alone", model.ActionMarkNotApplied, reconcile.Decision{Reason: "it timed out"}, []reconcile.Field{reconcile.FieldEvidence}},
		{"not applied with typed evidence", model.ActionMarkNotApplied, reconcile.Decision{Reason: "r", Evidence: "INC-4471: provider dropped the batch"}, nil},
		{"not applied against a delivery", model.ActionMarkNotApplied, reconcile.Decision{Reason: "r", Evidence: "customer says no", Finding: found}, []reconcile.Field{reconcile.FieldFinding}},
		{"not applied against a delivery, no evidence", model.ActionMarkNotApplied, reconcile.Decision{Reason: "r", Finding: found}, []reconcile.Field{reconcile.FieldEvidence, reconcile.FieldFinding}},
		{"not applied against a delivery, confirmed", model.ActionMarkNotApplied, reconcile.Decision{Reason: "r", Evidence: "customer says no", Finding: found, Override: true}, nil},
		{"no reason", model.ActionAuthorizeKey, reconcile.Decision{}, []reconcile.Field{reconcile.FieldReason}},
		{"new key on an empty lookup", model.ActionAuthorizeKey, reconcile.Decision{Reason: "r", Finding: nothing}, nil},
		{"new key against a delivery", model.ActionAuthorizeKey, reconcile.Decision{Reason: "r", Finding: found}, []reconcile.Field{reconcile.FieldFinding}},
		{"new key against a delivery, confirmed", model.ActionAuthorizeKey, reconcile.Decision{Reason: "r", Finding: found, Override: true}, nil},
	}
	for _, c := range cases {
		c.d.Tenant, c.d.Key, c.d.Operator = "acme", "k", "oncall"
		var got []reconcile.Field
		for _, p := range c.d.Problems(c.action) {
			got = append(got, p.Field)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.fields) {
			t.Errorf("%s: problems in %v, want %v (%v)", c.name, got, c.fields, c.d.Problems(c.action))
		}
	}
}

// A lookup that found nothing is recorded as the decision's evidence.
func TestNotAppliedOnAnEmptyLookupRecordsTheLookup(t *testing.T) {
	l := newLedger(t)
	op := l.makeState(model.StateUnknown, "acme", "k")
	d := decision(op)
	d.Evidence = ""
	d.Finding = &provider.Evidence{Detail: "sandbox holds no delivery under rs-1"}
	if err := l.decide(model.ActionMarkNotApplied, d); err != nil {
		t.Fatal(err)
	}
	det, err := l.st.Detail(context.Background(), "acme", "k")
	if err != nil {
		t.Fatal(err)
	}
	if got := det.Decisions[len(det.Decisions)-1].Evidence; got != "provider lookup: sandbox holds no delivery under rs-1" {
		t.Fatalf("evidence %q", got)
	}
}
