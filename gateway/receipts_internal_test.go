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
