// Package ledger is retrysafe for a Go program: open a ledger, register
// write tools, and make their calls safe to repeat. A call is keyed by
// (tenant, key) chosen by the caller; the same key replays the stored
// receipt, changed arguments conflict, and an outcome nobody knows is
// recorded as unknown for a person to settle.
//
// A tool's effect is either local — a Go function that runs inside the
// ledger's own database transaction, so the effect and its record commit
// together or not at all — or external, sent to a provider (an HTTP API
// through provider/httpapi, or any provider.Provider) in two phases under
// a downstream idempotency key.
//
// A ledger is a SQLite file or a PostgreSQL schema (a postgres:// URL).
// Open takes the tools as Go values; OpenConfig takes them, with their
// providers, from a config file's registry (package config) — the way the
// command line, the console, the gateway and the lab open every ledger. So
// `retrysafe --db FILE` shows what this package wrote, and a Go program can
// open what the command line made.
package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Tool is one write tool.
type Tool struct {
	Name        string
	Description string
	// PayloadVersion is part of the fingerprint; 0 means 1.
	PayloadVersion int
	// Schema is the JSON Schema of the arguments (an object schema).
	Schema string
	// Summary names the argument shown on one line in the console.
	Summary string

	// Exactly one of Local and Provider.

	// Local is the effect, run inside the ledger's transaction: write your
	// own tables with tx.Exec and return what the receipt should carry. An
	// error rolls the call back (nothing is recorded). It may run more
	// than once if the database is busy, so it must do nothing outside tx.
	Local func(tx Tx, call LocalCall) (json.RawMessage, error)
	// Provider names the provider (one of Options.Providers) that performs
	// the effect.
	Provider string
}

// Tx is the ledger's transaction as a local effect sees it.
type Tx interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// LocalCall is what a local effect is told about its call.
type LocalCall = reconcile.LocalCall

// Options configure Open.
type Options struct {
	Tools     []Tool
	Providers []provider.Provider
	// Schema holds statements for the program's own tables, run once at
	// Open in one transaction (write them to be repeatable: CREATE TABLE IF
	// NOT EXISTS …).
	Schema []string
	// Store are the store's options (Durability, BusyTimeout, …). Open
	// creates a missing ledger whatever Store.Create says, unless
	// Store.ReadOnly.
	Store store.Options
}

// Ledger is an open ledger with its tools and providers.
type Ledger struct {
	st  store.Ledger
	svc *reconcile.Service
	// where is the location it was opened at, password and all (st.Path
	// is for people and has none).
	where string
	// sb is the sandbox providers' file when OpenConfig opened one;
	// providerDB is that file, open or not (a missing one is never created
	// to be asked).
	sb         *sandbox.Sandbox
	providerDB string
	// sandboxNames are the config's sandbox providers (they share one file).
	sandboxNames []string
	// readOnly: opened read-only (what a lookup sees is not recorded).
	readOnly bool
	// markMu takes the sandbox providers' notes of how far the file went
	// in turn; notedSeq is the newest delivery noted per provider name.
	markMu   sync.Mutex
	notedSeq map[string]int64
}

// Result is a call's classified outcome: Class says what the caller should
// do (model.ClassDone: use Receipt; model.ClassUnknown: stop, a person
// settles it; model.ClassInProgress: retry the same key later; …).
type Result = reconcile.Result

// Decision is an operator's settlement of an unknown outcome.
type Decision = reconcile.Decision

// Open opens (creating if need be) the ledger at where — a SQLite file, or
// a postgres:// URL — with the given tools and providers. A tool or schema
// that is wrong is an error and nothing is created.
func Open(ctx context.Context, where string, o Options) (*Ledger, error) {
	providers := provider.Registry{}
	for _, p := range o.Providers {
		if _, dup := providers[p.Name()]; dup {
			return nil, model.Errorf(model.CodeInvalid, "provider %q is given twice", p.Name())
		}
		providers[p.Name()] = p
	}
	tools := make([]model.Tool, 0, len(o.Tools))
	funcs := map[string]reconcile.LocalFunc{}
	for _, t := range o.Tools {
		var schema jsonschema.Schema
		if err := json.Unmarshal([]byte(t.Schema), &schema); err != nil {
			return nil, model.Errorf(model.CodeInvalid, "tool %s: Schema is not a JSON Schema: %v", t.Name, err)
		}
		mt := model.Tool{Name: t.Name, Description: t.Description, PayloadVersion: t.PayloadVersion,
			Schema: &schema, SummaryArg: t.Summary}
		switch {
		case t.Local != nil && t.Provider != "":
			return nil, model.Errorf(model.CodeInvalid, "tool %s: give Local or Provider, not both", t.Name)
		case t.Local != nil:
			mt.Effect = model.Effect{Kind: model.EffectLocal, Table: model.TableCustom}
			local := t.Local
			funcs[t.Name] = func(tx store.Tx, c reconcile.LocalCall) (json.RawMessage, error) { return local(tx, c) }
		case t.Provider != "":
			if _, ok := providers[t.Provider]; !ok {
				return nil, model.Errorf(model.CodeInvalid, "tool %s: no provider %q in Options.Providers", t.Name, t.Provider)
			}
			mt.Effect = model.Effect{Kind: model.EffectExternal, Provider: t.Provider}
		default:
			return nil, model.Errorf(model.CodeInvalid, "tool %s: give Local (an effect in the ledger's transaction) or Provider", t.Name)
		}
		tools = append(tools, mt)
	}
	reg, err := model.NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	so := o.Store
	so.Create = !so.ReadOnly
	st, err := OpenStore(where, so)
	if err != nil {
		return nil, err
	}
	if len(o.Schema) > 0 {
		err := st.WithTx(ctx, func(tx store.Tx) error {
			for _, q := range o.Schema {
				if _, err := tx.Exec(q); err != nil {
					return fmt.Errorf("schema statement %q: %w", q, err)
				}
			}
			return nil
		})
		if err != nil {
			st.Close()
			return nil, err
		}
	}
	svc := reconcile.New(st, reg, providers)
	svc.LocalFuncs = funcs
	return &Ledger{st: st, svc: svc, where: where}, nil
}

