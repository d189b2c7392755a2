package cli

import (
	"testing"

	"github.com/retrysafe/retrysafe/ledger"
	"github.com/retrysafe/retrysafe/store"
)

// One opener for every command: what each of the seven it replaced did
// with the providers, read-only or not, is what openLedger's opening
// gives (the commands' own tests pin their exit codes and messages).
func TestOpeningGivesWhatEachOldOpenerDid(t *testing.T) {
	for _, ro := range []bool{false, true} {
		o := store.Options{ReadOnly: ro}
		// The old openers' rules, as they were.
		oldOpenLedger := ledger.Dispatching // openLedger: dispatching unless read-only
		oldForLookups := ledger.LookupsOnly // openForLookups: asking unless read-only
		if ro {
			oldOpenLedger, oldForLookups = ledger.NoProviders, ledger.NoProviders
		}
		for _, c := range []struct {
			name string
			old  ledger.ProviderUse
			new  opening
		}{
			{"openLedger", oldOpenLedger, opening{store: o, use: ledger.Dispatching}},
			{"openForLookups", oldForLookups, opening{store: o, use: ledger.LookupsOnly}},
			{"openAsking", ledger.LookupsOnly, opening{store: o, use: ledger.LookupsOnly, askReadOnly: true}},
			{"opsOpen", ledger.NoProviders, opening{store: o}},
			{"openWith(NoProviders)", ledger.NoProviders, opening{store: o, use: ledger.NoProviders}},
		} {
			if got := c.new.providers(); got != c.old {
				t.Errorf("%s, read-only %v: opens providers as %v, was %v", c.name, ro, got, c.old)
			}
		}
	}
	// openLedgerCtx and openWith(Resending) were only called writable.
	for sends, want := range map[bool]ledger.ProviderUse{true: ledger.Dispatching, false: ledger.NoProviders} {
		if got := (opening{use: dispatchingIf(sends)}).providers(); got != want {
			t.Errorf("openLedgerCtx(withProvider %v): %v, was %v", sends, got, want)
		}
	}
	if got := (opening{use: ledger.Resending}).providers(); got != ledger.Resending {
		t.Errorf("openWith(Resending): %v", got)
	}
}
