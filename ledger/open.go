package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
	"github.com/retrysafe/retrysafe/store/postgres"
	"github.com/retrysafe/retrysafe/store/sqlite"
)

// OpenStore is the one place a ledger's location becomes a store: a
// postgres:// or postgresql:// URL is a PostgreSQL ledger (in the schema
// its search_path names first); anything else is a SQLite file. Open and
// OpenConfig open through it; a program that only reads the ledger, or
// manages its tokens, may use it alone.
func OpenStore(where string, o store.Options) (store.Ledger, error) {
	if postgres.IsURL(where) {
		return postgres.OpenLedger(where, o)
	}
	return sqlite.OpenLedger(where, o)
}

// ProviderPath is where the sandbox provider keeps its file for the ledger
// at where: beside a ledger file (NAME.provider.db), or — for a PostgreSQL
// ledger, which has no directory — SCHEMA.provider.db in the current
// directory (public's is retrysafe.provider.db).
func ProviderPath(where string) string {
	if postgres.IsURL(where) {
		schema := postgres.SchemaOf(where)
		if schema == "public" {
			schema = "retrysafe"
		}
		return schema + ".provider.db"
	}
	return strings.TrimSuffix(where, ".db") + ".provider.db"
}

// ProviderUse says what the opener of a ledger will do with its providers.
type ProviderUse int

const (
	// NoProviders: reads and decisions; no provider is built or asked, and
	// no provider file is opened.
	NoProviders ProviderUse = iota
	// LookupsOnly: providers are asked (a check, triage, the console's c)
	// but never sent anything, and a provider's store is never created to
	// be asked: a sandbox file that does not exist — or that never served
	// this ledger while the ledger has sent to the sandbox — answers every
	// lookup "cannot tell" (an empty one's "has nothing" would read as
	// evidence that nothing was sent). An HTTP provider that does not
	// answer cannot tell either.
	LookupsOnly
	// Dispatching: calls send. The sandbox file is created if need be —
	// unless the ledger already sent to a sandbox (a ledger moved without
	// its provider file, a wrong ProviderDB: refused) — and tied to this
	// ledger for the config's sandbox provider names (sandbox.Tie: a file
	// that never served it for a name is refused once the ledger has sent
	// to that name), and the ledger records the file's id (sandbox.FileID)
	// per name: once it has sent to a name, any other file is refused for
	// dispatch and cannot tell for lookups — a copy of the ledger keeps its
	// id, so only this record tells a copy's file from its own.
	Dispatching
	// Resending: a sweep, which sends again only what the ledger already
	// sent. On a ledger that has sent nothing to a sandbox no sandbox file
	// is opened — neither made nor tied: a tie would vouch for a file the
	// ledger's later calls may never use, and its "has nothing" would be
	// taken as evidence (the sandbox providers then cannot tell); otherwise
	// as Dispatching. HTTP providers are built as for Dispatching.
	Resending
)

// ConfigOptions configure OpenConfig.
type ConfigOptions struct {
	// ProviderDB is the sandbox providers' file; "" means ProviderPath.
	ProviderDB string
	// Use is what the opener does with the providers (NoProviders by
	// default: nothing is built).
	Use ProviderUse
	// Store are the store's options: Create, ReadOnly, Durability, ….
	Store store.Options
}

// OpenConfig opens the ledger at where (a SQLite path or a postgres:// URL)
// with the tools and providers of a config registry (config.Resolve,
// config.Default), as the command line, the console, the gateway and the
// lab do. The providers are built only for o.Use: a call of a local tool, a
// decision or a read needs none, and must not pay for them — nor fail on
// them. A sandbox file that another process is creating at the same moment
// is waited for within ctx (at most 10s): racing first calls on a new
// ledger all succeed.
//
// Every refusal to touch the sandbox file (it is missing beside a ledger
// with history, it never served this ledger, or it is not a sandbox
// provider's file at all: the ledger itself, another database) is a model.CodeInvalid
// error: a setup mistake that a retry will not fix.
func OpenConfig(ctx context.Context, where string, cfg *config.Config, o ConfigOptions) (*Ledger, error) {
	if cfg == nil {
		return nil, model.Errorf(model.CodeInvalid, "ledger.OpenConfig: no config (config.Default() is the built-in one)")
	}
	st, err := OpenStore(where, o.Store)
	if err != nil {
		return nil, err
	}
	l := &Ledger{st: st, where: where, readOnly: o.Store.ReadOnly}
	for _, p := range cfg.Providers {
		if p.Kind == config.KindSandbox {
			l.sandboxNames = append(l.sandboxNames, p.Name)
		}
	}
	providers := provider.Registry{}
	use, skipSandbox := o.Use, false
	if use == Resending {
		use = Dispatching
		sent, err := st.SentTo(ctx, l.sandboxNames...)
		if err != nil {
			st.Close()
			return nil, err
		}
		skipSandbox = !sent
	}
	if use != NoProviders {
		l.providerDB = o.ProviderDB
		if l.providerDB == "" {
			l.providerDB = ProviderPath(where)
		}
		for _, p := range cfg.Providers {
			built, err := l.buildProvider(ctx, p, use, skipSandbox)
			if err != nil {
				l.Close()
				return nil, err
			}
			providers[p.Name] = built
		}
	}
	l.svc = reconcile.New(st, cfg.Tools, providers)
	l.svc.AuthoritativeLookups = authoritativeLookups(cfg)
	l.svc.LookupRates = lookupRates(cfg)
	return l, nil
}

