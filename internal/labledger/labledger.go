// Package labledger is the lab's opener (lab.OpenFunc) over the public
// ledger API, the one the command line hands the lab and the demo builder
// — and the console's tests hand theirs, so they open what the product
// opens. (The lab's own tests cannot import it: it imports the lab.)
package labledger

import (
	"context"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/ledger"
)

// Open opens the ledger at where through ledger.OpenConfig: with
// o.Config's providers ready to dispatch (the sandbox file tied to the
// ledger and recorded as its provider file), or — without a config — the
// built-in tools and no provider.
func Open(ctx context.Context, where string, o lab.OpenOptions) (lab.Ledger, error) {
	cfg, use := o.Config, ledger.Dispatching
	if cfg == nil {
		cfg, use = config.Default(), ledger.NoProviders
	}
	l, err := ledger.OpenConfig(ctx, where, cfg, ledger.ConfigOptions{ProviderDB: o.ProviderDB, Use: use, Store: o.Store})
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return l, nil
}
