package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func TestTokensKeepTheHashAndRevokeOnce(t *testing.T) {
	s, _ := openLedger(t, store.Options{})
	ctx := context.Background()
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
	if err != nil || got.Tenant != "acme" || got.Revoked() {
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
	if _, err := s.RevokeToken(ctx, 999); !model.IsCode(err, model.CodeNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if got, _ := s.TokenByHash(ctx, model.HashToken(secret)); !got.Revoked() {
		t.Fatal("revocation not stored")
	}
	if bad := (model.Token{Tenant: "acme", Hash: "short"}); s.CreateToken(ctx, &bad) == nil {
		t.Fatal("a token without a SHA-256 was stored")
	}
}

func TestStateAgesCountsEachTenantsOperationsInAState(t *testing.T) {
	clock := time.UnixMilli(1_700_000_000_000).UTC()
	s, _ := openLedger(t, store.Options{Now: func() time.Time { return clock }})
	ctx := context.Background()
	put := func(tenant, key string, st model.State) {
		t.Helper()
		err := s.WithTx(ctx, func(tx store.Tx) error {
			return tx.InsertOperation(&model.Operation{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
				Args: []byte(`{}`), Fingerprint: strings.Repeat("f", 64), State: st})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("b", "1", model.StateUnknown)
	clock = clock.Add(time.Minute)
	put("b", "2", model.StateUnknown)
	put("a", "1", model.StateUnknown)
	put("a", "2", model.StateNotApplied)
	ages, err := s.StateAges(ctx, model.StateUnknown)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TenantStateAge{{Tenant: "a", Count: 1, Oldest: clock}, {Tenant: "b", Count: 2, Oldest: clock.Add(-time.Minute)}}
	if len(ages) != 2 || ages[0] != want[0] || ages[1] != want[1] {
		t.Fatalf("ages %+v, want %+v", ages, want)
	}
}
