package reconcile

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// Whether a provider honours downstream keys is a line of each process's
// config, and processes differ (a worker, a sweep from cron with an older
// file, an operator's copy). A claim therefore records the word of the
// config that made it (model.Operation.ClaimHonoursKeys), and is sent
// again under the same downstream key only when that record and the
// config of the process about to send it both say the provider honours
// keys: a provider the claim's config said ignores them may hold a
// delivery it will not match to the key, so a second send could be a
// second effect, whatever this config says.

// stampClaim records on op, before its claim is written (its lease end
// set), what this process's config says of the request the claim sends:
// whether prov honours downstream keys, where its requests and its
// lookups go (provider.IdentityOf), and until when the provider may still
// apply the request — the lease end plus this config's grace for prov
// (DispatchGrace: its request timeout, or longer), or the time an earlier
// claim recorded when that is later (its request may still be applied
// too).
func (s *Service) stampClaim(op *model.Operation, prov provider.Provider) {
	h := prov.HonoursKeys()
	op.ClaimHonoursKeys = &h
	op.ClaimDispatchID, op.ClaimLookupID = provider.IdentityOf(prov)
	if by := op.LeaseUntil.Add(s.DispatchGrace(op.Provider)); by.After(op.ClaimApplyBy) {
		op.ClaimApplyBy = by.UTC().Truncate(time.Millisecond)
	}
}

// notResendable says why this process may not send op's claim again under
// its downstream key, "" if it may. disagrees: this config alone would have
// sent it — the claim's record is what holds it back.
func (s *Service) notResendable(op *model.Operation) (why string, disagrees bool) {
	prov, err := s.Providers.Get(op.Provider)
	switch {
	case err != nil:
		return fmt.Sprintf("provider %s is not configured here", op.Provider), false
	case !prov.HonoursKeys():
		return fmt.Sprintf("provider %s does not honour downstream keys", op.Provider), false
	case op.ClaimHonoursKeys == nil:
		return fmt.Sprintf("the claim was recorded before the ledger kept whether provider %s honoured downstream keys for it (a ledger older than schema 12), so this config's word alone does not make sending it again safe", op.Provider), true
	case !*op.ClaimHonoursKeys:
		return fmt.Sprintf("the claim was made by a config where provider %s does not honour downstream keys (this one says it does): the provider may hold a delivery it would not match to the key, so sending it again could make the effect twice", op.Provider), true
	case op.ClaimDispatchID == "":
		return fmt.Sprintf("the claim was recorded before the ledger kept where provider %s sent it (a ledger older than schema 13), so this config cannot tell that sending it again goes where the first request went", op.Provider), true
	}
	cur, _ := provider.IdentityOf(prov)
	if changed := provider.IdentityChanges(op.ClaimDispatchID, cur); changed != nil {
		return fmt.Sprintf("provider %s sends elsewhere in this config than where the claim was sent (its %s changed since): the first request may be there, and where this config sends it the key means nothing, so sending it again could make the effect twice", op.Provider, strings.Join(changed, ", ")), true
	}
	return "", false
}

// Resendable reports whether this process sends op's claim again under
// its downstream key (a retry of the key, a sweep) — the claim's record
// and this config both say the provider honours keys, and this config
// sends where the claim's request went — so that a person can be offered
// the retry: it gets the provider's first answer, never a second effect.
// An operation whose latest lookup (op.Finding, as the screen or detail
// read it) found another request under its key is not (otherRequestWhy).
func (s *Service) Resendable(op model.Operation) bool {
	why, _ := s.notResendable(&op)
	return why == "" && otherRequestWhy(op.Finding) == ""
}

// otherRequestWhy says why a claim is not sent again under its downstream
// key when f, the latest lookup of that key, found a different request
// there (model.FindingHasOther), "" otherwise: a provider that honours
// keys answers a repeated key with its first result — the other
// request's — and the operation would be recorded applied on an effect it
// never asked for; one that does not would send it under a key that
// already names another delivery. A new key is the way to send it.
func otherRequestWhy(f *model.Finding) string {
	if f == nil || f.Kind != model.FindingHasOther {
		return ""
	}
	ref := "another request"
	if f.Ref != "" {
		ref = textsafe.Visible(clipEvidence(f.Ref)) + ", another request's delivery"
	}
	return fmt.Sprintf("the latest lookup of its downstream key (recorded %s by %s) found a different request there (%s), so it is not sent again under that key — the provider would answer with that request's result; check it at the provider, and authorize a new key to send this one (ops supersede, or the console's s)",
		f.At.UTC().Format(time.RFC3339), textsafe.Visible(f.By), ref)
}

// otherRequestHeld is otherRequestWhy of op's latest lookup as the ledger
// holds it in tx.
func otherRequestHeld(tx store.Tx, op *model.Operation) (string, error) {
	if op.ID == 0 {
		return "", nil
	}
	f, err := tx.LatestFinding(op.ID)
	if err != nil {
		return "", err
	}
	return otherRequestWhy(f), nil
}

// lookupMoved says why prov's "has nothing" about op says nothing about
// where op's request went, "" when it may: its lookup asks elsewhere than
// the one recorded with op's claim (another host, another URL). A claim
// that recorded no lookup (made before schema 13, or through a config
// without one) is asked as before.
func lookupMoved(op *model.Operation, prov provider.Provider) string {
	if op.ClaimLookupID == "" {
		return ""
	}
	_, cur := provider.IdentityOf(prov)
	changed := provider.IdentityChanges(op.ClaimLookupID, cur)
	if changed == nil {
		return ""
	}
	return fmt.Sprintf("provider %s's lookup in this config is not the one recorded with the claim (its %s changed since the request was sent), so its \"has nothing\" says nothing about where the request went: ask with the config the claim was made with, or decide on evidence of your own", op.Provider, strings.Join(changed, ", "))
}

// ErrAskedElsewhere is what a lookup's "cannot tell" is (errors.Is) when
// this config's lookup asks elsewhere than the one recorded with the
// claim (lookupMoved): the provider as configured then, or a person's own
// evidence, settles it — not asking again here.
var ErrAskedElsewhere = errors.New("asked elsewhere than the claim's request went")

// askedElsewhere is the "cannot tell" of lookupMoved's why.
type askedElsewhere struct{ why string }

func (e *askedElsewhere) Error() string        { return "cannot tell: " + e.why }
func (e *askedElsewhere) Is(target error) bool { return target == ErrAskedElsewhere }

// addNotResent adds the held claims of one batch, by reason, to rep: the
// count, and each reason once, in order, joined by "; ".
func addNotResent(rep *SweepReport, by map[string]int) {
	if len(by) == 0 {
		return
	}
	reasons := map[string]bool{}
	if rep.NotResentWhy != "" {
		for _, r := range strings.Split(rep.NotResentWhy, "; ") {
			reasons[r] = true
		}
	}
	for r, n := range by {
		rep.NotResent += n
		reasons[r] = true
	}
	all := make([]string, 0, len(reasons))
	for r := range reasons {
		all = append(all, r)
	}
	sort.Strings(all)
	rep.NotResentWhy = strings.Join(all, "; ")
}
