package model

import (
	"bytes"
	"encoding/json"
	"sync"
)

// argsCache remembers what Prepare computed from a tool's arguments — the
// canonical form, the fingerprint, the summary and the decoded object —
// by the exact bytes sent (and the tool and payload version). Every one of
// those is a function of exactly those inputs, so a hit is what Prepare
// would compute again: a retried call sends the same bytes, and a gateway
// under replay load skipped the decoding, the canonical form, the schema
// check and the hash. Only arguments that passed are kept; each hit gets
// its own copies of the byte slice and the object (a custom local effect
// may change what it is handed).
type argsCache struct {
	mu sync.Mutex
	m  map[argsKey]*argsEntry
}

type argsKey struct {
	tool    *Tool
	version int
	args    string
}

type argsEntry struct {
	canonical   []byte
	fingerprint string
	summary     string
	decoded     map[string]any
}

// Bounds of the cache: arguments larger than maxCachedArgs are not kept,
// and past maxArgsEntries it starts over.
const (
	maxCachedArgs  = 2 << 10
	maxArgsEntries = 4096
)

func (c *argsCache) get(t *Tool, version int, raw []byte) (*argsEntry, bool) {
	if c == nil || len(raw) > maxCachedArgs {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.m[argsKey{t, version, string(raw)}]
	c.mu.Unlock()
	return e, ok
}

func (c *argsCache) put(t *Tool, version int, raw []byte, e *argsEntry) {
	if c == nil || len(raw) > maxCachedArgs {
		return
	}
	e = &argsEntry{canonical: bytes.Clone(e.canonical), fingerprint: e.fingerprint, summary: e.summary, decoded: copyJSON(e.decoded).(map[string]any)}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxArgsEntries {
		c.m = make(map[argsKey]*argsEntry, 256)
	}
	c.m[argsKey{t, version, string(raw)}] = e
	c.mu.Unlock()
}

// copyJSON deep-copies a decoded JSON value (objects and arrays; strings,
// json.Number, bools and nil are values).
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = copyJSON(e)
		}
		return s
	case json.Number, string, bool, nil, float64:
		return x
	}
	return v
}
