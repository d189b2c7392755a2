package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/sandbox"
	"github.com/retrysafe/retrysafe/store"
)

// markedSandbox is a sandbox provider as a ledger uses it. Before it sends
// or answers, it checks that the file is still the one the ledger
// recorded for the provider and still holds the newest delivery the
// ledger saw it hold (store.FileMark); after, it records how far the file
// has gone. A file restored from an older backup keeps its file id, so
// only the mark tells it from the file the ledger sent through: its "has
// nothing" for a delivery the backup predates would be a wrong "not
// applied" — a second e-mail, a second payment.
type markedSandbox struct {
	provider.Provider
	l    *Ledger
	name string
	// write: the ledger may be written (not opened read-only), so what a
	// dispatch or a lookup saw of the file is recorded.
	write bool
}

// Identity is the sandbox provider's own (provider.Identifier): a claim
// records it, and it must read the same whether the sandbox was opened
// through a ledger or not.
func (m *markedSandbox) Identity() provider.Identity {
	if id, ok := m.Provider.(provider.Identifier); ok {
		return id.Identity()
	}
	return provider.Identity{}
}

// KeepsKeys is the sandbox provider's own (provider.KeyKeeper): it never
// expires a key.
func (m *markedSandbox) KeepsKeys() bool { return provider.KeepsKeys(m.Provider) }

func (l *Ledger) marked(p provider.Provider, name string, write bool) provider.Provider {
	return &markedSandbox{Provider: p, l: l, name: name, write: write}
}

// fileProblem says why the open sandbox file is not where the ledger's
// deliveries through provider name are ("" when it is): another file is
// recorded, or the file no longer holds the newest delivery the ledger saw
// it hold. It reads the ledger's record and one delivery of the file.
func (l *Ledger) fileProblem(ctx context.Context, name string) (store.FileMark, string, error) {
	fileID := l.sb.FileID()
	recorded, seen, err := l.st.ProviderFileMark(ctx, name)
	if err != nil {
		return store.FileMark{}, "", err
	}
	if recorded != "" && recorded != fileID {
		return store.FileMark{}, fmt.Sprintf("the sandbox provider's file %s (file id %s) is not the one this ledger dispatched to %s through (file id %s): it is a copy's file, another ledger's, or a new one",
			l.providerDB, fileID, name, recorded), nil
	}
	ok, err := l.sb.Holds(ctx, sandbox.Mark{Seq: seen.Seq, Check: seen.Check})
	if err != nil {
		return store.FileMark{}, "", err
	}
	if !ok {
		return seen, fmt.Sprintf("the sandbox provider's file %s (file id %s) no longer holds delivery sbx_%d, the newest this ledger saw it hold for %s: it went back in time — restored from an older backup, or replaced by a copy of it that went another way — so what it holds is not all this ledger sent",
			l.providerDB, fileID, seen.Seq, name), nil
	}
	return seen, "", nil
}

// checkWait bounds the reads that check the file before a dispatch or a
// lookup. They are the ledger's and the local file's, not the provider's
// answer: they do not spend the dispatch's deadline (a short one would
// turn a busy ledger into "not sent").
const checkWait = 10 * time.Second

// see records how far the file has gone (its newest delivery), when it
// went past seen. Best effort: a mark not recorded only leaves the ledger
// knowing less, and the answer it follows stands either way. Concurrent
// dispatches of one opener take turns, and one whose delivery a turn
// before it already recorded writes nothing: under load many deliveries
// share one write.
func (m *markedSandbox) see(ctx context.Context, seen store.FileMark) {
	if !m.write {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkWait)
	defer cancel()
	m.l.markMu.Lock()
	defer m.l.markMu.Unlock()
	now, err := m.l.sb.Mark(ctx)
	if err != nil || now.Seq <= seen.Seq || now.Seq <= m.l.notedSeq[m.name] {
		return
	}
	fileID := m.l.sb.FileID()
	var got store.FileMark
	if m.l.st.WithTx(ctx, func(tx store.Tx) (err error) {
		got, err = tx.MarkProviderFile(m.name, fileID, store.FileMark{Seq: now.Seq, Check: now.Check})
		return err
	}) != nil {
		return
	}
	// What the ledger holds now for this file (zero when it records
	// another: nothing is skipped then).
	if m.l.notedSeq == nil {
		m.l.notedSeq = map[string]int64{}
	}
	m.l.notedSeq[m.name] = got.Seq
}

// Dispatch sends nothing through a file that is not (or no longer) where
// the ledger's deliveries are: a definite not-applied that says why.
func (m *markedSandbox) Dispatch(ctx context.Context, req provider.Request) (provider.Response, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkWait)
	seen, why, err := m.l.fileProblem(cctx, m.name)
	cancel()
	if err != nil {
		return provider.Response{Status: provider.NotApplied, Detail: "not sent: cannot read the provider file's record: " + err.Error()}, nil
	}
	if why != "" {
		return provider.Response{Status: provider.NotApplied, Detail: "not sent: " + why + "; pass --provider-db with the file the calls used"}, nil
	}
	resp, derr := m.Provider.Dispatch(ctx, req)
	// Whatever the answer (a lost reply too), the file now holds what it
	// holds: recorded, so a later restore of an older copy is told apart.
	m.see(ctx, seen)
	return resp, derr
}

// Lookup cannot tell through a file that is not (or no longer) where the
// ledger's deliveries are, never "has nothing".
func (m *markedSandbox) Lookup(ctx context.Context, downstreamKey string) (provider.Evidence, error) {
	return m.LookupQuery(ctx, provider.Query{DownstreamKey: downstreamKey})
}

// LookupQuery is provider.QueryLooker: Lookup, asked about the request
// the query names (the sandbox compares it with what it delivered under
// the key: provider.Evidence.Other), by key alone when it names none.
func (m *markedSandbox) LookupQuery(ctx context.Context, q provider.Query) (provider.Evidence, error) {
	downstreamKey := q.DownstreamKey
	ev := provider.Evidence{Provider: m.name, DownstreamKey: downstreamKey}
	seen, why, err := m.l.fileProblem(ctx, m.name)
	if err != nil {
		return ev, fmt.Errorf("cannot tell: cannot read the provider file's record: %w", err)
	}
	if why != "" {
		return ev, fmt.Errorf("cannot tell: %s; pass --provider-db with the file the calls used", why)
	}
	ev, err = provider.LookupFor(ctx, m.Provider, q)
	var other *provider.OtherRequest
	if err == nil || errors.As(err, &other) {
		// An answer (about another request too): the file holds what it
		// holds.
		m.see(ctx, seen)
	}
	if other != nil {
		// Passed on as the answer it is: LookupFor of the caller reads it
		// again from Evidence.Other.
		ev.Ref, ev.Other, err = other.Ref, other.What, nil
	}
	return ev, err
}

// refuseWentBack refuses to open for dispatch a file that no longer holds
// the newest delivery the ledger saw it hold (model.CodeInvalid: nothing
// is sent; a retry will not fix it).
func (l *Ledger) refuseWentBack(ctx context.Context) error {
	for _, name := range l.sandboxNames {
		_, why, err := l.fileProblem(ctx, name)
		if err != nil {
			return err
		}
		if why != "" {
			return model.Errorf(model.CodeInvalid, "%s; pass --provider-db with the file the calls used (nothing was sent: its \"has nothing\" would prove nothing about them)", why)
		}
	}
	return nil
}
