package gateway

import (
	"encoding/json"
	"sync"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// receiptBodies remembers the answer bodies of receipts by the receipts'
// own fields: under replay load the same receipts are answered again and
// again, and encoding one (json.Marshal checks and compacts the effect's
// raw JSON) was a tenth of the gateway's CPU per replay. The key is the
// whole receipt, so a hit is byte for byte what encoding it would write.
type receiptBodies struct {
	mu sync.Mutex
	m  map[receiptKey]string
}

// receiptKey is a receipt as a comparable key: every field, Result as a
// string.
type receiptKey struct {
	status, tenant, key, tool, result, providerRef string
}

func comparableReceipt(rc *model.Receipt) receiptKey {
	return receiptKey{rc.Status, rc.Tenant, rc.Key, rc.Tool, string(rc.Result), rc.ProviderRef}
}

// Bounds: receipts whose result is larger are encoded every time; past
// maxReceiptBodies entries the cache starts over.
const (
	maxCachedResult  = 2 << 10
	maxReceiptBodies = 4096
)

// encode is the answer body of rc: its JSON, made safe for a terminal
// (textsafe.JSON), and a newline.
func (c *receiptBodies) encode(rc *model.Receipt) []byte {
	if len(rc.Result) > maxCachedResult {
		return encodeReceipt(rc)
	}
	k := comparableReceipt(rc)
	c.mu.Lock()
	body, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return []byte(body)
	}
	b := encodeReceipt(rc)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxReceiptBodies {
		c.m = make(map[receiptKey]string, 256)
	}
	c.m[k] = string(b)
	c.mu.Unlock()
	return b
}

func encodeReceipt(rc *model.Receipt) []byte {
	b, _ := json.Marshal(rc)
	return append(textsafe.JSON(b), '\n')
}