// Close closes the ledger (and the sandbox providers' file OpenConfig
// opened).
func (l *Ledger) Close() error {
	if l.sb != nil {
		l.sb.Close()
	}
	return l.st.Close()
}

// Store is the ledger's store: its read side (lists, counts, the audit
// log, the change watcher) for the console, ops list, triage and sweeps,
// and its write transactions. Prefer the Ledger's own methods for calls
// and decisions: they keep the rules.
func (l *Ledger) Store() store.Ledger { return l.st }

// Service is the rules over the store and the providers (reconcile): what
// a command needs beyond the methods here — a sweep, triage, bulk
// decisions, a gateway, or a lease and a timeout of its own (set them
// before the first call).
func (l *Ledger) Service() *reconcile.Service { return l.svc }

// Where is the location the ledger was opened at, as given (a URL with
// its password: Store().Path() is the one to show people).
func (l *Ledger) Where() string { return l.where }

// ProviderDB is the sandbox providers' file when OpenConfig built
// providers ("" otherwise), whether it is open or not: a missing one is
// never created to be asked.
func (l *Ledger) ProviderDB() string { return l.providerDB }

// Sandbox is the sandbox providers' file when OpenConfig opened one (nil
// otherwise): the lab counts its deliveries and sets its clock.
func (l *Ledger) Sandbox() *sandbox.Sandbox { return l.sb }

// Call makes one attempt of a tool call under (tenant, key). The error is
// non-nil only for invalid input (nothing written; Result.Class is
// model.ClassInvalid) or a failure of the machine; every other outcome —
// replayed, conflict, unknown, … — is a Result.
func (l *Ledger) Call(ctx context.Context, tenant, key, tool string, args json.RawMessage) (Result, error) {
	return l.svc.Call(ctx, model.Request{Tenant: tenant, Key: key, Tool: tool, Args: args}, reconcile.CallOptions{})
}

// CallTraced is Call with the caller's trace id (e.g. the model's
// tool-call id): recorded and searchable, never identity.
func (l *Ledger) CallTraced(ctx context.Context, tenant, key, tool string, args json.RawMessage, traceID string) (Result, error) {
	return l.svc.Call(ctx, model.Request{Tenant: tenant, Key: key, Tool: tool, Args: args, TraceID: traceID}, reconcile.CallOptions{})
}

// Get returns the operation recorded under (tenant, key).
func (l *Ledger) Get(ctx context.Context, tenant, key string) (*model.Operation, error) {
	return l.st.Get(ctx, tenant, key)
}

// Check asks an external operation's provider what it holds under the
// downstream key. It changes nothing. An error means "cannot tell", which
// is never evidence — and so is "nothing" while a claim of the operation
// is live (its request may still be on its way). A new key not yet used
// was never sent: the provider is asked about the key it replaced, as
// `ops check` does.
func (l *Ledger) Check(ctx context.Context, tenant, key string) (provider.Evidence, error) {
	_, ev, err := l.svc.Check(ctx, tenant, key)
	return ev, err
}

// MarkApplied settles an unknown outcome as applied (Evidence: e.g. the
// provider's reference).
func (l *Ledger) MarkApplied(ctx context.Context, d Decision) error {
	_, err := l.svc.MarkApplied(ctx, d)
	return err
}

// MarkNotApplied settles an unknown outcome as never applied; the next call
// of the key sends it again.
func (l *Ledger) MarkNotApplied(ctx context.Context, d Decision) error {
	_, err := l.svc.MarkNotApplied(ctx, d)
	return err
}

// AuthorizeNewKey supersedes the operation with a deliberate new key (d.NewKey,
// or one picked) and returns it; a call of the old key is told the new one.
func (l *Ledger) AuthorizeNewKey(ctx context.Context, d Decision) (string, error) {
	_, n, err := l.svc.AuthorizeNewKey(ctx, d)
	if err != nil {
		return "", err
	}
	return n.Key, nil
}

// SweepReport says what a sweep did.
type SweepReport = reconcile.SweepReport

// Sweep is the periodic pass a program that makes calls runs (a ticker;
// `retrysafe sweep` on the same ledger does the same): an operation whose
// caller died holding its claim — the lease ended with no result — becomes
// unknown, or is sent again under the same downstream key where the
// provider honours it; receipts past the replay window become tombstones.
// Nothing ever leaves unknown here: a person does (MarkApplied, …).
func (l *Ledger) Sweep(ctx context.Context) (SweepReport, error) { return l.svc.Sweep(ctx) }

// IsInvalid reports whether err is bad input (nothing was written).
func IsInvalid(err error) bool {
	var e *model.Error
	return errors.As(err, &e) && e.Code == model.CodeInvalid
}
