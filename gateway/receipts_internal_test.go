package gateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// The cache of answer bodies answers every receipt exactly as encoding it
// would, and tells receipts that differ in any one field apart.
func TestReceiptBodiesAreTheEncodingOfEachReceipt(t *testing.T) {
	// The key must name every field of a receipt: a field added to
	// model.Receipt and not to receiptKey would let two receipts share
	// an answer.
	if n, k := reflect.TypeOf(model.Receipt{}).NumField(), reflect.TypeOf(receiptKey{}).NumField(); n != k {
		t.Fatalf("model.Receipt has %d fields, receiptKey %d: add the new field to receiptKey", n, k)
	}
	base := model.Receipt{Status: "replayed", Tenant: "acme", Key: "k1", Tool: "create_support_task",
		Result: json.RawMessage(`{"task_id": 7}`), ProviderRef: "ref-1"}
	var c receiptBodies
	receipts := []model.Receipt{base}
	for _, change := range []func(*model.Receipt){
		func(r *model.Receipt) { r.Status = "created" },
		func(r *model.Receipt) { r.Tenant = "other" },
		func(r *model.Receipt) { r.Key = "k2" },
		func(r *model.Receipt) { r.Tool = "notify" },
		func(r *model.Receipt) { r.Result = json.RawMessage(`{"task_id":8}`) },
		func(r *model.Receipt) { r.ProviderRef = "" },
		func(r *model.Receipt) { r.Result = json.RawMessage(`{"text":"bidi \u202e here"}`) },
		func(r *model.Receipt) {
			r.Result = json.RawMessage(`{"big":"` + strings.Repeat("x", maxCachedResult) + `"}`)
		},
	} {
		r := base
		change(&r)
		receipts = append(receipts, r)
	}
	for round := 0; round < 2; round++ { // the second round answers from the cache
		for i := range receipts {
			got, want := c.encode(&receipts[i]), encodeReceipt(&receipts[i])
			if string(got) != string(want) {
				t.Fatalf("round %d receipt %d: %s; want %s", round, i, got, want)
			}
		}
	}
}

// A receipt written without json.Marshal is byte for byte what encoding
// it writes, and every receipt of a new local operation takes that way.
func TestPlainReceiptIsTheEncoding(t *testing.T) {
	typical := model.Receipt{Status: "created", Tenant: "acme", Key: "order-42/retry.1", Tool: "create_support_task",
		Result: json.RawMessage(`{"status":"created","task_id":17}`)}
	if _, ok := appendPlainReceipt(nil, &typical); !ok {
		t.Fatal("a new local operation's receipt is not written directly")
	}
	texts := []string{"", "a", "acme", "with space", `quo"te`, `back\slash`, "<b>", "a&b", "tab\there", "nl\n",
		"del\x7f", "é", "\u2028", "\xff", "~!@#$%^*()_+=-`[]{}|;':,./?"}
	results := []string{"", "null", `{"task_id":7}`, `{"task_id": 7}`, `{"a":"<"}`, `{"a":"&"}`, `[1,2,3]`, `"s"`,
		`1e5`, `{"a":`, `{"a":1}x`, "{\"a\":\"\u2028\"}", `{"a":"\u003c"}`, `{"a":"\"\\"}`, "\t{}", `{"é":1}`, `{"del":"` + "\x7f" + `"}`}
	n, plain := 0, 0
	for _, s := range texts {
		for _, r := range results {
			rcs := []model.Receipt{
				{Status: s, Tenant: "t", Key: "k", Tool: "tool", Result: json.RawMessage(r)},
				{Status: "created", Tenant: s, Key: s, Tool: "tool", Result: json.RawMessage(r), ProviderRef: s},
				{Status: "replayed", Tenant: "t", Key: "k", Tool: s, Result: json.RawMessage(r), ProviderRef: "ref"},
			}
			if r == "" {
				rcs = append(rcs, model.Receipt{Status: "failed", Tenant: s, Key: "k", Tool: "tool"})
			}
			for i := range rcs {
				n++
				got, ok := appendPlainReceipt([]byte("prefix"), &rcs[i])
				if !ok {
					if string(got) != "prefix" {
						t.Fatalf("%+v: not plain, yet appended %q", rcs[i], got)
					}
					continue
				}
				plain++
				if want := "prefix" + string(encodeReceipt(&rcs[i])); string(got) != want {
					t.Fatalf("%+v:\n got %s\nwant %s", rcs[i], got, want)
				}
			}
		}
	}
	if plain == 0 || plain == n {
		t.Fatalf("%d of %d receipts plain: the table should hold both kinds", plain, n)
	}
}
