package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// Findings: the one place where a provider's lookup becomes a recorded
// finding. A lookup that answered "found" is "has it" (with the provider's
// reference), one that answered and found nothing is "has nothing", and
// every error — the provider down, slow, without a lookup — is "cannot
// tell", which is never evidence either way. Recording a finding appends a
// lookup attempt and nothing else: the operation's state and version stay
// as they are, whatever the provider said.

// DefaultLookupTimeout bounds one provider lookup: a slower answer is
// "cannot tell".
const DefaultLookupTimeout = 5 * time.Second

// DefaultRecordTimeout bounds recording a finding (Service.RecordTimeout).
const DefaultRecordTimeout = 30 * time.Second

// maxFindingDetail bounds the provider's words kept with a finding.
const maxFindingDetail = 1000

// Looked is one provider lookup of one operation.
type Looked struct {
	Finding  model.Finding
	Evidence provider.Evidence
	// Err is why the provider cannot tell (Finding.Kind is cannot_tell).
	Err error
	// Recorded: the finding was written to the ledger as a lookup attempt
	// (never in a read-only ledger).
	Recorded bool
	// ReplacedKey, when set, is the key the provider was asked about in
	// place of the operation's own: a new key (authorized) was never sent,
	// so CheckAndRecord asks about the key it replaced, and records the
	// finding there.
	ReplacedKey string
	// InFlight: the provider had nothing under the key, but a claim of the
	// operation was live while it was asked (in_progress, its lease held,
	// or a claim made during the lookup): its request may still have been
	// on its way. Recorded as "cannot tell" (Err says why), never "has
	// nothing" — which would be the evidence of a "not applied" and a
	// second e-mail or payment.
	InFlight bool
}

// claimLive reports whether a claim of the operation may have had a
// request on its way while it was looked up from since on: before is the
// operation as read before the lookup, after (nil if unknown) as read
// after it. Live: in_progress with its lease held at since (a released
// claim's lease ended when it was released), or claimed again since
// before was read. It says which claim, for the finding's words.
func claimLive(before, after *model.Operation, since time.Time) (string, bool) {
	held := func(op *model.Operation) bool {
		return op.State == model.StateInProgress && op.LeaseUntil.After(since)
	}
	switch {
	case after != nil && after.ClaimNo != before.ClaimNo:
		return fmt.Sprintf("claim %d of it was made while the provider was asked", after.ClaimNo), true
	case held(before):
		return fmt.Sprintf("it was in_progress, claim %d's lease held until %s", before.ClaimNo, before.LeaseUntil.UTC().Format(time.RFC3339)), true
	case after != nil && held(after):
		return fmt.Sprintf("it was in_progress, claim %d's lease held until %s", after.ClaimNo, after.LeaseUntil.UTC().Format(time.RFC3339)), true
	}
	return "", false
}

// errInFlight is the "cannot tell" of a lookup that found nothing while a
// claim was live (claimLive's why).
func errInFlight(why string) error {
	return fmt.Errorf("asked while a claim was in flight (%s): the provider had nothing under the key yet, but the claim's request may still be on its way to it — no evidence either way; ask again once the claim has ended (its lease over, or its answer recorded)", why)
}

// findingOf reads a lookup's answer. An error is "cannot tell", whatever
// Evidence says beside it.
func findingOf(ev provider.Evidence, err error) (model.FindingKind, string, string) {
	var other *provider.OtherRequest
	switch {
	case errors.As(err, &other):
		// The provider holds another request under the key: its own
		// finding, with what it holds, never evidence either way.
		return model.FindingHasOther, other.Ref, clip(err.Error())
	case err != nil:
		return model.FindingCannotTell, "", clip(err.Error())
	case ev.Found:
		return model.FindingHasIt, ev.Ref, clip(ev.Detail)
	default:
		return model.FindingHasNothing, "", clip(ev.Detail)
	}
}

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxFindingDetail {
		return s
	}
	cut := maxFindingDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// LookupAuthoritative reports whether provider name's lookup is declared
