package storetest

// R6 D3: an in_progress operation that nobody holds — its claim released
// (a re-send answered "busy", "not sent", "nothing applied") or its lease
// ended — may be decided by a person as an unknown one is; one whose
// lease is live may not. The decision is one transaction on the driver:
// it reads the operation (and its lease) under the transaction's lock and
// compare-and-sets it, so a worker that claimed it again after the
// operator looked makes the decision fail, nothing written. These cases
// run the rules' real decision functions (reconcile) on each driver.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// scripted is a provider that answers every dispatch with resp and counts
// the dispatches it was sent.
type scripted struct {
	resp provider.Response
	sent atomic.Int32
}

func (p *scripted) Name() string      { return "pay" }
func (p *scripted) HonoursKeys() bool { return false }
func (p *scripted) Dispatch(context.Context, provider.Request) (provider.Response, error) {
	p.sent.Add(1)
	return p.resp, nil
}
func (p *scripted) Lookup(_ context.Context, key string) (provider.Evidence, error) {
	return provider.Evidence{Provider: "pay", DownstreamKey: key, Detail: "pay holds nothing under the key"}, nil
}

// service is the rules over the test's ledger, with p as provider "pay".
func (h *harness) service(p provider.Provider) *reconcile.Service {
	svc := reconcile.New(h.L, config.Default().Tools, provider.Registry{"pay": p})
	svc.Grace = -1 // the grace has cases of its own
	return svc
}

// claimed is an external operation of tenant acme under key, in_progress
// with claim 1 held by owner until leaseUntil.
func (h *harness) claimed(t *testing.T, key, owner string, leaseUntil time.Time) *model.Operation {
	t.Helper()
	op := newOp("acme", key, model.StateInProgress)
	op.Tool, op.Args = "send_notification", []byte(`{"body":"b","to":"a@example.com"}`)
	op.Provider, op.DownstreamKey, op.ClaimNo = "pay", "dk-"+key, 1
	op.LeaseOwner, op.LeaseUntil = owner, leaseUntil
	h.tx(t, func(tx store.Tx) error {
		if err := tx.InsertOperation(op); err != nil {
			return err
		}
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeDispatched, Fingerprint: op.Fingerprint})
	})
	return op
}

func unheldDecide(svc *reconcile.Service, action model.Action, d reconcile.Decision) error {
	ctx := context.Background()
	var err error
	switch action {
	case model.ActionMarkApplied:
		_, err = svc.MarkApplied(ctx, d)
	case model.ActionMarkNotApplied:
		_, err = svc.MarkNotApplied(ctx, d)
	case model.ActionAuthorizeKey:
		_, _, err = svc.AuthorizeNewKey(ctx, d)
	}
	return err
}

func unheldDecision(op *model.Operation) reconcile.Decision {
	return reconcile.Decision{Tenant: op.Tenant, Key: op.Key, Operator: "oncall", Reason: "settled by hand",
		Evidence: "pay_1", ExpectState: op.State, ExpectVersion: op.Version, NewKey: op.Key + "-new", WithinGrace: true}
}