// authoritativeLookups names the providers whose config entry declares
// their lookup authoritative (authoritative_lookup = true): only their "has
// nothing" may lead to a bulk "mark not applied". Never assumed from the
// kind.
func authoritativeLookups(cfg *config.Config) map[string]bool {
	out := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.AuthoritativeLookup {
			out[p.Name] = true
		}
	}
	return out
}

// lookupRates are the lookups a second the providers' config entries
// allow ([providers.lookup] rate); triage and the console's triage keep
// them unless a command line's --rate overrides them.
func lookupRates(cfg *config.Config) map[string]float64 {
	out := map[string]float64{}
	for _, p := range cfg.Providers {
		if p.LookupRate > 0 {
			out[p.Name] = p.LookupRate
		}
	}
	return out
}

// sandboxOpenWait bounds how long opening the sandbox waits out another
// process that is creating it.
const sandboxOpenWait = 10 * time.Second

// openSandbox opens the sandbox provider's file, retrying while SQLite says
// another connection holds it (a brand-new file being set up by a
// concurrent first call reports "database is locked" without waiting).
func openSandbox(ctx context.Context, path string) (*sandbox.Sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, sandboxOpenWait)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		sb, err := sandbox.Open(path)
		if err == nil || !isBusy(err) {
			return sb, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// isBusy reports SQLite's "locked by another connection" by result code.
func isBusy(err error) bool {
	var se *msqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// buildProvider builds p for use; skipSandbox (Resending on a ledger that
// has sent nothing to a sandbox) builds a sandbox provider that opens no
// file and cannot tell.
func (l *Ledger) buildProvider(ctx context.Context, p config.Provider, use ProviderUse, skipSandbox bool) (provider.Provider, error) {
	switch p.Kind {
	case config.KindSandbox:
		if skipSandbox {
			return provider.Unreachable(p.Name, p.HonoursKeys, "no sandbox provider file was opened: the ledger has sent nothing to a sandbox, so a sweep has nothing to send again"), nil
		}
		if l.sb == nil {
			if _, err := os.Stat(l.providerDB); err != nil && use == LookupsOnly {
				// Opening would create an empty provider file, whose lookup
				// "holds no delivery" would read as evidence that nothing
				// was sent.
				return provider.Unreachable(p.Name, p.HonoursKeys, fmt.Sprintf(
					"the sandbox provider's file %s is not there (%v); pass --provider-db with the file the calls used (nothing was created: an empty one would prove nothing)", l.providerDB, unwrapPathErr(err))), nil
			}
			if use == Dispatching {
				if err := l.refuseNewSandboxWithHistory(ctx); err != nil {
					return nil, err
				}
			}
			sb, err := openSandbox(ctx, l.providerDB)
			if errors.Is(err, sandbox.ErrNotASandboxFile) {
				return nil, model.Wrap(model.CodeInvalid, err, "%v: pass --provider-db with the file the calls used", err)
			}
			if err != nil {
				return nil, model.Wrap(model.CodeUnavailable, err, "cannot open sandbox provider %s: %v", l.providerDB, err)
			}
			l.sb = sb
			if err := l.tieSandbox(ctx, use); err != nil {
				return nil, err
			}
		}
		if use == LookupsOnly {
			// A file that never served this ledger for this provider
			// (another ledger's, an empty one made elsewhere, one made for
			// another config's sandbox provider) holds none of its
			// deliveries through it: its "has nothing" would read as
			// evidence that nothing was sent.
			id, err := l.st.LedgerID(ctx)
			if err != nil {
				return nil, err
			}
			serves, err := l.sb.Serves(ctx, id, p.Name)
			if err != nil {
				return nil, err
			}
			sent := false
			if !serves {
				if sent, err = l.st.SentTo(ctx, p.Name); err != nil {
					return nil, err
				}
			}
			if sent {
				// A call that tied the file and sent since the first look
				// (every sender ties before it sends) makes it this
				// ledger's after all.
				if serves, err = l.sb.Serves(ctx, id, p.Name); err != nil {
					return nil, err
				}
			}
			if sent && !serves {
				return provider.Unreachable(p.Name, p.HonoursKeys, fmt.Sprintf(
					"the sandbox provider's file %s has never served this ledger (id %s), which has operations sent to %s: it is another ledger's file, a new one, or one made before ledgers had ids; pass --provider-db with the file the calls used", l.providerDB, id, p.Name)), nil
			}
			// A file other than the one this ledger recorded for this
			// provider (store.Tx.TieProviderFile) is not where its
			// deliveries are, whatever its ties say: a copy of the ledger
			// keeps its id, so a file that served a copy serves "it" too.
			recorded, err := l.st.ProviderFile(ctx, p.Name)
			if err != nil {
				return nil, err
			}
			if recorded != "" && recorded != l.sb.FileID() {
				return provider.Unreachable(p.Name, p.HonoursKeys, fmt.Sprintf(
					"the sandbox provider's file %s (file id %s) is not the one this ledger dispatched to %s through (file id %s): it is a copy's file, another ledger's, or a new one; pass --provider-db with the file the calls used", l.providerDB, l.sb.FileID(), p.Name, recorded)), nil
			}
		}
		return l.marked(l.sb.Provider(p.Name, p.HonoursKeys), p.Name, !l.readOnly), nil
	case config.KindHTTP:
		// Opens nothing: a connection is made per request, and a provider
		// that does not answer a lookup cannot tell.
		hp, err := httpapi.New(p.HTTP.Config)
		if err != nil {
			return nil, model.Errorf(model.CodeInvalid, "provider %s: %v", p.Name, err)
		}
		return hp, nil
	}
	return nil, model.Errorf(model.CodeInvalid, "provider %s: kind %q cannot be built", p.Name, p.Kind)
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tieSandbox ties the open sandbox file to this ledger before an opener
// that dispatches sends anything through it (sandbox.Tie: refused when the
// file never served this ledger for a provider the ledger has already
// sent to); one that only asks ties nothing (buildProvider asks the file
// whom it serves).
func (l *Ledger) tieSandbox(ctx context.Context, use ProviderUse) error {
	if use != Dispatching {
		return nil
	}
	err := l.sb.Tie(ctx, l.st, l.sandboxNames...)
	if errors.Is(err, sandbox.ErrNotThisLedgers) {
		return model.Errorf(model.CodeInvalid,
			"the sandbox provider's file %s: %v: pass --provider-db with the file the calls used (nothing was sent: its \"has nothing\" would prove nothing about them)", l.providerDB, err)
	}
	if err != nil {
		return model.Wrap(model.CodeUnavailable, err, "cannot tie sandbox provider %s to this ledger: %v", l.providerDB, err)
	}
	// The file serves this ledger (its ties), but a copy of the ledger
	// keeps the ledger's id, so a file that served a copy serves "it"
	// too: the ledger records which file it dispatches through, by the
	// file's own id. A ledger that has sent nothing to a name yet may
	// move to another file (one file serves several ledgers); one that
	// has sent is refused any file but the one recorded.
	fileID := l.sb.FileID()
	for _, name := range l.sandboxNames {
		recorded, err := l.st.ProviderFile(ctx, name)
		if err != nil {
			return err
		}
		if recorded == fileID {
			continue
		}
		if recorded != "" {
			sent, err := l.st.SentTo(ctx, name)
			if err != nil {
				return err
			}
			if sent {
				return l.refuseOtherFile(name, recorded, fileID)
			}
		}
		var now string
		if err := l.st.WithTx(ctx, func(tx store.Tx) (err error) {
			now, err = tx.TieProviderFile(name, fileID, recorded)
			return err
		}); err != nil {
			return err
		}
		if now != fileID {
			// Another opener recorded its file meanwhile.
			return l.refuseOtherFile(name, now, fileID)
		}
	}
	// The recorded file, but perhaps an older copy of it.
	return l.refuseWentBack(ctx)
}

// refuseOtherFile refuses to dispatch to provider name through the file
// whose id is fileID when the ledger recorded another one for it.
func (l *Ledger) refuseOtherFile(name, recorded, fileID string) error {
	if recorded == fileID {
		return nil
	}
	return model.Errorf(model.CodeInvalid,
		"the sandbox provider's file %s (file id %s) is not the one this ledger dispatched to %s through (file id %s): it is a copy's file, another ledger's, or a new one; pass --provider-db with the file the calls used (nothing was sent: its \"has nothing\" would prove nothing about them)",
		l.providerDB, fileID, name, recorded)
}

// refuseNewSandboxWithHistory refuses to create a sandbox provider's file
// beside a ledger that already sent operations to a sandbox (a ledger moved
// or restored without its provider file, or a wrong --provider-db): the
// new, empty file would answer every later lookup of those operations
// "has nothing" — an authoritative "not applied" for effects that may well
// have happened. A file that is there settles it without a query (every
// call of an external tool comes here, and the query costs a connection of
// its own). A missing one is looked for again after the ledger is asked: a
// concurrent first call creates the file before it claims anything, so a
// claim seen here means the file is there by now.
func (l *Ledger) refuseNewSandboxWithHistory(ctx context.Context) error {
	missing := func() bool {
		_, err := os.Stat(l.providerDB)
		return errors.Is(err, fs.ErrNotExist)
	}
	if !missing() {
		return nil
	}
	sent, err := l.st.SentTo(ctx, l.sandboxNames...)
	if err != nil || !sent || !missing() {
		return err
	}
	return model.Errorf(model.CodeInvalid,
		"the sandbox provider's file %s is not there, but this ledger has operations sent to the sandbox: pass --provider-db with the file the calls used (nothing was created: a new, empty one would answer their lookups \"has nothing\")",
		l.providerDB)
}
