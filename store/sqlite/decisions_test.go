package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The audit log's query: every decision newest first, with its operation,
// filtered by tenant, operator and action, paged by id.
func TestDecisionsListsTheAuditLogNewestFirstWithFilters(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	type dec struct {
		tenant, key, operator string
		action                model.Action
	}
	made := []dec{
		{"acme", "k1", "alice", model.ActionMarkApplied},
		{"acme", "k2", "bob", model.ActionMarkNotApplied},
		{"globex", "k3", "alice", model.ActionMarkNotApplied},
		{"globex", "k4", "carol", model.ActionAuthorizeKey},
	}
	err := s.WithTx(context.Background(), func(tx store.Tx) error {
		for _, d := range made {
			op := newOp(d.key, model.StateUnknown)
			op.Tenant = d.tenant
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			if err := tx.InsertDecision(&model.Decision{OperationID: op.ID, Operator: d.operator, Action: d.action,
				Reason: "r", Evidence: "e-" + d.key, FromState: model.StateUnknown, ToState: d.action.Target(), FromVersion: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := func(q store.DecisionQuery) string {
		t.Helper()
		es, err := s.Decisions(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, e := range es {
			out += fmt.Sprintf("%s/%s ", e.Tenant, e.Key)
			if e.Evidence != "e-"+e.Key || e.Tool != "create_support_task" {
				t.Errorf("entry %+v", e)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		q    store.DecisionQuery
		want string
	}{
		{"all", store.DecisionQuery{}, "globex/k4 globex/k3 acme/k2 acme/k1 "},
		{"tenant", store.DecisionQuery{Tenant: "acme"}, "acme/k2 acme/k1 "},
		{"operator", store.DecisionQuery{Operator: "alice"}, "globex/k3 acme/k1 "},
		{"action", store.DecisionQuery{Action: model.ActionMarkNotApplied}, "globex/k3 acme/k2 "},
		{"all three", store.DecisionQuery{Tenant: "globex", Operator: "alice", Action: model.ActionMarkNotApplied}, "globex/k3 "},
		{"page", store.DecisionQuery{Limit: 2}, "globex/k4 globex/k3 "},
		{"next page", store.DecisionQuery{BeforeID: 3, Limit: 2}, "acme/k2 acme/k1 "},
		{"nobody", store.DecisionQuery{Operator: "mallory"}, ""},
	} {
		if got := keys(c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Counts says how many claims' leases have ended, per tenant and in all.
func TestCountsCountsExpiredLeases(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s, _ := openLedger(t, store.Options{Now: func() time.Time { return now }})
	err := s.WithTx(context.Background(), func(tx store.Tx) error {
		for i, c := range []struct {
			tenant string
			lease  time.Duration
		}{{"acme", -time.Minute}, {"acme", time.Hour}, {"globex", -time.Second}} {
			op := newOp(fmt.Sprintf("k%d", i), model.StateInProgress)
			op.Tenant, op.LeaseUntil = c.tenant, now.Add(c.lease)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tenant, want := range map[string]int{"": 2, "acme": 1, "globex": 1, "initech": 0} {
		c, err := s.Counts(context.Background(), tenant)
		if err != nil || c.ExpiredLeases != want {
			t.Errorf("tenant %q: %d expired (%v), want %d", tenant, c.ExpiredLeases, err, want)
		}
	}
}
