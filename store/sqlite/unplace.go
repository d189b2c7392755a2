package sqlite

// Unplace makes the store's errors name the ledger without its path from
// now on ("the ledger"): a gateway hands them to its clients, and where the
// ledger lives is the operator's to know. Path still says where it is.
// The words a caller sent (a key, an argument) are never touched: the path
// is left out where the store would have put it, not replaced afterwards.
func (s *Store) Unplace() { s.unplaced.Store(true) }

// file is the ledger file as an error names it.
func (s *Store) file() string {
	if s.unplaced.Load() {
		return "the ledger"
	}
	return s.path
}

// ledger is the ledger as an error names it: "ledger PATH".
func (s *Store) ledger() string {
	if s.unplaced.Load() {
		return "the ledger"
	}
	return "ledger " + s.path
}

// beside is a file SQLite keeps beside the ledger's (suffix "-wal" or
// "-shm") as an error names it.
func (s *Store) beside(suffix string) string {
	if s.unplaced.Load() {
		return "the ledger's " + suffix[1:] + " file"
	}
	return s.path + suffix
}
