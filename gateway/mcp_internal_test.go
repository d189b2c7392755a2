package gateway

import (
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// An MCP call's arguments that name a member twice are refused, as the
// HTTP body is: decoding them into a map kept the last of each and sent on
// a call no other reader of the same bytes would see — a client's log
// showing idempotency_key "a" while the ledger acted under "b", or one
// subject shown and another written.
func TestSplitKeyRefusesAMemberNamedTwice(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		key, rest  string // "" key: refused as invalid
	}{
		{"plain", `{"subject":"s","idempotency_key":"k"}`, "k", `{"subject":"s"}`},
		{"no arguments but the key", `{"idempotency_key":"k"}`, "k", `{}`},
		{"nested duplicates are the call's to refuse", `{"o":{"a":1,"a":2},"idempotency_key":"k"}`, "k", `{"o":{"a":1,"a":2}}`},
		{"the key twice", `{"subject":"s","idempotency_key":"a","idempotency_key":"b"}`, "", ""},
		{"the key twice, once escaped", `{"idempotency_key":"a","idempotency_k\u0065y":"b"}`, "", ""},
		{"an argument twice", `{"subject":"a","subject":"b","idempotency_key":"k"}`, "", ""},
		{"an argument twice, once escaped", `{"subject":"a","\u0073ubject":"b","idempotency_key":"k"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, rest, err := splitKey([]byte(tc.args))
			if tc.key == "" {
				if !model.IsCode(err, model.CodeInvalid) {
					t.Fatalf("splitKey(%s) = %q, %s, %v; want invalid", tc.args, key, rest, err)
				}
				return
			}
			if err != nil || key != tc.key || string(rest) != tc.rest {
				t.Fatalf("splitKey(%s) = %q, %s, %v; want %q, %s", tc.args, key, rest, err, tc.key, tc.rest)
			}
		})
	}
}
