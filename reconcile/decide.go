package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// Limits on what an operator types into a decision, in bytes.
const (
	MaxOperatorLen = 128
	MaxReasonLen   = 2000 // reason and evidence each
)

// Decision is what an operator asks for. ExpectState and ExpectVersion are
// what the operator's screen showed: if the operation moved since, the
// decision fails and says what changed. ExpectVersion 0 means "whatever it is
// now" (scripts that just read it); ExpectState "" means unknown.
type Decision struct {
	Tenant        string
	Key           string
	Operator      string
	Reason        string
	Evidence      string // a provider reference, a ticket, a log line
	ExpectState   model.State
	ExpectVersion int64
	NewKey        string // AuthorizeNewKey only; "" picks one
	// Finding is the last provider check the operator saw for this
	// operation, if one could be made (a check that could not tell is no
	// finding). A lookup that found nothing is evidence for "not applied";
	// deciding against a finding needs Override.
	Finding *provider.Evidence
	// Override is the explicit second confirmation of a decision against
	// Finding.
	Override bool
	// SeenLookup, when set with Override, is the number of the latest
	// lookup the operator saw (0: none; Target.Seen for one key): the
	// decision is refused as stale if another lookup was recorded since —
	// the confirmation was of the findings on screen, not of a "has it"
	// another operator's check recorded in between.
	SeenLookup *int
	// WithinGrace is the explicit override of the grace after the
	// operation's latest request: "not applied", or a new key where the
	// provider is asked first, is refused while the provider may still
	// apply that request (GraceRefusal) — the next call would send it a
	// second time — unless it is set, by a person who knows the provider
	// dropped it (ops resolve/supersede --within-grace, the console's
	// typed override).
	WithinGrace bool
}

// Legal says which decisions an operation in state st allows; the console
// offers only these and the store path refuses the rest.
func Legal(st model.State) []model.Action {
	switch st {
	case model.StateUnknown:
		return []model.Action{model.ActionMarkApplied, model.ActionMarkNotApplied, model.ActionAuthorizeKey}
	case model.StateNotApplied, model.StateFailed:
		return []model.Action{model.ActionAuthorizeKey}
	}
	return nil
}

// LeaseReleased is the lease owner of a claim released to be sent again
// (model.LeaseReleased): in_progress, and nobody holds it.
const LeaseReleased = model.LeaseReleased

// Unheld reports whether op is in_progress with no claim held on it at
// now: its claim was released (LeaseReleased), or its lease has ended
// (its worker is gone, or gave up waiting). Such an operation stays
// in_progress by design — a re-send answered "busy", "not sent" or
// "nothing applied" speaks of the re-send only — and only a sweep, the
// next call of its key or a person moves it. A zero now (no clock) is
// never unheld: whether a lease is live cannot be told without one.
func Unheld(op model.Operation, now time.Time) bool {
	if op.State != model.StateInProgress || now.IsZero() {
		return false
	}
	return op.LeaseOwner == LeaseReleased || !now.Before(op.LeaseUntil)
}

// LegalAt is LegalFor at now: an in_progress operation nobody holds
// (Unheld) allows what an unknown one does — mark applied, mark not
// applied, authorize a new key — under the same rules (the grace, the
// look first, the finding that binds). One whose lease is live allows
// nothing: a worker may be sending it right now.
func LegalAt(op model.Operation, now time.Time) []model.Action {
	if Unheld(op, now) {
		return Legal(model.StateUnknown)
	}
	return LegalFor(op)
}

// AllowedAt reports whether action is legal for op at now (LegalAt).
func AllowedAt(op model.Operation, action model.Action, now time.Time) bool {
	for _, a := range LegalAt(op, now) {
		if a == action {
			return true
		}
	}
	return false
}

// Allowed reports whether action is legal from st.
func Allowed(st model.State, action model.Action) bool {
	for _, a := range Legal(st) {
		if a == action {
			return true
		}
	}
	return false
}