// A released claim, or one whose lease ended, takes every decision an
// unknown one does; one whose lease is live takes none, the refusal naming
// when the lease ends, and nothing is written.
func testDecisionsOnAnInProgressNobodyHolds(t *testing.T, h *harness) {
	svc := h.service(&scripted{})
	cases := []struct {
		name       string
		owner      string
		leaseUntil time.Time
		live       bool
	}{
		{"released", reconcile.LeaseReleased, h.now.Add(-time.Second), false},
		{"released at this instant", reconcile.LeaseReleased, h.now, false},
		{"lease ended", "worker-1", h.now.Add(-time.Minute), false},
		{"lease ends at this instant", "worker-1", h.now, false},
		{"lease live", "worker-1", h.now.Add(time.Minute), true},
	}
	n := 0
	for _, c := range cases {
		for _, action := range model.AllActions {
			n++
			key := "k" + strings.ReplaceAll(c.name, " ", "-") + "-" + string(action)
			op := h.claimed(t, key, c.owner, c.leaseUntil)
			if got := reconcile.AllowedAt(*op, action, h.now); got == c.live {
				t.Errorf("%s/%s: AllowedAt = %v, want %v", c.name, action, got, !c.live)
			}
			before := h.snapshot(t)
			err := unheldDecide(svc, action, unheldDecision(op))
			if c.live {
				mustCode(t, c.name+"/"+string(action), err, model.CodeIllegal)
				if err != nil && (!strings.Contains(err.Error(), c.leaseUntil.UTC().Format(time.RFC3339)) || !strings.Contains(err.Error(), "nothing was written")) {
					t.Errorf("%s/%s: refusal %q does not name the lease's end and say nothing was written", c.name, action, err)
				}
				if h.snapshot(t) != before {
					t.Errorf("%s/%s: a refused decision changed the ledger", c.name, action)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s/%s: %v", c.name, action, err)
				continue
			}
			d, err := h.L.Detail(ctxT(t), "acme", key)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Operation
			if got.State != action.Target() || got.Version != op.Version+1 || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
				t.Errorf("%s/%s: %s v%d lease %q %v; want %s v%d, no lease", c.name, action, got.State, got.Version, got.LeaseOwner, got.LeaseUntil,
					action.Target(), op.Version+1)
			}
			if len(d.Decisions) != 1 || d.Decisions[0].FromState != model.StateInProgress || d.Decisions[0].ToState != action.Target() {
				t.Errorf("%s/%s: decisions %+v; want one, in_progress → %s", c.name, action, d.Decisions, action.Target())
			}
		}
	}
	h.audit(t)
}

// The operator looked at a released claim (version V); a worker claimed
// it again, its lease live, before the decision was written. The
// decision's compare-and-set — the operation and its lease read again in
// the decision's own transaction — fails: stale for one made on V,
// illegal (naming the lease's end) for one made on whatever it is now.
// Nothing is written either way; the driver's compare-and-set alone
// (UpdateOperation from in_progress at V) fails the same way, and the
// transaction leaves nothing of its decision row.
func testADecisionOnAClaimRenewedMeanwhileFails(t *testing.T, h *harness) {
	svc := h.service(&scripted{})
	seen := h.claimed(t, "k", reconcile.LeaseReleased, h.now.Add(-time.Second))
	other := h.open(t, store.Options{}) // the worker, another connection
	if err := other.WithTx(ctxT(t), func(tx store.Tx) error {
		op, err := tx.GetOperation("acme", "k")
		if err != nil {
			return err
		}
		from, ver := op.State, op.Version
		op.ClaimNo++
		op.LeaseOwner, op.LeaseUntil = "worker-2", tx.Now().Add(time.Minute)
		if err := tx.UpdateOperation(op, from, ver); err != nil {
			return err
		}
		return tx.InsertAttempt(&model.Attempt{OperationID: op.ID, Outcome: model.OutcomeDispatched, Fingerprint: op.Fingerprint})
	}); err != nil {
		t.Fatal(err)
	}
	before := h.snapshot(t)
	for _, action := range model.AllActions {
		d := unheldDecision(seen)
		mustCode(t, string(action)+" on the version the operator saw", unheldDecide(svc, action, d), model.CodeStale)
		d.ExpectState, d.ExpectVersion = "", 0
		err := unheldDecide(svc, action, d)
		mustCode(t, string(action)+" on whatever it is now", err, model.CodeIllegal)
		if err != nil && !strings.Contains(err.Error(), h.now.Add(time.Minute).UTC().Format(time.RFC3339)) {
			t.Errorf("%s: refusal %q does not name the renewed lease's end", action, err)
		}
	}
	err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
		if err := tx.InsertDecision(&model.Decision{OperationID: seen.ID, Operator: "oncall", Action: model.ActionMarkNotApplied,
			Reason: "r", FromState: model.StateInProgress, ToState: model.StateNotApplied, FromVersion: seen.Version}); err != nil {
			return err
		}
		next := *seen
		next.State, next.LeaseOwner, next.LeaseUntil = model.StateNotApplied, "", time.Time{}
		return tx.UpdateOperation(&next, model.StateInProgress, seen.Version)
	})
	mustCode(t, "the driver's compare-and-set at the version the operator saw", err, model.CodeStale)
	if h.snapshot(t) != before {
		t.Error("a decision on a claim renewed meanwhile changed the ledger")
	}
}

