package store

import "github.com/retrysafe/retrysafe/model"

// OpKey names one operation: a tenant's key.
type OpKey struct {
	Tenant, Key string
}

// RequestHistory is what Ledger.RequestHistories reads of one operation:
// the operation as stored, and its attempts of the outcomes asked for, in
// order (by their seq).
type RequestHistory struct {
	Operation model.Operation
	Attempts  []model.Attempt
}

// DistinctKeys is keys without repeats, in their first order (a driver
// that reads keys in chunks reads each once).
func DistinctKeys(keys []OpKey) []OpKey {
	seen := make(map[OpKey]bool, len(keys))
	out := make([]OpKey, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