// LegalFor is Legal for one operation, at no particular time: an
// in_progress one allows nothing here, since whether its lease is live
// needs a clock — LegalAt says what one nobody holds allows. A not_applied or failed operation
// that a late provider answer contradicted ("applied") may also be marked
// applied: the person who said "not applied" was wrong (or the rejection
// was of a later attempt), a failed one's replays tell every caller it
// was rejected for good, and a new key would send the effect a second
// time.
func LegalFor(op model.Operation) []model.Action {
	l := Legal(op.State)
	if (op.State == model.StateNotApplied || op.State == model.StateFailed) && op.Contradicted {
		l = append([]model.Action{model.ActionMarkApplied}, l...)
	}
	if op.State == model.StateApplied && op.Contradicted {
		// A late provider answer says it was rejected, or never applied:
		// the receipt may report done an effect that never happened. A
		// deliberate new key is the way to send it — against the receipt
		// (AppliedEvidence), so only with the second confirmation.
		l = []model.Action{model.ActionAuthorizeKey}
	}
	if op.State == model.StateAuthorized && op.Contradicted {
		// The key it replaced was applied after all (a late "applied"
		// after the new key was authorized): its first call is refused,
		// and marking it applied — with the old key's reference — gives
		// its callers the receipt instead of a second effect.
		l = []model.Action{model.ActionMarkApplied}
	}
	return l
}

// AppliedEvidence is what an applied operation's own record says — its
// receipt names the effect (the provider's answer, or the evidence a
// person marked it applied on) — as a finding that found it: a new key
// for it (legal only when a late answer contradicts it) goes against it.
// nil for any other state.
func AppliedEvidence(op model.Operation) *provider.Evidence {
	if op.State != model.StateApplied {
		return nil
	}
	return &provider.Evidence{Provider: op.Provider, DownstreamKey: op.DownstreamKey, Found: true, Ref: op.ProviderRef,
		Status: StatusReceipt, Detail: "its receipt says applied: " + or(op.ProviderRef, "no reference")}
}

// StatusReceipt marks the Evidence AppliedEvidence makes: not a provider
// check, the operation's own receipt (FindingText says so).
const StatusReceipt = "receipt"

// AllowedFor reports whether action is legal for op.
func AllowedFor(op model.Operation, action model.Action) bool {
	for _, a := range LegalFor(op) {
		if a == action {
			return true
		}
	}
	return false
}

// Validate checks a decision's fields before anything is read or written:
// the key, then the first of Problems.
func (d Decision) Validate(action model.Action) error {
	if err := model.ValidateIdentity(d.Tenant, d.Key); err != nil {
		return err
	}
	if ps := d.Problems(action); len(ps) > 0 {
		return model.Errorf(model.CodeInvalid, "%s", ps[0].Message)
	}
	return nil
}

func (s *Service) decide(ctx context.Context, d Decision, action model.Action, apply applyFunc) (*model.Operation, error) {
	if err := d.Validate(action); err != nil {
		return nil, err
	}
	// The grace is read from the attempts before the transaction and
	// checked in it, against its time and the claim it was read at.
	g, err := s.graceFor(ctx, d, action)
	if err != nil {
		return nil, err
	}
	var out *model.Operation
	err = s.Store.WithTx(ctx, func(tx store.Tx) error {
		if d.Override && d.SeenLookup != nil {
			if moved, err := lookedUpSince(tx, Target{Tenant: d.Tenant, Key: d.Key, Seen: d.SeenLookup}); err != nil || moved != nil {
				if moved != nil {
					return moved
				}
				return err
			}
		}
		op, err := decideTx(tx, d, action, apply, g)
		out = op
		return err
	})
	return out, err
}

