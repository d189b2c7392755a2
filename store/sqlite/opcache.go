package sqlite

import (
	"bytes"

	"github.com/retrysafe/retrysafe/model"
)

// opCache remembers operations the writer read in relaxed batches, so a
// replay's transaction (read the operation, append an attempt row) does
// not read the same row again and again under the write lock: the read was
// the largest single cost of a replay on the writer's serial path.
//
// It is only ever right, never a guess:
//   - it is used only in a batch whose every caller is relaxed, and a
//     relaxed caller can write nothing but attempt rows (durableOnly), which
//     change no operation;
//   - any batch that may write more (a durable one) empties it before its
//     callers run, and nothing read in such a batch is kept;
//   - at the start of every relaxed batch, with the write lock held, the
//     connection's PRAGMA data_version says whether any other connection
//     (another process: the CLI, the console, a sweep; another Store on the
//     file) committed since the last check; if so it is emptied;
//   - a batch that fails in any way empties it.
//
// Only the writer (holding wsem) touches it, so it needs no lock.
type opCache struct {
	// valid says the entries agree with the file as of the last check
	// (data_version); version is that check's value.
	valid   bool
	version int64
	ops     map[string]*model.Operation
}

// maxCachedOps bounds the cache; past it, it starts over.
const maxCachedOps = 4096

func opCacheKey(tenant, key string) string { return tenant + "\x00" + key }

func (c *opCache) reset() {
	c.valid = false
	c.ops = nil
}

func (c *opCache) get(tenant, key string) (*model.Operation, bool) {
	op, ok := c.ops[opCacheKey(tenant, key)]
	if !ok {
		return nil, false
	}
	return cloneOp(op), true
}

func (c *opCache) put(op *model.Operation) {
	if c.ops == nil || len(c.ops) >= maxCachedOps {
		c.ops = make(map[string]*model.Operation, 64)
	}
	c.ops[opCacheKey(op.Tenant, op.Key)] = cloneOp(op)
}

// cloneOp copies an operation and its byte slices: what a caller does with
// its copy never reaches the cache.
func cloneOp(op *model.Operation) *model.Operation {
	cp := *op
	cp.Args = bytes.Clone(op.Args)
	cp.Receipt = bytes.Clone(op.Receipt)
	if op.Finding != nil {
		f := *op.Finding
		cp.Finding = &f
	}
	if op.BindingFinding != nil {
		f := *op.BindingFinding
		cp.BindingFinding = &f
	}
	if op.ClaimHonoursKeys != nil {
		b := *op.ClaimHonoursKeys
		cp.ClaimHonoursKeys = &b
	}
	return &cp
}

// checkOpCache runs at the start of a relaxed batch, in its transaction
// (the write lock held): the cache stays only if no other connection has
// committed since the last check.
func (s *Store) checkOpCache(c *connTx) {
	var v int64
	if err := c.QueryRowContext(c.ctx, "PRAGMA data_version").Scan(&v); err != nil {
		s.opc.reset()
		return
	}
	if !s.opc.valid || v != s.opc.version {
		s.opc.ops = nil
	}
	s.opc.valid, s.opc.version = true, v
}