// authoritative: its "has nothing" means the provider never took the
// request, so a person may mark such operations not applied in bulk.
// Every other provider's "has nothing" is shown, and decided one by one.
func (s *Service) LookupAuthoritative(name string) bool { return s.AuthoritativeLookups[name] }

// EvidenceOf is the provider evidence a recorded finding gives a decision
// (Decision.Finding): a conclusive, fresh finding only — "cannot tell" and
// stale findings are no evidence.
func EvidenceOf(f *model.Finding) *provider.Evidence {
	if !f.Conclusive() {
		return nil
	}
	// Detail becomes a decision's evidence text ("provider lookup: …"),
	// which must be inert: the provider's words are made so.
	ev := &provider.Evidence{Provider: f.Provider, Found: f.Kind == model.FindingHasIt, Ref: f.Ref, At: f.At,
		Detail: clip(textsafe.Visible(f.Detail)), CheckedAt: f.At}
	if ev.Detail == "" {
		ev.Detail = fmt.Sprintf("%s %s", f.Provider, f.Kind.Words())
	}
	if f.By == LateResultBy {
		ev.Status = StatusLate
	}
	return ev
}

// Look asks op's provider by its downstream key and, unless the ledger is
// read-only, records the finding as a lookup attempt by `by` (who asked:
// "triage by alice"). The error is the ledger's or the request's (a local
// operation has no provider to ask); "cannot tell" is a finding, in
// Looked.Err.
func (s *Service) Look(ctx context.Context, op *model.Operation, by string) (Looked, error) {
	if op.Provider == "" || op.DownstreamKey == "" {
		return Looked{}, model.Errorf(model.CodeInvalid,
			"%s/%s is a local %s operation: its effect commits with the ledger, there is no provider to ask", op.Tenant, op.Key, op.Tool)
	}
	start := time.Now()
	since := s.Store.Now()
	ev, err := s.lookup(ctx, op)
	kind, ref, detail := findingOf(ev, err)
	at := s.Store.Now()
	l := Looked{Evidence: ev, Err: err, Finding: model.Finding{Kind: kind, Provider: op.Provider, Ref: ref, Detail: detail,
		At: at.UTC().Truncate(time.Millisecond), By: by}}
	// A request sent before the lookup may still be applied within the
	// grace after its wait ended (the client stops waiting at the lease
	// end, the provider does not stop processing): read from the recorded
	// attempts once, after the lookup. A claim made after they were read
	// is claimLive's (its claim number moved on).
	graceWhy, inGrace := "", false
	if kind == model.FindingHasNothing && ctx.Err() == nil {
		graceWhy, inGrace = s.withinGrace(ctx, op, nil, since)
	}
	// nothing makes a "has nothing" "cannot tell" when a claim may have
	// had a request on its way while the provider was asked (after: the
	// operation as read after the lookup), or a request sent before it may
	// still be applied (within the grace).
	nothing := func(after *model.Operation) {
		if kind != model.FindingHasNothing {
			return
		}
		if why, live := claimLive(op, after, since); live {
			l.InFlight, l.Err = true, errInFlight(why)
			l.Finding.Kind, l.Finding.Detail = model.FindingCannotTell, clip(l.Err.Error())
		} else if inGrace {
			l.InFlight, l.Err = true, errGrace(graceWhy)
			l.Finding.Kind, l.Finding.Detail = model.FindingCannotTell, clip(l.Err.Error())
		}
	}
	if ctx.Err() != nil && err != nil {
		// The caller stopped (triage cancelled, the console closed): that
		// is nobody's finding about the provider.
		return l, ctx.Err()
	}
	if s.Store.ReadOnly() {
		after, gerr := s.Store.Get(ctx, op.Tenant, op.Key)
		if gerr != nil {
			after = nil
		}
		nothing(after)
		return l, nil
	}
	found := l
	recordTimeout := s.RecordTimeout
	if recordTimeout <= 0 {
		recordTimeout = DefaultRecordTimeout
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err = s.Store.WithAttemptTx(rctx, func(tx store.Tx) error {
		// Still there (not compacted): a finding is about an operation.
		cur, err := tx.GetOperationByID(op.ID)
		if err != nil {
			return err
		}
		// Read in the transaction that records it: a claim made before
		// it commits is seen (its attempt numbered before this lookup's).
		l = found
		nothing(cur)
		a := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
			WorkerID: clipWorker(by), ProviderRef: ref, Finding: l.Finding.Kind, Detail: l.Finding.Detail, StartedAt: at, Duration: time.Since(start)}
		if err := tx.InsertAttempt(a); err != nil {
			return err
		}
		if kind == model.FindingHasIt && (cur.State == model.StateNotApplied || cur.State == model.StateFailed) && !cur.Contradicted {
			// The provider has what a decision (or its own answer) said
			// it never took: the provider's word against the ledger's,
			// as a late answer of a dispatch is. Flagged, its key is not
			// dispatched again to a provider that ignores downstream
			// keys — which would make the effect a second time — until a
			// person decides (marking it applied agrees with the provider).
			// A failed one's replays say "rejected for good" of what the
			// provider holds (an earlier attempt's delivery): flagged, it
			// may be marked applied (LegalFor), not only get a new key.
			from, ver := cur.State, cur.Version
			cur.Contradicted = true
			if err := tx.UpdateOperation(cur, from, ver); err != nil {
				return err
			}
		}
		if (l.Finding.Kind == model.FindingHasNothing || l.Finding.Kind == model.FindingHasOther) && cur.State == model.StateApplied && cur.ClaimNo > 0 && !cur.Contradicted {
			// The provider has nothing under the key of what the ledger
			// records as applied (its own answer, or a person's decision):
			// its receipt may report done an effect that never happened.
			// Flagged, as a late "not applied" flags it (LegalFor: a
			// deliberate new key, against the receipt); the applied
			// outcome and its receipt stay — a lookup decides nothing. A
			// "has nothing" that may be a request still on its way was
			// made "cannot tell" above (nothing), and a key never claimed
			// (a new key marked applied on the key it replaced) was never
			// sent under its own downstream key: nothing there is no news.
			// A different request under the key (has_other) flags it the
			// same way: what the provider holds there is not this
			// operation's effect — an applied answer to its dispatch was
			// the other request's (a provider that honours keys answers a
			// repeated key with the first result), or a decision rested on
			// a lookup by key alone.
			from, ver := cur.State, cur.Version
			cur.Contradicted = true
			if err := tx.UpdateOperation(cur, from, ver); err != nil {
				return err
			}
		}
		if kind == model.FindingHasIt && cur.State == model.StateSuperseded && cur.SupersededByID != 0 {
			// Found after its new key was authorized (this commits after
			// the decision, which a "has it" before it would have bound):
			// the unused new key is held now, in commit order — not left
			// to its first call comparing times (foundSince), which took a
			// lookup of the same instant, or one timed before it waited
			// for the writer, for one from before.
			if err := holdSuccessor(tx, cur); err != nil {
				return err
			}
		}
		// Its number, as every reader will see it.
		f, err := tx.LatestFinding(op.ID)
		if err == nil && f != nil {
			l.Finding.Seq = f.Seq
		}
		return err
	})
	if err != nil {
		// Said as what it is: the provider answered, the ledger did not
		// keep it (a locked or failing ledger), so nothing may rest on it.
		what := l.Finding.Kind.Words()
		if l.Finding.Kind == model.FindingHasIt && l.Finding.Ref != "" {
			what += " · " + textsafe.Visible(l.Finding.Ref)
		}
		return l, model.Wrap(model.CodeOf(err), err, "provider %s answered (%s), but the ledger did not record it, so nothing may rest on it: %v", op.Provider, what, err)
	}
	l.Recorded = true
	s.asked.add(op.ID, l.Finding.Seq)
	// The answer is of what the provider had when it was asked: a
	// decision that rests on it is refused once a later attempt may have
	// reached the provider (CheckOutdated).
	l.Evidence.CheckedAt = l.Finding.At
	return l, nil
}

