package reconcile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/internal/testledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// A key an older build recorded from a request this build refuses — a
// number a double cannot hold exactly (before 70bd91a), a key stacking
// more than 3 combining marks (before 011dc8b) — retried with the very
// bytes it sent, gets its operation's answer: its receipt, "unknown, stop"
// — not "fix the arguments", after which the caller changes them under a
// new key and the effect is made a second time. The fingerprint the older
// build recorded decides. Nothing is made from such a request: one not
// applied is refused, nothing sent. Other bytes under the key, and the
// same bytes under a new key, are refused as always, nothing written.
func TestARetryOfARequestAnOlderBuildRecordedGetsItsOperationsAnswer(t *testing.T) {
	marks := "k" + strings.Repeat("\u0301", 5)
	cases := []struct {
		name  string
		older testledger.Older
		other string // other bytes under the key
		class model.Class
		want  string // in the answer's message (a refusal's text)
	}{
		{"applied, more precision than a double", testledger.Older{Key: "kb18b1f", Tool: "create_support_task",
			Args: `{"subject":"x","amount":10.000000000000001}`, State: model.StateApplied},
			`{"subject":"x","amount":10.000000000000003}`, model.ClassDone, ""},
		{"applied, a longer spelling of 0.30000000000000004", testledger.Older{Key: "k03", Tool: "create_support_task",
			Args: `{"subject":"x","p":0.3000000000000000444}`, State: model.StateApplied},
			`{"subject":"y","p":0.3000000000000000444}`, model.ClassDone, ""},
		{"applied, 5 stacked marks", testledger.Older{Key: marks, Tool: "create_support_task",
			Args: `{"subject":"x"}`, State: model.StateApplied},
			`{"subject":"y"}`, model.ClassDone, ""},
		{"unknown, more precision than a double", testledger.Older{Key: "ku", Tool: "send_notification",
			Args: `{"to":"a@example.com","body":"b","n":10.000000000000001}`, State: model.StateUnknown},
			`{"to":"a@example.com","body":"c","n":10.000000000000001}`, model.ClassUnknown, "a person must reconcile it"},
		{"unknown, 5 stacked marks", testledger.Older{Key: marks + "u", Tool: "send_notification",
			Args: `{"to":"a@example.com","body":"b"}`, State: model.StateUnknown},
			`{"to":"a@example.com","body":"c"}`, model.ClassUnknown, "a person must reconcile it"},
		{"not applied, more precision than a double", testledger.Older{Key: "kn", Tool: "send_notification",
			Args: `{"to":"a@example.com","body":"b","n":0.3000000000000000444}`, State: model.StateNotApplied},
			`{"to":"a@example.com","body":"c","n":0.3000000000000000444}`, model.ClassInvalid, "not made again"},
		{"not applied, 5 stacked marks", testledger.Older{Key: marks + "n", Tool: "send_notification",
			Args: `{"to":"a@example.com","body":"b"}`, State: model.StateNotApplied},
			`{"to":"a@example.com","body":"c"}`, model.ClassInvalid, "not made again"},
	}
	bothDrivers(t, func(t *testing.T, mk func(*clock) *ledger) {
		l := mk(newClock())
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.older.Tenant = "acme"
				op := testledger.RecordOlder(t, l.st, l.svc.Tools, c.older)
				req := model.Request{Tenant: "acme", Key: c.older.Key, Tool: c.older.Tool, Args: []byte(c.older.Args), WorkerID: "w"}
				if _, err := l.svc.Tools.Prepare(req); !model.IsCode(err, model.CodeInvalid) {
					t.Fatalf("set-up: this build takes the request (%v)", err)
				}
				effects, deliveries := 0, 0
				if op.Provider != "" {
					deliveries = l.deliveries("acme", c.older.Key)
				} else {
					effects = l.effects(c.older.Tool)
				}
				res := l.call(req, reconcile.CallOptions{})
				if res.Class != c.class || !strings.Contains(res.Message, c.want) {
					t.Fatalf("the same bytes: %s %q; want %s with %q", res.Class, res.Message, c.class, c.want)
				}
				if testing.Verbose() {
					t.Logf("%s: %s", res.Class, res.Message)
				}
				if c.class == model.ClassDone && (res.Outcome != model.OutcomeReplayed || res.Receipt == nil || res.Receipt.Status != "replayed" ||
					string(res.Receipt.Result) != string(receiptResult(t, op))) {
					t.Fatalf("the same bytes: %+v; want the stored receipt replayed", res)
				}
				if op.Provider == "" && l.effects(c.older.Tool) != effects {
					t.Fatalf("%d effects after the retry, want %d", l.effects(c.older.Tool), effects)
				}
				if op.Provider != "" && l.deliveries("acme", c.older.Key) != deliveries {
					t.Fatalf("the retry was sent")
				}
				if now := l.op("acme", c.older.Key); now.State != op.State || now.Version != op.Version {
					t.Fatalf("the operation moved: %s v%d, was %s v%d", now.State, now.Version, op.State, op.Version)
				}
				// Other bytes under the key: refused as this build refuses
				// them, as before this fix.
				other := req
				other.Args = []byte(c.other)
				if res, err := l.svc.Call(context.Background(), other, reconcile.CallOptions{}); res.Class != model.ClassInvalid || err == nil {
					t.Fatalf("other bytes: %s %v; want invalid", res.Class, err)
				}
				// The same bytes under a new key: refused, nothing written.
				fresh := req
				fresh.Key = c.older.Key + "-new"
				if res, err := l.svc.Call(context.Background(), fresh, reconcile.CallOptions{}); res.Class != model.ClassInvalid || err == nil {
					t.Fatalf("a new key: %s %v; want invalid", res.Class, err)
				}
				if _, err := l.st.Get(context.Background(), "acme", fresh.Key); !model.IsCode(err, model.CodeNotFound) {
					t.Fatalf("a refused new key was written: %v", err)
				}
			})
		}
	})
}

// receiptResult is the result op's stored receipt carries.
func receiptResult(t *testing.T, op *model.Operation) []byte {
	t.Helper()
	var rc model.Receipt
	if err := json.Unmarshal(op.Receipt, &rc); err != nil {
		t.Fatal(err)
	}
	return rc.Result
}