// decideTx is one operator decision inside tx: read the operation, refuse
// it if it moved on from what the operator saw (stale) or if the action is
// not legal from its state, else apply it, compare-and-set the row and
// record the decision. d must have passed Validate. g is the grace after
// the operation's latest request, read before tx (graceFor): within it,
// "not applied" and a new key are refused (graceTx).
func decideTx(tx store.Tx, d Decision, action model.Action, apply applyFunc, g *RequestGrace) (*model.Operation, error) {
	if strings.TrimSpace(d.Evidence) == "" {
		// A lookup that found nothing is the evidence of "not applied".
		d.Evidence = LookupEvidence(d.Finding)
	}
	op, err := tx.GetOperation(d.Tenant, d.Key)
	if err != nil {
		return nil, err
	}
	if d.ExpectVersion != 0 && d.ExpectState == "" && op.Version != d.ExpectVersion {
		// Only the version was given (--expect-version, --key K@V): what
		// the operation was at it is not known here, and not said.
		return op, model.Errorf(model.CodeStale, "%s/%s changed since you looked: you pinned version %d and it is now %s (version %d)%s — nothing was written; look again",
			d.Tenant, d.Key, d.ExpectVersion, op.State, op.Version, lastChange(op))
	}
	if d.ExpectVersion != 0 && (op.Version != d.ExpectVersion || (d.ExpectState != "" && op.State != d.ExpectState)) {
		return op, model.Errorf(model.CodeStale, "%s/%s changed since you looked: you saw %s and it is now %s (version %d)%s — nothing was written; look again",
			d.Tenant, d.Key, seen(d.ExpectState, d.ExpectVersion), op.State, op.Version, lastChange(op))
	}
	if op.State == model.StateInProgress && !Unheld(*op, tx.Now()) {
		// Read in this transaction, under its lock: a worker that claimed
		// it again since the operator looked holds it now.
		return op, model.Errorf(model.CodeIllegal, "cannot %s %s/%s: it is in_progress and its claim %d is held — %s's lease runs until %s and a worker may be sending it right now (allowed from in_progress with a live lease: no decisions); decide after %s (UTC), once the lease has ended, if it is still in_progress then — nothing was written",
			action.Verb(), d.Tenant, d.Key, op.ClaimNo, textsafe.Visible(or(op.LeaseOwner, "a worker")), op.LeaseUntil.UTC().Format(time.RFC3339), op.LeaseUntil.UTC().Format(time.RFC3339))
	}
	if !AllowedAt(*op, action, tx.Now()) {
		return op, model.Errorf(model.CodeIllegal, "cannot %s %s/%s: it is %s (allowed from %s: %s)",
			action.Verb(), d.Tenant, d.Key, op.State, op.State, legalText(*op))
	}
	if action == model.ActionMarkApplied {
		if err := otherRequestTx(tx, d, op); err != nil {
			return op, err
		}
	}
	// A check that found nothing is evidence only until an attempt that
	// may have reached the provider comes after it.
	if err := checkOutdatedTx(tx, d, action, op); err != nil {
		return op, err
	}
	if !d.Override {
		// The latest recorded finding (a triage run's, another
		// operator's check) binds every path to a decision, not only the
		// console that shows it: deciding against it — "not applied" when
		// the provider has the effect — needs the explicit second
		// confirmation, or the retry that follows sends it again. A
		// later "cannot tell" (the provider down, the wrong file) is no
		// evidence: the finding before it still binds.
		f, err := bindingFindingTx(tx, op)
		if err != nil {
			return nil, err
		}
		if ev := EvidenceOf(f); Against(action, ev) {
			how, risk := "ops resolve --check --against-finding for one key, --against-finding with --yes for several, or the console", ""
			if action == model.ActionMarkNotApplied {
				how = "ops resolve --against-finding=DIGEST, for one key or with --yes for several — ops show and --dry-run print the digest of what they show — or the console"
			}
			if action == model.ActionAuthorizeKey {
				how, risk = "ops supersede --against-finding=DIGEST — ops show prints the digest of what it shows — or the console", " (a new key would make the effect a second time)"
			}
			return op, model.Errorf(model.CodeIllegal, "cannot %s %s/%s: %s, recorded %s by %s%s — deciding against it needs the explicit second confirmation (%s); nothing was written",
				action.Verb(), d.Tenant, d.Key, textsafe.Visible(clipEvidence(FindingText(ev))), f.At.UTC().Format(time.RFC3339), textsafe.Visible(f.By), risk, how)
		}
	}
	if ev := AppliedEvidence(*op); !d.Override && Against(action, ev) {
		return op, model.Errorf(model.CodeIllegal, "cannot %s %s/%s: it is applied (%s) and only a late provider answer disagrees — if the effect did happen, a new key makes it a second time; check the provider (ops check), then confirm with ops supersede --against-finding=DIGEST (ops show prints it), or the console's override; nothing was written",
			action.Verb(), d.Tenant, d.Key, textsafe.Visible(clipEvidence(ev.Detail)))
	}
	if err := graceTx(tx, d, action, op, g); err != nil {
		return op, err
	}
	from, ver := op.State, op.Version
	to, err := apply(tx, op)
	if err != nil {
		return nil, err
	}
	op.State = to
	if err := tx.UpdateOperation(op, from, ver); err != nil {
		return nil, err
	}
	dec := &model.Decision{OperationID: op.ID, Operator: d.Operator, Action: action, Reason: d.Reason,
		Evidence: d.Evidence, FromState: from, ToState: to, FromVersion: ver, NewKey: d.NewKey}
	if err := tx.InsertDecision(dec); err != nil {
		return nil, err
	}
	return op, nil
}

