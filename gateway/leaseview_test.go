package gateway_test

// GET /v1/operations/{key} and the list say of an in_progress operation
// what ops show --json says: until when its lease runs (lease_until),
// whether it has ended (lease_ended) and whether its claim was released
// to be sent again (claim_released) — reconcile.LeaseEnded and
// reconcile.ClaimReleased, on the ledger's clock.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

func TestTheOperationViewSaysWhetherItsLeaseEnded(t *testing.T) {
	e := newEnv(t)
	now := e.st.Now().Truncate(time.Millisecond)
	type lease struct {
		owner string
		until time.Time
	}
	rows := map[string]lease{
		"live":     {"w1", now.Add(time.Hour)},
		"ended":    {"w1", now.Add(-time.Minute)},
		"released": {"released", now.Add(-time.Second)},
	}
	for key, l := range rows {
		op := &model.Operation{Tenant: "acme", Key: key, Tool: "send_notification", PayloadVersion: 1,
			Args: json.RawMessage(`{"body":"x","to":"a@example.com"}`), Fingerprint: strings.Repeat("a", 64), State: model.StateInProgress,
			ClaimNo: 1, Provider: "sandbox", DownstreamKey: "dk-" + key, LeaseOwner: l.owner, LeaseUntil: l.until}
		if err := e.st.WithTx(t.Context(), func(tx store.Tx) error { return tx.InsertOperation(op) }); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.call("acme", "create_support_task", "done", task); r.status != 201 && r.status != 200 {
		t.Fatalf("create_task: %d %s", r.status, r.body)
	}
	type view struct {
		Key           string    `json:"key"`
		LeaseUntil    time.Time `json:"lease_until"`
		LeaseEnded    *bool     `json:"lease_ended"`
		ClaimReleased *bool     `json:"claim_released"`
	}
	want := map[string]struct {
		until           time.Time
		ended, released bool
	}{
		"live":     {rows["live"].until, false, false},
		"ended":    {rows["ended"].until, true, false},
		"released": {rows["released"].until, true, true},
		"done":     {time.Time{}, false, false},
	}
	check := func(how string, v view) {
		t.Helper()
		w := want[v.Key]
		if v.LeaseEnded == nil || v.ClaimReleased == nil || !v.LeaseUntil.Equal(w.until) || *v.LeaseEnded != w.ended || *v.ClaimReleased != w.released {
			t.Errorf("%s %s: lease_until %v, lease_ended %v, claim_released %v; want %v, %v, %v", how, v.Key, v.LeaseUntil, deref(v.LeaseEnded), deref(v.ClaimReleased), w.until, w.ended, w.released)
		}
	}
	for key := range want {
		r := e.get("acme", "/v1/operations/"+key)
		var v view
		if r.status != 200 || json.Unmarshal([]byte(r.body), &v) != nil {
			t.Fatalf("GET %s: %d %s", key, r.status, r.body)
		}
		check("GET", v)
	}
	r := e.get("acme", "/v1/operations")
	var page struct{ Operations []view }
	if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil || len(page.Operations) != len(want) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	for _, v := range page.Operations {
		check("list", v)
	}
}

func deref(b *bool) any {
	if b == nil {
		return "absent"
	}
	return *b
}
