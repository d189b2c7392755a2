package storetest

// The read paths the console's audit log and the gateway added: decisions
// as an audit log, expired leases in the counts, bearer tokens, and the
// ages of operations waiting in a state.

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The audit log's query: every decision newest first, with its operation,
// filtered by tenant, operator and action, paged by id.
func testDecisionsAuditLog(t *testing.T, h *harness) {
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
	var ids []int64
	h.tx(t, func(tx store.Tx) error {
		for _, d := range made {
			op := newOp(d.tenant, d.key, model.StateUnknown)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			dc := &model.Decision{OperationID: op.ID, Operator: d.operator, Action: d.action,
				Reason: "r", Evidence: "e-" + d.key, FromState: model.StateUnknown, ToState: d.action.Target(), FromVersion: 1}
			if err := tx.InsertDecision(dc); err != nil {
				return err
			}
			ids = append(ids, dc.ID)
		}
		return nil
	})
	keys := func(q store.DecisionQuery) string {
		t.Helper()
		es, err := h.L.Decisions(ctxT(t), q)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, e := range es {
			out += fmt.Sprintf("%s/%s ", e.Tenant, e.Key)
			if e.Evidence != "e-"+e.Key || e.Tool != "create_support_task" || !e.At.Equal(h.now) {
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
		{"next page", store.DecisionQuery{BeforeID: ids[2], Limit: 2}, "acme/k2 acme/k1 "},
		{"nobody", store.DecisionQuery{Operator: "mallory"}, ""},
	} {
		if got := keys(c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Counts says how many claims' leases have ended, per tenant and in all,
// how many of those were released (model.LeaseReleased: given up to be
// sent again, not a worker that died holding it), and how many of those
// are held by their busy provider's Retry-After (retry_not_before not yet
// passed), with when the next hold ends.
func testCountsExpiredLeases(t *testing.T, h *harness) {
	h.tx(t, func(tx store.Tx) error {
		for i, c := range []struct {
			tenant   string
			owner    string
			lease    time.Duration
			notAfter time.Duration // retry_not_before from now (0: none)
		}{{"acme", "w1", -time.Minute, 0}, {"acme", "w2", time.Hour, 0}, {"globex", "w3", -time.Second, 0}, {"globex", model.LeaseReleased, -time.Second, 0},
			{"hooli", model.LeaseReleased, -time.Second, 30 * time.Second}, {"hooli", model.LeaseReleased, -time.Minute, -time.Second}} {
			op := newOp(c.tenant, fmt.Sprintf("k%d", i), model.StateInProgress)
			op.LeaseOwner, op.LeaseUntil = c.owner, h.now.Add(c.lease)
			if c.notAfter != 0 {
				op.Provider, op.RetryNotBefore = "mail", h.now.Add(c.notAfter)
			}
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
		}
		return nil
	})
	for tenant, want := range map[string][3]int{"": {5, 3, 1}, "acme": {1, 0, 0}, "globex": {2, 1, 0}, "hooli": {2, 2, 1}, "initech": {0, 0, 0}} {
		c, err := h.L.Counts(ctxT(t), tenant)
		if err != nil || c.ExpiredLeases != want[0] || c.ReleasedClaims != want[1] || c.HeldClaims != want[2] {
			t.Errorf("tenant %q: %d expired, %d of them released, %d of those held (%v), want %d, %d and %d", tenant, c.ExpiredLeases, c.ReleasedClaims, c.HeldClaims, err, want[0], want[1], want[2])
		}
		// The next lease to end, so that a console recounts when it does.
		next := time.Time{}
		if tenant == "" || tenant == "acme" {
			next = h.now.Add(time.Hour)
		}
		if !c.NextLeaseEnd.Equal(next) {
			t.Errorf("tenant %q: next lease end %v, want %v", tenant, c.NextLeaseEnd, next)
		}
		// And the next hold to end: the count of held claims moves then.
		hold := time.Time{}
		if tenant == "" || tenant == "hooli" {
			hold = h.now.Add(30 * time.Second)
		}
		if !c.NextHoldEnd.Equal(hold) {
			t.Errorf("tenant %q: next hold end %v, want %v", tenant, c.NextHoldEnd, hold)
		}
	}
}

func testTokens(t *testing.T, h *harness) {
	ctx := ctxT(t)
	s := h.L
	secret, tok, err := model.NewToken("acme", "agent", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(ctx, &tok); err != nil || tok.ID == 0 || tok.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v", tok, err)
	}
	_, other, _ := model.NewToken("globex", "", time.Time{})
	if err := s.CreateToken(ctx, &other); err != nil {
		t.Fatal(err)
	}
	dup := tok
	if err := s.CreateToken(ctx, &dup); !model.IsCode(err, model.CodeConflict) {
		t.Fatalf("the same hash twice: %v", err)
	}
	got, err := s.TokenByHash(ctx, model.HashToken(secret))
	if err != nil || got.Tenant != "acme" || got.Revoked() || got.Hash != model.HashToken(secret) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := s.TokenByHash(ctx, model.HashToken(secret+"x")); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}
	if l, _ := s.ListTokens(ctx, "acme"); len(l) != 1 || l[0].ID != tok.ID {
		t.Fatalf("acme's list: %+v", l)
	}
	if l, _ := s.ListTokens(ctx, ""); len(l) != 2 {
		t.Fatalf("every list: %+v", l)
	}
	if r, err := s.RevokeToken(ctx, tok.ID); err != nil || !r.Revoked() {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := s.RevokeToken(ctx, tok.ID); !model.IsCode(err, model.CodeIllegal) {
		t.Fatalf("second revoke: %v", err)
	}
	if _, err := s.RevokeToken(ctx, 999_999); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if got, _ := s.TokenByHash(ctx, model.HashToken(secret)); !got.Revoked() {
		t.Fatal("revocation not stored")
	}
	if bad := (model.Token{Tenant: "acme", Hash: "short"}); s.CreateToken(ctx, &bad) == nil {
		t.Fatal("a token without a SHA-256 was stored")
	}
}

func testStateAges(t *testing.T, h *harness) {
	clock := h.now
	l := h.open(t, store.Options{Now: func() time.Time { return clock }})
	put := func(tenant, key string, st model.State) {
		t.Helper()
		if err := l.WithTx(ctxT(t), func(tx store.Tx) error { return tx.InsertOperation(newOp(tenant, key, st)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("b", "1", model.StateUnknown)
	clock = clock.Add(time.Minute)
	put("b", "2", model.StateUnknown)
	put("a", "1", model.StateUnknown)
	put("a", "2", model.StateNotApplied)
	ages, err := l.StateAges(ctxT(t), model.StateUnknown)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TenantStateAge{{Tenant: "a", Count: 1, Oldest: clock}, {Tenant: "b", Count: 2, Oldest: clock.Add(-time.Minute)}}
	if len(ages) != 2 || ages[0] != want[0] || ages[1] != want[1] {
		t.Fatalf("ages %+v, want %+v", ages, want)
	}
}

// A tombstone window of zero or less would forget the tombstones of a
// compaction in the transaction that made them; every driver refuses it
// whatever its caller validated.
func testCompactRefusesNonPositiveWindow(t *testing.T, h *harness) {
	for _, ttl := range []time.Duration{0, -time.Hour} {
		err := h.L.WithTx(ctxT(t), func(tx store.Tx) error {
			_, _, err := tx.CompactExpired(ttl, 10)
			return err
		})
		mustCode(t, fmt.Sprintf("CompactExpired(%v)", ttl), err, model.CodeInvalid)
	}
}
