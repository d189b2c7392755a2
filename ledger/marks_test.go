package ledger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A sandbox file restored from an older backup keeps its file id but not
// the deliveries made since: its lookup of an operation delivered after
// the backup (its reply lost: unknown) would answer "has nothing" — a
// wrong "not applied", a second e-mail. The ledger remembers the newest
// delivery it saw the file hold (at every dispatch and lookup), so such a
// file cannot tell, and is refused for dispatch: restored and left behind,
// restored and then delivering again (its numbers given to other
// deliveries), or a copy of the file that went another way (a copied
// ledger's). The file as it was still answers.
func TestAProviderFileThatWentBackInTimeCannotTell(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, where, pdb string, use ledger.ProviderUse) (*ledger.Ledger, error) {
		t.Helper()
		return ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{ProviderDB: pdb, Use: use, Store: store.Options{Create: true}})
	}
	call := func(t *testing.T, where, pdb, key string, f provider.Faults) reconcile.Result {
		t.Helper()
		l, err := open(t, where, pdb, ledger.Dispatching)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		res, err := l.Service().Call(ctx, model.Request{Tenant: "acme", Key: key, Tool: "send_notification", Args: notify}, reconcile.CallOptions{Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Ledger a sends k1; the file is backed up, and a and its file are
	// copied (pair); a's k2 is delivered but its reply is lost (unknown:
	// exactly what a person asks the file about); the pair sends kp
	// through its copy of the file.
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	pdb := ledger.ProviderPath(a)
	if res := call(t, a, "", "k1", provider.Faults{}); res.Class != model.ClassDone {
		t.Fatalf("k1: %+v", res)
	}
	backup := filepath.Join(dir, "backup.provider.db")
	testfiles.Copy(t, pdb, backup)
	pair := filepath.Join(dir, "pair.db")
	testfiles.Copy(t, a, pair)
	testfiles.Copy(t, pdb, ledger.ProviderPath(pair))
	if res := call(t, a, "", "k2", provider.Faults{LoseReply: true}); res.Class != model.ClassUnknown {
		t.Fatalf("k2 with its reply lost: %+v; want unknown", res)
	}
	current := filepath.Join(dir, "current.provider.db")
	testfiles.Copy(t, pdb, current)
	// The copy of k1's file, restored, delivering again for a new ledger
	// that has sent nothing (one file may serve several ledgers).
	onward := filepath.Join(dir, "onward.provider.db")
	testfiles.Copy(t, backup, onward)
	if res := call(t, filepath.Join(dir, "other.db"), onward, "ko", provider.Faults{}); res.Class != model.ClassDone {
		t.Fatalf("another ledger through the restored file: %+v", res)
	}
	if res := call(t, pair, "", "kp", provider.Faults{}); res.Class != model.ClassDone {
		t.Fatalf("the pair's call: %+v", res)
	}
	// What a's lookups have seen so far: the file holds k2's delivery.
	const wentBack = "no longer holds delivery sbx_2, the newest this ledger saw it hold for sandbox"
	for _, c := range []struct {
		name, pdb string
		check     string // "found", or a part of the error
	}{
		{"the file as it is", current, "found"},
		{"restored from the backup before k2", backup, wentBack},
		{"restored, then delivering again", onward, wentBack},
		{"a copy of the file that went another way", ledger.ProviderPath(pair), wentBack},
	} {
		t.Run(c.name, func(t *testing.T) {
			restore := filepath.Join(t.TempDir(), "p.db")
			testfiles.Copy(t, c.pdb, restore)
			l, err := open(t, a, restore, ledger.LookupsOnly)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := l.Check(ctx, "acme", "k2")
			l.Close()
			switch {
			case c.check == "found" && (err != nil || !ev.Found):
				t.Errorf("Check: %+v %v; want found", ev, err)
			case c.check != "found" && (err == nil || !strings.Contains(err.Error(), c.check) || !strings.Contains(err.Error(), "cannot tell")):
				t.Errorf("Check: %+v %v; want cannot tell saying %q (never has nothing)", ev, err, c.check)
			}
			_, err = open(t, a, restore, ledger.Dispatching)
			if c.check == "found" {
				if err != nil {
					t.Errorf("dispatching through the file as it is: %v", err)
				}
				return
			}
			if !ledger.IsInvalid(err) || !strings.Contains(err.Error(), c.check) {
				t.Errorf("dispatching: %v; want invalid saying %q", err, c.check)
			}
			if n := deliveries(t, restore); n != deliveriesIn(t, c.pdb) {
				t.Errorf("the refused file holds %d deliveries; want it untouched", n)
			}
		})
	}
}

func deliveriesIn(t *testing.T, path string) int {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "count.db")
	testfiles.Copy(t, path, cp)
	return deliveries(t, cp)
}

// The ledger's mark follows the file at lookups too: a lookup through a
// file that went on (another ledger's deliveries) records how far it
// went, and a read-only lookup records nothing. A ledger that moves to
// another file (it has sent nothing) starts its mark again.
func TestALookupRecordsHowFarTheProviderFileWent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	pdb := filepath.Join(dir, "shared.provider.db")
	openL := func(where string, use ledger.ProviderUse, ro bool) *ledger.Ledger {
		t.Helper()
		l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{ProviderDB: pdb, Use: use, Store: store.Options{Create: !ro, ReadOnly: ro}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	send := func(where, key string) {
		t.Helper()
		l := openL(where, ledger.Dispatching, false)
		defer l.Close()
		if res, err := l.Call(ctx, "acme", key, "send_notification", notify); err != nil || res.Class != model.ClassDone {
			t.Fatalf("call %s: %+v %v", key, res, err)
		}
	}
	mark := func(where string) int64 {
		t.Helper()
		st, err := ledger.OpenStore(where, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, m, err := st.ProviderFileMark(ctx, "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		return m.Seq
	}
	send(a, "ka")
	send(b, "kb1")
	send(b, "kb2")
	if got := mark(a); got != 1 {
		t.Fatalf("a's mark after its one delivery: %d; want 1", got)
	}
	check := func(ro bool) {
		t.Helper()
		l := openL(a, ledger.LookupsOnly, ro)
		defer l.Close()
		if ev, err := l.Check(ctx, "acme", "ka"); err != nil || !ev.Found {
			t.Fatalf("Check: %+v %v", ev, err)
		}
	}
	check(true)
	if got := mark(a); got != 1 {
		t.Errorf("after a read-only lookup: mark %d; want 1 (nothing recorded)", got)
	}
	check(false)
	if got := mark(a); got != 3 {
		t.Errorf("after a lookup: mark %d; want 3 (the file's newest delivery)", got)
	}
	// A fresh ledger that dispatched through the shared file, then moves.
	fresh := filepath.Join(dir, "fresh.db")
	l := openL(fresh, ledger.Dispatching, false)
	l.Close()
	other := filepath.Join(dir, "other.provider.db")
	l, err := ledger.OpenConfig(ctx, fresh, config.Default(), ledger.ConfigOptions{ProviderDB: other, Use: ledger.Dispatching})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := mark(fresh); got != 0 {
		t.Errorf("moved to another file: mark %d; want 0", got)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal(err)
	}
}

// A long-lived opener (serve, mcp) ties its file when it opens, and checks
// it again at every dispatch: when the ledger has moved to another file
// since (another command, with the ledger still having sent nothing), the
// opener sends nothing through its own — its deliveries would sit in a
// file whose lookups the ledger no longer trusts, and the other file
// would answer "has nothing" for them.
func TestALongLivedOpenerChecksItsFileAtEveryDispatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	where := filepath.Join(dir, "l.db")
	mine, theirs := filepath.Join(dir, "mine.provider.db"), filepath.Join(dir, "theirs.provider.db")
	open := func(pdb string) *ledger.Ledger {
		t.Helper()
		l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{ProviderDB: pdb, Use: ledger.Dispatching, Store: store.Options{Create: true}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	server := open(mine)
	defer server.Close()
	other := open(theirs) // nothing sent yet: the ledger moves to this file
	other.Close()
	res, err := server.Call(ctx, "acme", "k", "send_notification", notify)
	if err != nil {
		t.Fatal(err)
	}
	if res.Class == model.ClassDone || !strings.Contains(res.Message, "not sent") || !strings.Contains(res.Message, "is not the one this ledger dispatched to sandbox through") {
		t.Errorf("a call through the file the ledger left: %+v; want not sent, saying why", res)
	}
	if n, err := server.Sandbox().Deliveries(ctx, ""); err != nil || n != 0 {
		t.Errorf("the file the ledger left holds %d deliveries; want 0", n)
	}
	// Through the file the ledger moved to, the same key goes out once.
	l := open(theirs)
	defer l.Close()
	if res, err := l.Call(ctx, "acme", "k", "send_notification", notify); err != nil || res.Class != model.ClassDone {
		t.Errorf("the same key through the recorded file: %+v %v; want done", res, err)
	}
	if n, err := l.Sandbox().Deliveries(ctx, ""); err != nil || n != 1 {
		t.Errorf("the recorded file holds %d deliveries; want 1", n)
	}
}

// Concurrent dispatches of one opener take turns noting how far the file
// went, and a turn whose delivery an earlier one noted writes nothing:
// whatever the interleaving, the ledger ends with the file's newest
// delivery noted.
func TestConcurrentDispatchesNoteTheNewestDelivery(t *testing.T) {
	ctx := context.Background()
	where := filepath.Join(t.TempDir(), "l.db")
	l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{Use: ledger.Dispatching, Store: store.Options{Create: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				if res, err := l.Call(ctx, "acme", fmt.Sprintf("k%d-%d", w, i), "send_notification", notify); err != nil || res.Class != model.ClassDone {
					t.Errorf("call: %+v %v", res, err)
				}
			}
		}()
	}
	wg.Wait()
	newest, err := l.Sandbox().Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, noted, err := l.Store().ProviderFileMark(ctx, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if newest.Seq != 40 || noted.Seq != newest.Seq || noted.Check != newest.Check {
		t.Errorf("noted %+v; want the file's newest delivery %+v (#40)", noted, newest)
	}
}