// A worker's answer that lands after a person decided on its ended claim
// is recorded as one after a decision on an unknown operation: a late
// result; an "applied" against "not applied" flags it contradicted and is
// recorded as a "has it" finding. A worker that wakes after its claim
// was decided, its lease over, sends nothing.
func testALateResultAfterADecisionOnAnUnheldClaim(t *testing.T, h *harness) {
	for _, c := range []struct {
		name   string
		point  reconcile.Point
		action model.Action
		sent   int32
		contra bool
	}{
		{"answer applied, marked not applied meanwhile", reconcile.PointAfterDispatch, model.ActionMarkNotApplied, 1, true},
		{"answer applied, marked applied meanwhile", reconcile.PointAfterDispatch, model.ActionMarkApplied, 1, false},
		{"woke after its claim, marked not applied meanwhile", reconcile.PointAfterClaim, model.ActionMarkNotApplied, 0, false},
		{"woke after its claim, new key meanwhile", reconcile.PointAfterClaim, model.ActionAuthorizeKey, 0, false},
	} {
		p := &scripted{resp: provider.Response{Status: provider.Applied, Ref: "pay_9"}}
		svc := h.service(p)
		key := "late-" + string(c.point) + "-" + string(c.action)
		var decideErr error
		svc.At = func(at reconcile.Point) {
			if at != c.point {
				return
			}
			svc.At = nil
			h.now = h.now.Add(svc.Lease + time.Second)
			op, err := h.L.Get(ctxT(t), "acme", key)
			if err != nil {
				decideErr = err
				return
			}
			if op.State != model.StateInProgress {
				t.Errorf("%s: %s when the worker stopped; want in_progress", c.name, op.State)
			}
			decideErr = unheldDecide(svc, c.action, unheldDecision(op))
		}
		res, err := svc.Call(context.Background(), model.Request{Tenant: "acme", Key: key, Tool: "send_notification", PayloadVersion: 1,
			Args: []byte(`{"to":"a@example.com","body":"b"}`)}, reconcile.CallOptions{Provider: "pay"})
		if err != nil || decideErr != nil {
			t.Fatalf("%s: call %v, decision %v", c.name, err, decideErr)
		}
		if got := p.sent.Load(); got != c.sent {
			t.Errorf("%s: %d dispatches; want %d", c.name, got, c.sent)
		}
		d, err := h.L.Detail(ctxT(t), "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		op := d.Operation
		if res.Outcome != model.OutcomeLateResult || op.State != c.action.Target() || op.Contradicted != c.contra {
			t.Errorf("%s: %s (%s); %s contradicted=%v; want a late result, %s, contradicted=%v", c.name, res.Outcome, res.Message,
				op.State, op.Contradicted, c.action.Target(), c.contra)
		}
		late := 0
		for _, a := range d.Attempts {
			if a.Outcome == model.OutcomeLateResult {
				late++
			}
		}
		if late != 1 {
			t.Errorf("%s: %d late_result attempts; want 1", c.name, late)
		}
		if c.contra && (op.Finding == nil || op.Finding.Kind != model.FindingHasIt || op.Finding.Ref != "pay_9") {
			t.Errorf("%s: finding %+v; want the late \"applied\" as a has-it with its reference", c.name, op.Finding)
		}
	}
	h.audit(t)
}
