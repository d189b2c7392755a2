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
// (textsafe.JSON), and a newline. A receipt of plain printable ASCII — a
// new operation's every time — is written directly (appendPlainReceipt);
// the others are encoded once and remembered.
func (c *receiptBodies) encode(rc *model.Receipt) []byte {
	if b, ok := appendPlainReceipt(make([]byte, 0, 128+len(rc.Key)+len(rc.Result)), rc); ok {
		return b
	}
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

// appendPlainReceipt appends encodeReceipt(rc) to b without json.Marshal,
// for a receipt whose every byte json.Marshal and textsafe.JSON would leave
// as it is: strings of printable ASCII without '"', '\\' and the HTML
// characters Marshal escapes ('<', '>', '&'), and a result that is valid
// JSON of printable ASCII without whitespace (so compacting it changes
// nothing) or those HTML characters. ok is false for any other receipt,
// and the caller encodes it. The field order and omitempty are
// model.Receipt's; a test compares the two encodings.
func appendPlainReceipt(b []byte, rc *model.Receipt) ([]byte, bool) {
	if !plainString(rc.Status) || !plainString(rc.Tenant) || !plainString(rc.Key) || !plainString(rc.Tool) ||
		!plainString(rc.ProviderRef) || !plainRaw(rc.Result) {
		return b, false
	}
	b = append(b, `{"status":"`...)
	b = append(b, rc.Status...)
	b = append(b, `","tenant":"`...)
	b = append(b, rc.Tenant...)
	b = append(b, `","key":"`...)
	b = append(b, rc.Key...)
	b = append(b, `","tool":"`...)
	b = append(b, rc.Tool...)
	b = append(b, `","result":`...)
	b = append(b, rc.Result...)
	if rc.ProviderRef != "" {
		b = append(b, `,"provider_ref":"`...)
		b = append(b, rc.ProviderRef...)
		b = append(b, '"')
	}
	return append(b, "}\n"...), true
}

// plainString: a string json.Marshal writes as its bytes between quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainRaw: a json.RawMessage json.Marshal writes as it is (compact, no
// character it escapes), and valid (else Marshal fails).
func plainRaw(r json.RawMessage) bool {
	if len(r) == 0 {
		return false // Marshal writes null
	}
	for _, c := range r {
		if c <= 0x20 || c > 0x7e || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return json.Valid(r)
}
