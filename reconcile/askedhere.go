package reconcile

import "sync"

// A "has nothing" recorded in the ledger says what the provider held when
// it was asked, in the history that ledger holds. A ledger restored from a
// backup, or one of two copies (they keep one id, so one downstream key
// per operation), holds a "has nothing" from before the other history made
// the effect under that same key: deciding "not applied" on it sends the
// effect a second time. So a "not applied" rests only on a "has nothing"
// this process asked for itself (Look); one it read from the ledger is
// asked again first (NeedsLook, FindingReview.Recheck).

// askedHere is the lookups this process recorded itself, by operation id
// and lookup number.
type askedHere struct {
	mu sync.Mutex
	m  map[[2]int64]struct{}
}

func (a *askedHere) add(opID int64, seq int) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[[2]int64]struct{}{}
	}
	a.m[[2]int64{opID, int64(seq)}] = struct{}{}
}

func (a *askedHere) has(opID int64, seq int) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.m[[2]int64{opID, int64(seq)}]
	return ok
}