// bindingFindingTx is the finding that binds a decision on op: its latest
// conclusive one (LatestConclusiveFinding) — but for a new key not yet
// used (authorized), the key's it replaced. A new key was never sent: a
// lookup of its own downstream key always finds nothing, and that must not
// bind its one decision when held (mark applied, with the replaced key's
// reference) — the replaced key's "has it" does.
func bindingFindingTx(tx store.Tx, op *model.Operation) (*model.Finding, error) {
	if op.State == model.StateAuthorized && op.SupersedesID != 0 {
		return tx.LatestConclusiveFinding(op.SupersedesID)
	}
	return tx.LatestConclusiveFinding(op.ID)
}

// OtherRequestRefuses reports whether the ledger refuses action on op
// because the latest lookup of its downstream key found a different
// request there (model.FindingHasOther): "mark applied" is refused
// (otherRequestTx), with or without an override. op is as the screen or
// list read it; the write checks it again.
func OtherRequestRefuses(action model.Action, op model.Operation) bool {
	return action == model.ActionMarkApplied && op.Finding != nil && op.Finding.Kind == model.FindingHasOther
}

// otherRequestTx refuses "mark applied" on op while the latest lookup of
// its downstream key (of the key it replaced, for a new key not yet used:
// bindingFindingTx's) found a different request there
// (model.FindingHasOther): what the provider holds under the key is
// another tool's or other arguments' — a copy of the ledger, or a key
// reused after its tombstone was forgotten, sent it — and marking this
// operation applied on it would tell every caller an effect happened that
// was never asked for. No override: there is no evidence to decide
// against, only none at all.
func otherRequestTx(tx store.Tx, d Decision, op *model.Operation) error {
	id := op.ID
	if op.State == model.StateAuthorized && op.SupersedesID != 0 {
		id = op.SupersedesID
	}
	f, err := tx.LatestFinding(id)
	if err != nil {
		return err
	}
	if f == nil || f.Kind != model.FindingHasOther {
		return nil
	}
	return model.Errorf(model.CodeIllegal, "cannot mark %s/%s applied: the latest lookup of its downstream key (recorded %s by %s) found a different request there — %s; nothing was written. Check at provider %s what it holds under the key; to send this operation's effect, authorize a new key (ops supersede, or the console's new key); if a later attempt may have delivered it since, ask the provider again (ops check)",
		d.Tenant, d.Key, f.At.UTC().Format(time.RFC3339), textsafe.Visible(f.By), textsafe.Visible(clipEvidence(f.Detail)), textsafe.Visible(op.Provider))
}

func seen(st model.State, version int64) string {
	if st == "" {
		return fmt.Sprintf("version %d", version)
	}
	return fmt.Sprintf("%s (version %d)", st, version)
}

func lastChange(op *model.Operation) string {
	return fmt.Sprintf(", last changed %s", op.UpdatedAt.Format(time.RFC3339))
}

func legalText(op model.Operation) string {
	l := LegalFor(op)
	if len(l) == 0 {
		return "no decisions"
	}
	var parts []string
	for _, a := range l {
		parts = append(parts, a.Verb())
	}
	return strings.Join(parts, ", ")
}

// MarkApplied settles an unknown operation as applied: the evidence (a
// provider reference) becomes the provider reference — unless a "has it"
// finding with the provider's reference binds, whose reference it is
// then (the evidence stays in the decision row) — and a receipt is
// stored so later replays of the key return it.
func (s *Service) MarkApplied(ctx context.Context, d Decision) (*model.Operation, error) {
	return s.decide(ctx, d, model.ActionMarkApplied, s.markApplied(d))
}