// lookup asks the provider within the lookup timeout.
func (s *Service) lookup(ctx context.Context, op *model.Operation) (provider.Evidence, error) {
	prov, err := s.Providers.Get(op.Provider)
	if err != nil {
		// The config the calls were made with names it; this one does
		// not (--config left out, the provider renamed since).
		return provider.Evidence{Provider: op.Provider, DownstreamKey: op.DownstreamKey},
			fmt.Errorf("provider %q is not in this config (--config): nothing was asked", op.Provider)
	}
	timeout := s.LookupTimeout
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := provider.LookupFor(lctx, prov, queryOf(op))
	if err != nil && errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("no answer within %v: %w", timeout, err)
	}
	if err == nil && !ev.Found {
		if why := lookupMoved(op, prov); why != "" {
			err = &askedElsewhere{why}
		}
	}
	return ev, err
}

// queryOf is what a lookup of op may know: its downstream key, the
// provider's reference an earlier attempt recorded, and the request it
// sends under the key (its tool and arguments, as dispatched), which a
// provider that reports what it holds compares (provider.OtherRequest).
// An operation read without its arguments is asked about by key alone.
func queryOf(op *model.Operation) provider.Query {
	q := provider.Query{DownstreamKey: op.DownstreamKey, Ref: op.ProviderRef}
	if len(op.Args) > 0 {
		q.Tool, q.Args = op.Tool, op.Args
	}
	return q
}

