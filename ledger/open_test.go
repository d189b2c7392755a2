package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/internal/testfiles"
	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

var notify = json.RawMessage(`{"to":"oncall@example.com","body":"disk full"}`)

// sentLedger is a ledger file that has sent one notification through the
// sandbox file beside it.
func sentLedger(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	where := filepath.Join(t.TempDir(), "a.db")
	l, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{Use: ledger.Dispatching, Store: store.Options{Create: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if res, err := l.Call(ctx, "acme", "k", "send_notification", notify); err != nil || res.Class != model.ClassDone {
		t.Fatalf("setup call: %+v %v", res, err)
	}
	return where
}

func deliveries(t *testing.T, path string) int {
	t.Helper()
	sb, err := sandbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	n, err := sb.Deliveries(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// OpenConfig keeps the sandbox file's safety rules for every opener: a
// file is never created to be asked, never created beside a ledger that
// has sent to the sandbox, and a file that never served the ledger is
// neither trusted nor sent to. Each refusal is invalid (a setup error) and
// leaves the files as they were.
func TestOpenConfigKeepsTheProviderFileRules(t *testing.T) {
	ctx := context.Background()
	a := sentLedger(t)
	b := sentLedger(t)
	// A copy of A with no provider file beside it.
	alone := filepath.Join(t.TempDir(), "alone.db")
	testfiles.Copy(t, a, alone)
	before := deliveries(t, ledger.ProviderPath(b))

	for _, c := range []struct {
		name       string
		where, pdb string
		use        ledger.ProviderUse
		openErr    bool   // OpenConfig refuses (invalid)
		check      string // what Check of (acme, k) says: "found", or a part of its error
		noFile     string // a file that must not exist afterwards
	}{
		{"lookups, own file", a, "", ledger.LookupsOnly, false, "found", ""},
		{"lookups, file missing", alone, "", ledger.LookupsOnly, false, "is not there", ledger.ProviderPath(alone)},
		{"lookups, another ledger's file", a, ledger.ProviderPath(b), ledger.LookupsOnly, false, "never served this ledger", ""},
		{"no providers", a, "", ledger.NoProviders, false, "no provider", ""},
		{"dispatching, file missing beside history", alone, "", ledger.Dispatching, true, "is not there", ledger.ProviderPath(alone)},
		{"dispatching, another ledger's file", a, ledger.ProviderPath(b), ledger.Dispatching, true, "never served this ledger", ""},
		{"dispatching, the ledger as its provider file", a, a, ledger.Dispatching, true, "not a sandbox provider's file", ""},
		{"lookups, the ledger as its provider file", a, a, ledger.LookupsOnly, true, "not a sandbox provider's file", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := ledger.OpenConfig(ctx, c.where, config.Default(), ledger.ConfigOptions{ProviderDB: c.pdb, Use: c.use})
			if c.openErr {
				if !ledger.IsInvalid(err) || !strings.Contains(err.Error(), c.check) {
					t.Fatalf("OpenConfig: %v; want invalid saying %q", err, c.check)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				ev, err := l.Check(ctx, "acme", "k")
				switch {
				case c.check == "found" && (err != nil || !ev.Found):
					t.Errorf("Check: %+v %v; want found", ev, err)
				case c.check != "found" && (err == nil || !strings.Contains(err.Error(), c.check)):
					t.Errorf("Check: %+v %v; want cannot tell saying %q", ev, err, c.check)
				}
				if c.use == ledger.NoProviders && (l.ProviderDB() != "" || l.Sandbox() != nil) {
					t.Errorf("no providers, but ProviderDB %q, Sandbox %v", l.ProviderDB(), l.Sandbox())
				}
			}
			if c.noFile != "" {
				if _, err := os.Stat(c.noFile); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created", c.noFile)
				}
			}
		})
	}
	if after := deliveries(t, ledger.ProviderPath(b)); after != before {
		t.Errorf("B's file held %d deliveries, now %d", before, after)
	}
	if _, err := ledger.OpenConfig(ctx, a, nil, ledger.ConfigOptions{}); !ledger.IsInvalid(err) {
		t.Errorf("OpenConfig without a config: %v; want invalid", err)
	}
}

// The Go-tools Open and the config's OpenConfig open the same ledger: what
// one wrote, the other reads (the command line sees what a Go program did).
func TestOpenAndOpenConfigShareTheLedger(t *testing.T) {
	ctx := context.Background()
	where := sentLedger(t)
	l, err := ledger.Open(ctx, where, ledger.Options{Tools: []ledger.Tool{{Name: "note", Summary: "text", Schema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Local: func(ledger.Tx, ledger.LocalCall) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := l.Call(ctx, "acme", "n", "note", json.RawMessage(`{"text":"hi"}`)); err != nil || res.Class != model.ClassDone {
		t.Fatalf("Go tool call: %+v %v", res, err)
	}
	if op, err := l.Get(ctx, "acme", "k"); err != nil || op.State != model.StateApplied || op.Tool != "send_notification" {
		t.Fatalf("Get of the config tool's operation: %+v %v", op, err)
	}
	l.Close()
	ro, err := ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{Store: store.Options{ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if op, err := ro.Get(ctx, "acme", "n"); err != nil || op.Tool != "note" {
		t.Fatalf("Get of the Go tool's operation: %+v %v", op, err)
	}
	if !ro.Store().ReadOnly() || ro.Where() != where {
		t.Errorf("ReadOnly %v, Where %q", ro.Store().ReadOnly(), ro.Where())
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := ledger.OpenConfig(ctx, missing, config.Default(), ledger.ConfigOptions{}); err == nil {
		t.Error("OpenConfig without Store.Create opened a missing ledger")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was created", missing)
	}
}

// A caller that dies after its claim leaves the operation in progress;
// once the lease ends, Sweep makes it unknown (a provider that ignores
// downstream keys may have applied it), and the next call of the key is
// told to stop.
func TestSweepMovesAnAbandonedClaimToUnknown(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	sb, err := sandbox.Open(filepath.Join(dir, "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	l, err := ledger.Open(ctx, filepath.Join(dir, "l.db"), ledger.Options{
		Providers: []provider.Provider{sb.Provider("mail", false)},
		Tools: []ledger.Tool{{Name: "send", Summary: "to", Provider: "mail",
			Schema: `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`}},
		Store: store.Options{Now: func() time.Time { return now }},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Service().Lease = time.Minute
	l.Service().At = func(p reconcile.Point) {
		if p == reconcile.PointAfterClaim {
			panic("the caller dies")
		}
	}
	func() {
		defer func() { recover() }()
		l.Call(ctx, "acme", "k", "send", json.RawMessage(`{"to":"a"}`))
	}()
	l.Service().At = nil
	if rep, err := l.Sweep(ctx); err != nil || rep.Unknown != 0 {
		t.Fatalf("sweep within the lease: %+v %v; want nothing moved", rep, err)
	}
	now = now.Add(2 * time.Minute)
	if rep, err := l.Sweep(ctx); err != nil || rep.Unknown != 1 {
		t.Fatalf("sweep after the lease: %+v %v; want one to unknown", rep, err)
	}
	if res, err := l.Call(ctx, "acme", "k", "send", json.RawMessage(`{"to":"a"}`)); err != nil || res.Class != model.ClassUnknown {
		t.Fatalf("the next call: %+v %v; want unknown", res, err)
	}
}

// Resending (a sweep) opens no sandbox file for a ledger that has sent
// nothing to a sandbox — none is made, none tied, so the file it was
// pointed at does not come to vouch for the ledger — and opens and ties
// the file as Dispatching does for one that has sent.
func TestResendingOpensNoSandboxFileForALedgerThatSentNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	l, err := ledger.OpenConfig(ctx, fresh, config.Default(), ledger.ConfigOptions{Store: store.Options{Create: true}})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	pdb := filepath.Join(dir, "p.db")
	l, err = ledger.OpenConfig(ctx, fresh, config.Default(), ledger.ConfigOptions{ProviderDB: pdb, Use: ledger.Resending})
	if err != nil {
		t.Fatal(err)
	}
	if l.Sandbox() != nil {
		t.Errorf("a sandbox file was opened for a ledger that sent nothing")
	}
	if rep, err := l.Sweep(ctx); err != nil {
		t.Errorf("Sweep: %+v %v", rep, err)
	}
	l.Close()
	if _, err := os.Stat(pdb); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was made: %v", pdb, err)
	}

	sent := sentLedger(t)
	l, err = ledger.OpenConfig(ctx, sent, config.Default(), ledger.ConfigOptions{Use: ledger.Resending})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Sandbox() == nil {
		t.Fatalf("no sandbox file opened for a ledger that sent to it")
	}
	id, err := l.Store().LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Sandbox().Serves(ctx, id, "sandbox"); err != nil || !ok {
		t.Errorf("Serves(sandbox) = %v, %v; want the file tied", ok, err)
	}
}

// A copy of a ledger keeps its ledger id, so a sandbox file's ties cannot
// tell the copies apart: the ledger records the file it dispatches
// through by the file's own id. Ledger A and its copy B (made before
// either sent) each send through their own file; each file cannot tell
// about the other copy's operations and is refused to it for dispatch,
// while a copy of a ledger with a copy of its file is still the same
// pair. A ledger that has sent nothing may move to another file.
func TestOpenConfigTellsACopysProviderFileFromItsOwn(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, where, pdb string, use ledger.ProviderUse, create bool) (*ledger.Ledger, error) {
		t.Helper()
		return ledger.OpenConfig(ctx, where, config.Default(), ledger.ConfigOptions{ProviderDB: pdb, Use: use, Store: store.Options{Create: create}})
	}
	send := func(t *testing.T, where, key string) {
		t.Helper()
		l, err := open(t, where, "", ledger.Dispatching, false)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if res, err := l.Call(ctx, "acme", key, "send_notification", notify); err != nil || res.Class != model.ClassDone {
			t.Fatalf("setup call: %+v %v", res, err)
		}
	}
	a := filepath.Join(t.TempDir(), "a.db")
	l, err := open(t, a, "", ledger.Dispatching, true) // ties and records a's file
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	b := filepath.Join(t.TempDir(), "b.db")
	testfiles.Copy(t, a, b)
	send(t, a, "ka")
	send(t, b, "kb")
	pair := filepath.Join(t.TempDir(), "pair.db")
	testfiles.Copy(t, a, pair)
	testfiles.Copy(t, ledger.ProviderPath(a), ledger.ProviderPath(pair))
	const other = "is not the one this ledger dispatched to sandbox through"

	for _, c := range []struct {
		name, where, key, pdb string
		use                   ledger.ProviderUse
		openErr               bool   // OpenConfig refuses (invalid)
		check                 string // what Check says: "found", or a part of its error
	}{
		{"lookups, A in its own file", a, "ka", "", ledger.LookupsOnly, false, "found"},
		{"lookups, B in its own file", b, "kb", "", ledger.LookupsOnly, false, "found"},
		{"lookups, A in B's file", a, "ka", ledger.ProviderPath(b), ledger.LookupsOnly, false, other},
		{"lookups, B in A's file", b, "kb", ledger.ProviderPath(a), ledger.LookupsOnly, false, other},
		{"lookups, a copy of A beside a copy of its file", pair, "ka", "", ledger.LookupsOnly, false, "found"},
		{"dispatching, A through B's file", a, "ka", ledger.ProviderPath(b), ledger.Dispatching, true, other},
		{"dispatching, B through A's file", b, "kb", ledger.ProviderPath(a), ledger.Dispatching, true, other},
		{"dispatching, a copy of A beside a copy of its file", pair, "ka", "", ledger.Dispatching, false, "found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := open(t, c.where, c.pdb, c.use, false)
			if c.openErr {
				if !ledger.IsInvalid(err) || !strings.Contains(err.Error(), c.check) {
					t.Fatalf("OpenConfig: %v; want invalid saying %q", err, c.check)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ev, err := l.Check(ctx, "acme", c.key)
			switch {
			case c.check == "found" && (err != nil || !ev.Found):
				t.Errorf("Check: %+v %v; want found", ev, err)
			case c.check != "found" && (err == nil || !strings.Contains(err.Error(), c.check)):
				t.Errorf("Check: %+v %v; want cannot tell saying %q", ev, err, c.check)
			}
		})
	}

	// A ledger that has sent nothing moves to the file it dispatches
	// through next, and trusts that one from then on.
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	if l, err = open(t, fresh, "", ledger.Dispatching, true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if l, err = open(t, fresh, ledger.ProviderPath(b), ledger.Dispatching, false); err != nil {
		t.Fatalf("a ledger that sent nothing, through another file: %v", err)
	}
	if res, err := l.Call(ctx, "acme", "kf", "send_notification", notify); err != nil || res.Class != model.ClassDone {
		t.Fatalf("call: %+v %v", res, err)
	}
	l.Close()
	if _, err := open(t, fresh, "", ledger.Dispatching, false); !ledger.IsInvalid(err) || !strings.Contains(err.Error(), other) {
		t.Errorf("after it sent through B's file, through its first file again: %v; want invalid saying %q", err, other)
	}
}
