package reconcile

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/retrysafe/retrysafe/model"
)

// Decoding a stored receipt through the memory is json.Unmarshal, hit or
// miss, and a caller changing its copy changes nobody else's.
func TestStoredReceiptsDecodeAsUnmarshal(t *testing.T) {
	c := &storedReceipts{}
	for _, b := range []string{
		`{"status":"created","tenant":"acme","key":"k","tool":"t","result":{"task_id":1}}`,
		`{"status":"created","tenant":"acme","key":"k2","tool":"t","result":{"task_id":2},"provider_ref":"r"}`,
		`{"status":"failed","tenant":"acme","key":"k3","tool":"t","result":null}`,
		`{"status":`,
	} {
		var want model.Receipt
		werr := json.Unmarshal([]byte(b), &want)
		for round := 0; round < 2; round++ {
			got, err := c.decode([]byte(b))
			if (err != nil) != (werr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
				t.Fatalf("round %d of %s: %+v, %v; want %+v, %v", round, b, got, err, want, werr)
			}
			if err == nil && len(got.Result) > 0 {
				got.Result[0] = 'X'
				got.Status = "replayed"
			}
		}
	}
}