// applyFunc changes an operation for a decision inside its transaction and
// returns the state it moves to.
type applyFunc func(tx store.Tx, op *model.Operation) (model.State, error)

func (s *Service) markApplied(d Decision) applyFunc {
	return func(tx store.Tx, op *model.Operation) (model.State, error) {
		ref := op.ProviderRef
		if d.Evidence != "" {
			ref = d.Evidence
		}
		// A "has it" finding that binds (decideTx's rule) names the
		// effect by the provider's own reference: that is what the
		// receipt replays to every caller. The typed evidence — another
		// reference, a ticket — stays in the decision row.
		f, err := tx.LatestConclusiveFinding(op.ID)
		if err != nil {
			return "", err
		}
		if ev := EvidenceOf(f); ev != nil && ev.Found && ev.Ref != "" {
			ref = ev.Ref
		}
		rc := model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, ProviderRef: ref}
		rc.Result, _ = json.Marshal(map[string]string{"provider": op.Provider, "provider_ref": ref, "status": "applied",
			"settled_by": d.Operator})
		b, err := json.Marshal(rc)
		if err != nil {
			return "", err
		}
		op.Receipt, op.ProviderRef = b, ref
		op.LeaseOwner, op.LeaseUntil = "", time.Time{}
		// Marking a contradicted not_applied applied agrees with the
		// provider's late answer: the contradiction is settled (the late
		// attempt and both decisions stay in the history).
		op.Contradicted = false
		if op.State == model.StateAuthorized && op.SupersedesID != 0 {
			// It settles the key it replaced too: the effect happened
			// once, under that key, and this receipt says so.
			old, err := tx.GetOperationByID(op.SupersedesID)
			if err != nil && !model.IsCode(err, model.CodeNotFound) {
				return "", err
			}
			if err == nil && old.Contradicted {
				oldFrom, oldVer := old.State, old.Version
				old.Contradicted = false
				if err := tx.UpdateOperation(old, oldFrom, oldVer); err != nil {
					return "", err
				}
			}
		}
		op.ExpiresAt = tx.Now().Add(s.ReplayWindow)
		return model.StateApplied, nil
	}
}

// MarkNotApplied settles an unknown operation as never applied; the next
// call with the same key claims it again.
func (s *Service) MarkNotApplied(ctx context.Context, d Decision) (*model.Operation, error) {
	return s.decide(ctx, d, model.ActionMarkNotApplied, markNotApplied)
}

func markNotApplied(tx store.Tx, op *model.Operation) (model.State, error) {
	op.LeaseOwner, op.LeaseUntil = "", time.Time{}
	// The provider's own answer named an effect (a late result put its
	// reference here): "not applied" contradicts it.
	if op.ProviderRef != "" {
		op.Contradicted = true
	}
	return model.StateNotApplied, nil
}

// AuthorizeNewKey supersedes the operation with a deliberate new key for the
// same request: the old key's retries are told the new key, and the first
// call with the new key claims it. It returns the old and the new operation.
func (s *Service) AuthorizeNewKey(ctx context.Context, d Decision) (oldOp, newOp *model.Operation, err error) {
	if d.NewKey == "" {
		d.NewKey = NewKeyFor(d.Key)
	}
	oldOp, err = s.decide(ctx, d, model.ActionAuthorizeKey, authorize(d, &newOp))
	if err != nil {
		return nil, nil, err
	}
	return oldOp, newOp, nil
}

