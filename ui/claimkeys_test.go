package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// claimVia claims tenant/key through provider name, as a worker that died
// right after its claim leaves it; null forgets what the claim recorded
// about keys, as a ledger older than schema 12 holds it.
func (l *ledger) claimVia(t *testing.T, tenant, key, name string, null bool) {
	t.Helper()
	p, err := toolconfig.Default().Tools.Prepare(model.Request{Tenant: tenant, Key: key, Tool: "send_notification", PayloadVersion: 1,
		Args: []byte(`{"to":"ops@acme.example","body":"disk full"}`), WorkerID: "worker-2"})
	if err != nil {
		t.Fatal(err)
	}
	err = l.st.WithTx(context.Background(), func(tx store.Tx) error {
		op, err := l.svc.ClaimTx(tx, p, name, time.Hour, l.clock.Now())
		if err != nil || !null {
			return err
		}
		_, err = tx.Exec(`UPDATE operations SET claim_honours_keys = NULL WHERE id = ?`, op.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(time.Second)
}

// The detail says whether the provider honoured downstream keys in the
// config that made the claim, and, while the claim runs, what that means
// if its lease ends; an operation never claimed says nothing of it.
func TestTheDetailSaysWhetherTheClaimHonouredKeys(t *testing.T) {
	l := newLedger(t)
	l.claimVia(t, "acme", "ignored", "sandbox", false)
	l.claimVia(t, "acme", "honoured", "sandbox-idem", false)
	l.claimVia(t, "acme", "unrecorded", "sandbox-idem", true)
	l.unknown(t, "acme", "lost", "ops@acme.example")
	l.task(t, "acme", "local", "s")
	l.clock.Advance(50 * time.Minute)
	l.claimVia(t, "acme", "running", "sandbox", false) // the others' leases (an hour) end; this one's runs
	l.clock.Advance(15 * time.Minute)
	for _, tc := range []struct {
		key  string
		want []string
		lack []string
	}{
		{"ignored", []string{"keys at claim", "not honoured, in the config that made claim 1", "its lease ended with no result: it is not sent again under this downstream key; a sweep or retry makes it unknown"}, nil},
		{"running", []string{"keys at claim", "not honoured, in the config that made claim 1", "if its lease ends with no result: it is not sent again under this downstream key; a sweep or retry makes it unknown"}, nil},
		{"honoured", []string{"keys at claim", "honoured, in the config that made claim 1", "its lease ended with no result: a sweep or retry may send it again under this downstream key (where its own config says so too)"}, []string{"not honoured"}},
		{"unrecorded", []string{"keys at claim", "not recorded (claim 1 was made before the ledger kept it)", "it is not sent again under this downstream key"}, nil},
		{"lost", []string{"keys at claim", "not honoured, in the config that made claim 1"}, []string{"if its lease ends"}},
		{"local", nil, []string{"keys at claim"}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			h := open(t, config(l), 120, 60)
			h.send(openDetailMsg{Target: detailTarget{Tenant: "acme", Key: tc.key}})
			containsText(t, h, append([]string{"acme / " + tc.key}, tc.want...)...)
			for _, b := range tc.lack {
				if strings.Contains(boxText(h.view()), b) {
					t.Fatalf("%s: the detail says %q:\n%s", tc.key, b, h.view())
				}
			}
		})
	}
}
