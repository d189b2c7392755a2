package reconcile

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/retrysafe/retrysafe/model"
)

// storedReceipts remembers stored receipts decoded, by their exact bytes:
// a replay answers the same stored receipt again and again, and decoding
// it was a twentieth of a replay's CPU. Each caller gets its own copy
// (the effect's raw JSON cloned).
type storedReceipts struct {
	mu sync.Mutex
	m  map[string]model.Receipt
}

// Bounds: larger receipts are decoded every time; past maxStoredReceipts
// entries the memory starts over.
const (
	maxStoredReceiptBytes = 2 << 10
	maxStoredReceipts     = 4096
)

// decode is json.Unmarshal of a stored receipt.
func (c *storedReceipts) decode(b []byte) (model.Receipt, error) {
	if c == nil || len(b) > maxStoredReceiptBytes {
		var rc model.Receipt
		err := json.Unmarshal(b, &rc)
		return rc, err
	}
	c.mu.Lock()
	rc, ok := c.m[string(b)]
	c.mu.Unlock()
	if ok {
		rc.Result = bytes.Clone(rc.Result)
		return rc, nil
	}
	if err := json.Unmarshal(b, &rc); err != nil {
		return model.Receipt{}, err
	}
	kept := rc
	kept.Result = bytes.Clone(rc.Result)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxStoredReceipts {
		c.m = make(map[string]model.Receipt, 256)
	}
	c.m[string(b)] = kept
	c.mu.Unlock()
	return rc, nil
}
