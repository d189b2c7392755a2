package sqlite

import (
	"os"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/model"
)

// linkedFiles watches that the ledger's name still names the files the
// writer commits into. The writer's connection stays open for the store's
// life, so SQLite itself never removes the -wal under it; if someone else
// does (rm, a clean-up script, a copy moved into place), each commit goes
// on into a file no later process will open: acknowledged, then lost with
// this process, and the next call of the key makes its effect again. After
// each durable commit (and at most every 50 ms after attempt-only ones)
// the writer compares both names with the files it opened (a stat each). A removed log is checkpointed — the unlinked log's commits,
// this one's included, copied into the ledger file and synced — and then
// the store writes nothing more: every later transaction fails, class
// internal, until a restart opens the files by their names again.
type linkedFiles struct {
	mu      sync.Mutex
	db, wal os.FileInfo // as first seen; nil: not yet (or a read-only store)
	lost    error       // set once the files changed
	checked time.Time   // the last check
}

// filesCheckInterval spaces the checks after attempt-only commits.
const filesCheckInterval = 50 * time.Millisecond

// watchFiles remembers the files the store opened. The log exists once
// the writer has read the ledger in WAL mode (the migration did); a
// journal that is not WAL (a file system without shared memory) has none
// to watch, and only the ledger file is.
func (s *Store) watchFiles() {
	if fi, err := os.Stat(s.path); err == nil {
		s.files.db = fi
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		s.files.wal = fi
	}
}

// filesLost is the error every transaction gets once the files changed.
func (s *Store) filesLost() error {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	return s.files.lost
}

// WritesRefused is the error every write gets once the files changed
// (store.WriteRefuser), nil before.
func (s *Store) WritesRefused() error { return s.filesLost() }

// checkFiles runs after a COMMIT on the writer c: nil if the commit is in
// the files that bear the ledger's name (or, for a removed log, has been
// checkpointed into the ledger file), else the error its callers get
// instead of their success.
func (s *Store) checkFiles(c *connTx) error {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if s.files.db == nil || s.files.lost != nil {
		return s.files.lost
	}
	// A commit of attempt rows only (synchronous NORMAL) may be lost to a
	// power cut by design; those are checked at most every
	// filesCheckInterval, so a replay costs no stat. Every durable commit
	// is checked.
	now := time.Now()
	if s.wsync != "FULL" && now.Sub(s.files.checked) < filesCheckInterval {
		return nil
	}
	s.files.checked = now
	db, dbErr := os.Stat(s.path)
	wal, walErr := os.Stat(s.path + "-wal")
	dbKept := dbErr == nil && os.SameFile(db, s.files.db)
	walKept := s.files.wal == nil || walErr == nil && os.SameFile(wal, s.files.wal)
	if dbKept && walKept {
		return nil
	}
	if !dbKept {
		s.files.lost = model.Errorf(model.CodeInternal, "%s was removed or replaced while this process had it open: what it commits would not be in the ledger; nothing more is written here — restart retrysafe", s.file())
		return s.files.lost
	}
	s.files.lost = model.Errorf(model.CodeInternal, "%s was removed while this process had the ledger open; its commits were copied into %s, and nothing more is written here — restart retrysafe", s.beside("-wal"), s.file())
	// Into the ledger file while the unlinked log is still readable here;
	// TRUNCATE also empties it, so another process starts a log of its own.
	var busy, logFrames, done int
	err := c.QueryRowContext(c.ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	if err != nil || busy != 0 {
		return model.Errorf(model.CodeInternal, "%s was removed while this process had the ledger open, and its commits could not be copied into the ledger file (%v): they are lost when this process ends; nothing more is written here — restart retrysafe", s.beside("-wal"), err)
	}
	return nil
}

// openedFile is the ledger file as this store opened it: the writer's
// (see watchFiles), else — a read-only store — the file under the ledger's
// name now. nil if it cannot be read.
func (s *Store) openedFile() os.FileInfo {
	s.files.mu.Lock()
	db := s.files.db
	s.files.mu.Unlock()
	if db != nil {
		return db
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil
	}
	return fi
}

// nameMoved is nil while the ledger's name still names opened (a stat),
// else the error a watcher reports. A writable store refuses every later
// write from then on, as it does once a commit notices (checkFiles).
func (s *Store) nameMoved(opened os.FileInfo) error {
	if opened == nil {
		return nil
	}
	if fi, err := os.Stat(s.path); err == nil && os.SameFile(fi, opened) {
		return nil
	}
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if s.files.lost != nil {
		return s.files.lost
	}
	err := model.Errorf(model.CodeInternal, "%s was removed or replaced while this process had it open: what it reads is the old file, and nothing more is written to it — restart retrysafe", s.file())
	if s.files.db != nil {
		s.files.lost = err
	}
	return err
}

// openedWAL is the write-ahead log as this store opened it (see
// openedFile); nil if there was none.
func (s *Store) openedWAL() os.FileInfo {
	s.files.mu.Lock()
	wal := s.files.wal
	s.files.mu.Unlock()
	if wal != nil {
		return wal
	}
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return nil
	}
	return fi
}

// walMoved is nil while the ledger's log is still opened (a stat), else
// the error a watcher reports. It does not stop the writer: its next
// commit copies what the unlinked log holds into the ledger file first
// (checkFiles), which refusing writes here would skip.
func (s *Store) walMoved(opened os.FileInfo) error {
	if opened == nil {
		return nil
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil && os.SameFile(fi, opened) {
		return nil
	}
	return model.Errorf(model.CodeInternal, "%s was removed or replaced while this process had the ledger open: what it reads is no longer what other processes write — restart retrysafe", s.beside("-wal"))
}