// authorize supersedes op by d.NewKey (set) and leaves the new operation
// in *newOp.
func authorize(d Decision, newOp **model.Operation) applyFunc {
	return func(tx store.Tx, op *model.Operation) (model.State, error) {
		if _, err := tx.GetOperation(op.Tenant, d.NewKey); err == nil {
			return "", model.Errorf(model.CodeConflict, "key %q already exists in tenant %q; pick another new key", d.NewKey, op.Tenant)
		} else if !model.IsCode(err, model.CodeNotFound) {
			return "", err
		}
		if _, err := tx.GetTombstone(op.Tenant, d.NewKey); err == nil {
			return "", model.Errorf(model.CodeConflict, "key %q was used before (now expired) in tenant %q; pick another new key", d.NewKey, op.Tenant)
		}
		n := &model.Operation{Tenant: op.Tenant, Key: d.NewKey, Tool: op.Tool, PayloadVersion: op.PayloadVersion,
			Args: op.Args, Summary: op.Summary, Fingerprint: op.Fingerprint, State: model.StateAuthorized,
			Provider: op.Provider, SupersedesID: op.ID}
		if op.Provider != "" {
			dk, err := downstreamKey(tx, op.Tenant, d.NewKey)
			if err != nil {
				return "", err
			}
			n.DownstreamKey = dk
		}
		if err := tx.InsertOperation(n); err != nil {
			return "", err
		}
		*newOp = n
		op.SupersededByID = n.ID
		op.LeaseOwner, op.LeaseUntil = "", time.Time{}
		// A contradicted operation's new key is a person's decision on
		// the contradiction (against a "has it" or the receipt only with
		// the second confirmation): settled, as marking it applied
		// settles it. Superseded allows no decision, so a flag left here
		// could never be cleared. A later late answer flags it again.
		op.Contradicted = false
		return model.StateSuperseded, nil
	}
}

// NewKeyFor proposes a fresh key derived from an old one.
func NewKeyFor(old string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := ".r-" + hex.EncodeToString(b[:])
	r := []rune(old)
	if max := model.MaxKeyLen - len([]rune(suffix)); len(r) > max {
		r = r[:max]
	}
	return string(r) + suffix
}

// Check asks the operation's provider, by its downstream key, what happened.
// It changes nothing. A new key not yet used (authorized) was never sent:
// the provider is asked about the key it replaced, as CheckAndRecord does
// (the finding that binds its decision is that key's). A provider that has
// nothing under the key while a claim of the operation is live — its
// request may still be on its way — is "cannot tell" (an error), never
// "has nothing".
func (s *Service) Check(ctx context.Context, tenant, key string) (*model.Operation, provider.Evidence, error) {
	if err := model.ValidateIdentity(tenant, key); err != nil {
		return nil, provider.Evidence{}, err
	}
	op, err := s.Store.Get(ctx, tenant, key)
	if err != nil {
		return nil, provider.Evidence{}, err
	}
	if op.Provider == "" || op.DownstreamKey == "" {
		return op, provider.Evidence{}, model.Errorf(model.CodeInvalid,
			"%s/%s is a local %s operation: its effect commits with the ledger, there is no provider to ask", tenant, key, op.Tool)
	}
	asked := op
	if op.State == model.StateAuthorized && op.SupersedesID != 0 {
		if d, gerr := s.Store.DetailByID(ctx, op.SupersedesID); gerr == nil {
			asked = &d.Operation
		} else if !model.IsCode(gerr, model.CodeNotFound) {
			return op, provider.Evidence{}, gerr
		}
	}
	prov, err := s.Providers.Get(asked.Provider)
	if err != nil {
		return op, provider.Evidence{}, model.Errorf(model.CodeUnavailable, "%v", err)
	}
	since := s.Store.Now()
	ev, err := provider.LookupFor(ctx, prov, queryOf(asked))
	if err == nil && !ev.Found {
		if why := lookupMoved(asked, prov); why != "" {
			err = &askedElsewhere{why}
		}
	}
	var other *provider.OtherRequest
	if errors.As(err, &other) {
		// An answer, about another request: no evidence either way.
		return op, ev, model.Wrap(model.CodeUnavailable, err, "%v", err)
	}
	if err != nil {
		return op, ev, model.Wrap(model.CodeUnavailable, err, "provider %s lookup failed: %v", asked.Provider, err)
	}
	if !ev.Found {
		after, gerr := s.Store.Get(ctx, asked.Tenant, asked.Key)
		if gerr != nil {
			after = nil
		}
		if why, live := claimLive(asked, after, since); live {
			ierr := errInFlight(why)
			return op, ev, model.Wrap(model.CodeUnavailable, ierr, "provider %s: cannot tell: %v", asked.Provider, ierr)
		}
	}
	return op, ev, nil
}
