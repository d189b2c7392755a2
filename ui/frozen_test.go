package ui

import (
	"database/sql"
	"testing"

	toolconfig "github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// A read-only console on a ledger in a directory it may not write reads
// the file as an immutable snapshot (store.FrozenReporter). It used to
// call that frozen view "refreshed HH:MM" for ever, while other processes
// settled and made operations it never showed. It says SNAPSHOT instead,
// never "refreshed"; once the file changed on disk it says so; and r says
// that only reopening reloads.
func TestAConsoleOnASnapshotSaysSoAndNeverRefreshed(t *testing.T) {
	l := fixture(t)
	l.tl.Close()
	db, err := sql.Open("sqlite", "file:"+l.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close() // the last connection: no -wal left
	frozen, err := sqlite.OpenFrozen(l.path, store.Options{Now: l.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { frozen.Close() })
	cfg := config(l)
	cfg.Store, cfg.ReadOnly = frozen, true
	cfg.Service = reconcile.New(frozen, toolconfig.Default().Tools, provider.Registry{})
	for _, size := range [][2]int{{120, 35}, {40, 10}} {
		h := open(t, cfg, size[0], size[1])
		h.tick().tick()
		h.keys("r")
		h.contains("SNAPSHOT")
		h.lacks("refreshed", "09:2")
		if size[0] == 120 {
			h.contains("SNAPSHOT, not live", "Quit and reopen to reload")
		}
	}

	h := open(t, cfg, 120, 35)
	h.tick()
	// Another process settles an operation: the snapshot does not follow.
	l.tl.Open()
	l.st, l.svc = l.tl.Store, l.tl.Svc
	l.decide(t, model.ActionMarkApplied, "acme", "notify-1")
	h.tick()
	h.contains("⚠ SNAPSHOT, file changed", "changed on disk since it was opened", "reopen")
	h.lacks("refreshed", "Live refresh failing")
	h.keys("esc", "r")
	h.contains("⚠ SNAPSHOT, file changed", "changed on disk since it was opened", "reopen")
	h.lacks("refreshed")
	h = open(t, cfg, 40, 10)
	h.tick()
	h.contains("⚠ old SNAPSHOT")
}
