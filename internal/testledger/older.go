package testledger

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Older is a first call as a build before the stricter refusals recorded
// it: numbers a double cannot hold exactly (refused since 70bd91a), a
// tenant or key stacking more than 3 combining marks (since 011dc8b).
type Older struct {
	Tenant, Key, Tool string
	Args              string // the bytes as sent
	// State: applied (a local tool's), unknown or not_applied (an
	// external tool's: its reply lost, or "not accepted").
	State model.State
}

// RecordOlder writes, in one transaction of st, the rows such a build
// wrote for o's first call under payload version 1: the operation with
// the RFC 8785 form of the bytes as its arguments — which rounds a number
// to the nearest double — and the fingerprint of that form, its effect
// and receipt (applied) or its downstream key and provider (unknown, not
// applied), and its first attempt. The receipt, or the provider's
// answer, is as such a build recorded it.
func RecordOlder(t testing.TB, st store.Ledger, tools *model.Registry, o Older) *model.Operation {
	t.Helper()
	tool, err := tools.Lookup(o.Tool)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := jcs.Transform([]byte(o.Args))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(o.Args)))
	dec.UseNumber()
	var decoded map[string]any
	if err := dec.Decode(&decoded); err != nil {
		t.Fatal(err)
	}
	fp := model.Fingerprint(tool.Name, 1, canonical)
	op := &model.Operation{Tenant: o.Tenant, Key: o.Key, Tool: tool.Name, PayloadVersion: 1, Args: canonical,
		Summary: tool.Summary(decoded), Fingerprint: fp, State: o.State, ClaimNo: 1}
	err = st.WithTx(context.Background(), func(tx store.Tx) error {
		a := &model.Attempt{Fingerprint: fp, WorkerID: "older-build", Duration: time.Millisecond}
		switch o.State {
		case model.StateApplied:
			if tool.Kind() != model.EffectLocal {
				t.Fatalf("RecordOlder: applied is a local tool's; %s is external", tool.Name)
			}
			op.Receipt, op.ExpiresAt = json.RawMessage(`{}`), tx.Now().Add(24*time.Hour)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			result, err := tx.InsertLocalEffect(store.LocalEffect{Table: tool.Effect.Table, Tool: tool.Name, Tenant: op.Tenant,
				OperationID: op.ID, Text: tool.SummaryText(decoded), Args: canonical})
			if err != nil {
				return err
			}
			rc, _ := json.Marshal(model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, Result: result})
			if err := tx.SetReceipt(op.ID, rc); err != nil {
				return err
			}
			op.Receipt, a.Outcome = rc, model.OutcomeCreated
		case model.StateUnknown, model.StateNotApplied:
			if tool.Kind() != model.EffectExternal {
				t.Fatalf("RecordOlder: %s is an external tool's; %s is local", o.State, tool.Name)
			}
			id, err := tx.LedgerID()
			if err != nil {
				return err
			}
			op.Provider, op.DownstreamKey = tool.Effect.Provider, reconcile.DownstreamKey(id, op.Tenant, op.Key)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			a.Outcome, a.Error = model.OutcomeTimedOut, "outcome unknown: reply lost: connection reset after the request was sent"
			if o.State == model.StateNotApplied {
				a.Outcome, a.Error = model.OutcomeNotApplied, "503 not accepted: nothing was applied"
			}
		default:
			t.Fatalf("RecordOlder: no way to record %s", o.State)
		}
		a.OperationID = op.ID
		return tx.InsertAttempt(a)
	})
	if err != nil {
		t.Fatalf("RecordOlder %s/%s: %v", o.Tenant, o.Key, err)
	}
	return op
}