func clipWorker(s string) string {
	if len(s) <= model.MaxTraceLen {
		return s
	}
	cut := model.MaxTraceLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// CheckAndRecord is Check that records its finding (ops check, the
// console's c): the operation, what was looked up, and an error for bad
// input, an operation that is not there or has no provider, or a ledger
// that failed. "Cannot tell" is Looked.Err.
func (s *Service) CheckAndRecord(ctx context.Context, tenant, key, by string) (*model.Operation, Looked, error) {
	if err := model.ValidateIdentity(tenant, key); err != nil {
		return nil, Looked{}, err
	}
	op, err := s.Store.Get(ctx, tenant, key)
	if err != nil {
		return nil, Looked{}, err
	}
	asked, replaced := op, ""
	if op.State == model.StateAuthorized && op.SupersedesID != 0 {
		// A new key not yet used was never sent: its own downstream key
		// always has nothing, which says nothing about the effect. Ask
		// about the key it replaced, and record it there — where a "has
		// it" holds this key (Look) and binds its decision
		// (bindingFindingTx).
		if d, gerr := s.Store.DetailByID(ctx, op.SupersedesID); gerr == nil {
			asked, replaced = &d.Operation, d.Operation.Key
		} else if !model.IsCode(gerr, model.CodeNotFound) {
			return op, Looked{}, gerr
		}
	}
	l, err := s.Look(ctx, asked, by)
	l.ReplacedKey = replaced
	if err == nil && l.Recorded {
		// The lookup may have moved it on (flagged contradicted: a new
		// version): the operation as it is now, for a decision that
		// names the version it saw.
		if cur, gerr := s.Store.Get(ctx, tenant, key); gerr == nil {
			op = cur
		}
	}
	return op, l, err
}

// FindingReview is one review of many operations by their findings: what
// each finding lets a person propose in bulk, and what stays with a person
// one by one. It proposes; the person confirms; DecideMany writes each as
// its own compare-and-set.
type FindingReview struct {
	// Apply: a fresh "has it" — mark applied, with the provider's
	// reference as the evidence.
	Apply []Target
	// NotApplied: a fresh "has nothing" from a provider whose lookup is
	// declared authoritative — mark not applied.
	NotApplied []Target
	// OneByOne: a fresh "has nothing" from a provider whose lookup is not
	// authoritative — shown, and decided one by one.
	OneByOne []model.Operation
	// LaterUnsure: an earlier "has nothing" whose latest lookup could not
	// tell (Finding.Earlier) — shown, and decided one by one: the write
	// refuses a "not applied" on it as stale, whether or not the
	// provider's lookup is authoritative.
	LaterUnsure []model.Operation
	// Recheck: a fresh "has nothing" from an authoritative provider that
	// this process did not ask for itself (NeedsLook): its provider is
	// asked again (LookFirst) before it is proposed for "not applied".
	Recheck []model.Operation
	// Left: cannot tell, stale, never checked, or neither unknown nor an in_progress nobody holds — nothing is
	// proposed.
	Left []model.Operation
}

// unheldNow is Unheld at the ledger's clock (false with no ledger).
func (s *Service) unheldNow(op model.Operation) bool {
	return op.State == model.StateInProgress && s.Store != nil && Unheld(op, s.Store.Now())
}

// ReviewByFinding sorts ops (as the screen showed them, with their
// findings) into a review, each by the finding that binds its decision
// (model.Operation.Binding: an earlier "has it" outlives a later "has
// nothing", "cannot tell" or retry), as the ledger checks it when it writes.
func (s *Service) ReviewByFinding(ops []model.Operation) FindingReview {
	var r FindingReview
	for _, op := range ops {
		if lf := op.Finding; lf != nil && lf.Kind == model.FindingHasOther {
			// The latest lookup found another request under the key: an
			// earlier "has it" (asked by key alone) may have been about
			// it too. Nothing is proposed; the write refuses "applied".
			r.Left = append(r.Left, op)
			continue
		}
		f := op.Binding()
		// An in_progress one nobody holds is decided as an unknown one is
		// (Unheld); one whose lease is live is left.
		if (op.State != model.StateUnknown && !s.unheldNow(op)) || !f.Conclusive() {
			r.Left = append(r.Left, op)
			continue
		}
		t := TargetOf(op)
		fc := *f
		t.Finding = &fc
		switch {
		case f.Kind == model.FindingHasIt:
			// The provider's words, made inert and bounded: a reference
			// with escapes or longer than evidence may be must not fail
			// every decision of the review.
			t.Evidence = RefEvidence(f.Ref)
			if f.Ref == "" {
				t.Evidence = clipEvidence(textsafe.Visible("provider lookup found it: " + f.Detail))
			}
			r.Apply = append(r.Apply, t)
		case f.Earlier:
			// Only the latest lookup's "has nothing" is proposed: after
			// this one, one could not tell, and the write (findingMoved)
			// refuses a "not applied" on an earlier one as stale.
			r.LaterUnsure = append(r.LaterUnsure, op)
		case s.LookupAuthoritative(op.Provider) && !s.askedItself(op):
			r.Recheck = append(r.Recheck, op)
		case s.LookupAuthoritative(op.Provider):
			r.NotApplied = append(r.NotApplied, t)
		default:
			r.OneByOne = append(r.OneByOne, op)
		}
	}
	return r
}

// maxRefEvidence bounds the evidence a provider's reference fills in: a
// real reference is a short id; anything longer is cut, with a mark.
const maxRefEvidence = 256

// RefEvidence is the evidence a provider's reference gives a "mark
// applied": the reference, inert (escapes written out) and bounded — what
// the review writes and the console's form fills in.
func RefEvidence(ref string) string {
	s := textsafe.Visible(ref)
	if len(s) <= maxRefEvidence {
		return s
	}
	cut := maxRefEvidence
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func clipEvidence(s string) string {
	if len(s) <= MaxReasonLen {
		return s
	}
	cut := MaxReasonLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
