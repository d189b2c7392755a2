package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/store"
)

// CallOptions are the per-call settings beside the request itself.
type CallOptions struct {
	// Provider names the external system for a new external operation
	// (default "sandbox"); an existing operation keeps the one it recorded.
	Provider string
	// Faults are passed to the sandbox provider for this dispatch.
	Faults provider.Faults
}

// Call makes one attempt of req. The returned error is non-nil only for
// invalid input (Class invalid, nothing written) and internal failures;
// every other outcome — replay, conflict, unknown, … — is a Result.
func (s *Service) Call(ctx context.Context, req model.Request, opt CallOptions) (Result, error) {
	p, err := s.Tools.Prepare(req)
	if err != nil {
		rp, ok := s.recorded(ctx, req, err)
		if !ok {
			return errorResult(err), err
		}
		p = rp
	}
	return s.callPrepared(ctx, p, opt)
}

func (s *Service) callPrepared(ctx context.Context, p *model.Prepared, opt CallOptions) (Result, error) {
	if p.Tool.Kind() == model.EffectLocal {
		return s.callLocal(ctx, p)
	}
	return s.callExternal(ctx, p, opt)
}

// recorded prepares req, whose arguments the tool refuses now (why),
// without the tool's current schema, and reports whether it is exactly the
// request recorded under its key: a caller that names no payload version
// retrying the bytes it sent before the tool's arguments changed. Its
// answer is the operation's (a replay, a conflict, in progress...), where
// "fix the arguments" would have it change them under a new key and make
// the effect a second time. It only reads.
func (s *Service) recorded(ctx context.Context, req model.Request, why error) (*model.Prepared, bool) {
	return RecordedRequest(ctx, s.Store, s.Tools, req, why)
}

// RecordedRequest is Service.recorded for a caller that has a ledger's read
// side and the registry but no Service (the CLI checks before it opens the
// ledger for writing).
func RecordedRequest(ctx context.Context, r interface {
	Get(ctx context.Context, tenant, key string) (*model.Operation, error)
}, tools *model.Registry, req model.Request, why error) (*model.Prepared, bool) {
	if !model.IsCode(why, model.CodeInvalid) {
		return nil, false
	}
	// A version named explicitly is compared as named: only the very
	// fingerprint recorded is the same request (SameRequest).
	p, err := tools.PrepareRecorded(req, why)
	if err != nil {
		return nil, false
	}
	op, err := r.Get(ctx, p.Tenant, p.Key)
	if err != nil || !p.SameRequest(op.Tool, op.PayloadVersion, op.Fingerprint) {
		return nil, false
	}
	return p, true
}

// Recorded reports whether req is exactly the request recorded under its
// key, whatever the tool's arguments are now: the gateway asks before it
// refuses an argument the tool no longer declares.
func (s *Service) Recorded(ctx context.Context, req model.Request) bool {
	_, ok := s.recorded(ctx, req, model.Errorf(model.CodeInvalid, "arguments refused"))
	return ok
}

// CallRecorded is Call for a request whose arguments the caller refuses
// (why, class invalid: the gateway's argument the tool no longer
// declares) unless it is exactly the request recorded under its key: then
// it gets its operation's answer, and is never made (model.Prepared.
// Unchecked). Otherwise it is refused with why, nothing written.
func (s *Service) CallRecorded(ctx context.Context, req model.Request, opt CallOptions, why error) (Result, error) {
	p, ok := s.recorded(ctx, req, why)
	if !ok {
		return errorResult(why), why
	}
	return s.callPrepared(ctx, p, opt)
}

// refuseUnchecked answers a call prepared without the tool's current
// schema (model.Prepared.Unchecked) that would make op — create it (op
// nil), apply or send it again: such a request is answered from its
// operation, never made. An operation whose outcome is not settled gets
// "stop, a person must reconcile it" (an agent told "fix the arguments"
// might change them under a new key: a second effect); one that was not
// applied, "invalid" with the way to make it now. done false: the call is
// not unchecked, go on. Nothing is written.
func (s *Service) refuseUnchecked(op *model.Operation, p *model.Prepared) (Result, bool, error) {
	if p.Unchecked == nil {
		return Result{}, false, nil
	}
	see := fmt.Sprintf("retrysafe ops show%s --tenant %s --key %s", s.HintFlags, textsafe.ShellWord(p.Tenant), textsafe.ShellWord(p.Key))
	since, what, instead := p.UncheckedWords()
	if Unsettled(op) {
		return Result{Class: model.ClassUnknown, State: op.State, Op: op, Message: fmt.Sprintf(
			"the outcome of %q is not settled (%s), and it was recorded before %s: it is not sent again from %s — stop, a person must reconcile it (%s); nothing was written",
			p.Key, op.State, since, what, see)}, true, nil
	}
	if op == nil {
		return Result{}, true, p.Unchecked
	}
	return Result{}, true, model.Errorf(model.CodeInvalid,
		"%v; the operation under this key (%s) was recorded before %s, and a request refused now is not made again — it was not applied: a new action takes %s, under a new key (%s); nothing was written",
		p.Unchecked, op.State, since, instead, see)
}

func (s *Service) callLocal(ctx context.Context, p *model.Prepared) (Result, error) {
	start := s.Store.Now()
	fresh := s.unseen(ctx, p)
	if !fresh {
		if r, ok := s.fastReplay(ctx, p, start, true); ok {
			return r, nil
		}
	}
	var res Result
	err := s.callTx(ctx, fresh, func(tx store.Tx, fresh bool) error {
		var (
			r    Result
			done bool
			err  error
		)
		if fresh {
			r, done, err = s.createLocal(tx, p, start)
		}
		if !done && err == nil {
			r, err = s.CallLocalTx(tx, p, start)
		}
		if err != nil {
			return err
		}
		res = r
		s.at(PointBeforeCommit)
		return nil
	})
	if err != nil {
		return errorResult(err), err
	}
	s.at(PointAfterCommit)
	return res, nil
}

// CallLocalTx runs a local tool's call inside tx: lookup, effect, receipt
// and attempt all commit (or roll back) with tx. Bulk generators call it
// many times in one transaction; Call wraps it in its own.
func (s *Service) CallLocalTx(tx store.Tx, p *model.Prepared, start time.Time) (Result, error) {
	if h, ok := tx.(store.EffectHinter); ok && p.Tool.Effect.Table != model.TableCustom {
		h.ExpectLocalEffect(p.Tool.Effect.Table)
	}
	op, err := tx.GetOperation(p.Tenant, p.Key)
	if model.IsCode(err, model.CodeNotFound) {
		if r, done, err := s.tombstoned(tx, p); done || err != nil {
			return r, err
		}
		if r, done, err := s.refuseUnchecked(nil, p); done {
			return r, err
		}
		op = s.newOperation(tx, p)
		op.State = model.StateApplied
		op.Receipt = json.RawMessage(`{}`) // replaced below, once the effect's id is known
		op.ClaimNo = 1
		op.ExpiresAt = tx.Now().Add(s.ReplayWindow)
		if err := tx.InsertOperation(op); err != nil {
			return Result{}, err
		}
		return s.applyLocal(tx, op, p, start, true)
	}
	if err != nil {
		return Result{}, err
	}
	r, claim, err := s.existing(tx, op, p, start)
	if err != nil || !claim {
		return r, err
	}
	if op.Provider != "" {
		// Recorded with a provider, the tool local only since: the
		// provider may hold the effect, so it is never made here. It
		// gets what the provider path answers short of sending.
		if r, done, err := s.holdClaim(tx, op, p, start, fmt.Sprintf(
			"tool %s was changed from provider %s to a local effect since the key was recorded: a call neither makes it here nor sends it to a provider its tool no longer names", p.Tool.Name, op.Provider)); done || err != nil {
			return r, err
		}
		return s.kindChanged(tx, op, p, start)
	}
	if r, done, err := s.refuseUnchecked(op, p); done {
		return r, err
	}
	// not_applied or authorized: this call claims it and applies it now.
	return s.applyLocal(tx, op, p, start, false)
}

// kindChanged refuses a call that would take an operation (existing's
// claim) recorded with the other effect kind than its tool has now: one
// recorded with a provider, the tool local since (making it here could
// make the effect a second time), or one recorded as local, the tool
// external since (a local operation is applied or not by its own
// transaction: there is nothing to send). Only its attempt is written.
func (s *Service) kindChanged(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time) (Result, error) {
	var msg string
	if op.Provider != "" {
		msg = fmt.Sprintf("tool %s was changed from provider %s to a local effect since key %q was recorded: its operation (state %s) was recorded with provider %s, where its effect would be, so it is neither made here as a local effect (the effect could happen twice) nor sent to %s by a tool that no longer names it; nothing was sent or changed",
			p.Tool.Name, op.Provider, op.Key, op.State, op.Provider, op.Provider)
	} else {
		msg = fmt.Sprintf("tool %s was changed from a local effect to provider %s since key %q was recorded: its operation (state %s) was recorded as local, applied or not by its own transaction, so it is not sent to a provider; nothing was sent or changed",
			p.Tool.Name, p.Tool.Effect.Provider, op.Key, op.State)
	}
	class := model.ClassConflict
	if Unsettled(op) {
		class = model.ClassUnknown
		msg += fmt.Sprintf(" — its outcome is not settled (it may have taken effect): stop, a person must reconcile it (retrysafe ops show%s --tenant %s --key %s)",
			s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
	} else {
		msg += fmt.Sprintf(" — a new action under the tool as it is now takes a new key (retrysafe ops show%s --tenant %s --key %s tells what this one holds)",
			s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
	}
	if err := s.attempt(tx, op, p, start, model.OutcomeConflict, "", msg); err != nil {
		return Result{}, err
	}
	return Result{Class: class, Outcome: model.OutcomeConflict, State: op.State, Message: msg, Op: op}, nil
}

// createLocal makes a new local operation the quick way, when the driver's
// transaction offers it (store.LocalCreator) and the effect is one of the
// registry's tables: the operation, its effect and its receipt in two
// inserts that happen only if the key has neither an operation nor a
// tombstone — no read of the key first, no update of the receipt after.
// done false means nothing was written: CallLocalTx then decides, as
// always. The rows are those applyLocal writes for a new operation.
func (s *Service) createLocal(tx store.Tx, p *model.Prepared, start time.Time) (Result, bool, error) {
	lc, ok := tx.(store.LocalCreator)
	if !ok || p.Tool.Effect.Table == model.TableCustom || p.Unchecked != nil {
		return Result{}, false, nil
	}
	op := s.newOperation(tx, p)
	op.State, op.ClaimNo = model.StateApplied, 1
	op.ExpiresAt = tx.Now().Add(s.ReplayWindow)
	var rc model.Receipt
	e := store.LocalEffect{Table: p.Tool.Effect.Table, Tool: op.Tool, Tenant: op.Tenant, Text: p.Tool.SummaryText(p.Decoded), Args: p.Canonical}
	created, err := lc.CreateLocal(op, e, func(result json.RawMessage) ([]byte, error) {
		rc = model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, Result: result}
		return json.Marshal(rc)
	})
	if err != nil || !created {
		return Result{}, false, err
	}
	if err := s.attempt(tx, op, p, start, model.OutcomeCreated, "", ""); err != nil {
		return Result{}, false, err
	}
	return Result{Class: model.ClassDone, Outcome: model.OutcomeCreated, Receipt: &rc, State: op.State, Op: op}, true, nil
}

// unseen asks the driver whether the key is new to the ledger — no
// operation, no tombstone — before anything else: a new key needs no replay
// read, and its call goes straight to one durable transaction. A
// long-running process asks its memory (store.Recaller: no read at all),
// else a driver that can tell cheaply reads (store.Peeker). It is only a
// hint (false when the driver cannot tell): the transaction reads again
// and decides either way.
func (s *Service) unseen(ctx context.Context, p *model.Prepared) bool {
	if rc, ok := s.Store.(store.Recaller); ok {
		if used, ok := rc.Recalls(p.Tenant, p.Key); ok {
			return !used
		}
	}
	pk, ok := s.Store.(store.Peeker)
	if !ok {
		return false
	}
	seen, err := pk.Seen(ctx, p.Tenant, p.Key)
	return err == nil && !seen
}

// callTx runs a call's transaction. A key the ledger has seen usually only
// gets an attempt row (a replay, a conflict, a refusal): the cheap
// attempt-only transaction, which turns durable if it must write more. A
// fresh key (see unseen) is a new operation: straight to one durable
// transaction, not a relaxed one that stops at its first write and runs
// again. fresh is passed on to fn, which must still check (as createLocal's
// insert does).
func (s *Service) callTx(ctx context.Context, fresh bool, fn func(tx store.Tx, fresh bool) error) error {
	if fresh {
		return s.Store.WithTx(ctx, func(tx store.Tx) error { return fn(tx, true) })
	}
	return s.Store.WithAttemptTx(ctx, func(tx store.Tx) error { return fn(tx, false) })
}

// fastReplay answers a replay of a final operation — applied or failed,
// the same fingerprint, inside its replay window: what existing answers
// for it — from the driver's read side (store.Replayer), and records its
// attempt row only if the operation is still exactly as read. ok false
// means nothing was written and nothing answered: every other case, a
// driver without the fast path, and an operation that moved on since it
// was read (a decision, a sweep, another process) take the full path,
// which reads again under the write lock. points says whether the full
// path would pass the before- and after-commit points (a local call's
// does).
func (s *Service) fastReplay(ctx context.Context, p *model.Prepared, start time.Time, points bool) (Result, bool) {
	rp, ok := s.Store.(store.Replayer)
	if !ok {
		return Result{}, false
	}
	op, err := rp.ReplayPeek(ctx, p.Tenant, p.Key)
	if err != nil || !p.SameRequest(op.Tool, op.PayloadVersion, op.Fingerprint) || (op.State != model.StateApplied && op.State != model.StateFailed) ||
		(op.State == model.StateFailed && op.Contradicted) {
		return Result{}, false
	}
	if !op.ExpiresAt.IsZero() && !s.Store.Now().Before(op.ExpiresAt) {
		return Result{}, false // expired: the full path records and says so
	}
	rc, err := s.receipts.decode(op.Receipt)
	if err != nil {
		return Result{}, false // damaged: the full path says so
	}
	rc.Status = "replayed"
	class, msg := model.ClassDone, ""
	if op.State == model.StateFailed {
		class, msg = model.ClassFailed, failedReplayMsg
	}
	if points {
		s.at(PointBeforeCommit)
	}
	a := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeReplayed, Fingerprint: p.Fingerprint, TraceID: p.TraceID,
		WorkerID: p.WorkerID, Error: msg, Duration: s.Store.Now().Sub(start)}
	if ok, err := rp.AppendReplay(ctx, op, a); err != nil || !ok {
		return Result{}, false
	}
	if points {
		s.at(PointAfterCommit)
	}
	return Result{Class: class, Outcome: model.OutcomeReplayed, State: op.State, Message: msg, Op: op, Receipt: &rc}, true
}

// failedContradictedMsg is what a call of a failed operation the provider
// says it applied is told.
func (s *Service) failedContradictedMsg(op *model.Operation) string {
	return fmt.Sprintf("%q was rejected by the provider, but a provider answer (or lookup) says it was applied (flagged contradicted): the effect may have happened — stop, a person must reconcile it (retrysafe ops show%s --tenant %s --key %s)",
		op.Key, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
}

// failedReplayMsg is what a replay of a failed operation says.
const failedReplayMsg = "the provider rejected this request; the stored failure is replayed"

func (s *Service) newOperation(tx store.Tx, p *model.Prepared) *model.Operation {
	return &model.Operation{
		Tenant: p.Tenant, Key: p.Key, Tool: p.Tool.Name, PayloadVersion: p.PayloadVersion,
		Args: p.Canonical, Summary: p.Summary, Fingerprint: p.Fingerprint,
	}
}

func (s *Service) applyLocal(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time, isNew bool) (Result, error) {
	var result json.RawMessage
	var err error
	if p.Tool.Effect.Table == model.TableCustom {
		result, err = s.applyCustom(tx, op, p)
	} else {
		result, err = tx.InsertLocalEffect(store.LocalEffect{Table: p.Tool.Effect.Table, Tool: op.Tool, Tenant: op.Tenant,
			OperationID: op.ID, Text: p.Tool.SummaryText(p.Decoded), Args: p.Canonical})
	}
	if err != nil {
		return Result{}, err
	}
	rc := model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, Result: result}
	b, err := json.Marshal(rc)
	if err != nil {
		return Result{}, err
	}
	if isNew {
		if err := tx.SetReceipt(op.ID, b); err != nil {
			return Result{}, err
		}
		op.Receipt = b
	} else {
		from, ver := op.State, op.Version
		op.State, op.Receipt, op.ClaimNo = model.StateApplied, b, op.ClaimNo+1
		op.ExpiresAt = tx.Now().Add(s.ReplayWindow)
		if err := tx.UpdateOperation(op, from, ver); err != nil {
			return Result{}, err
		}
	}
	if err := s.attempt(tx, op, p, start, model.OutcomeCreated, "", ""); err != nil {
		return Result{}, err
	}
	return Result{Class: model.ClassDone, Outcome: model.OutcomeCreated, Receipt: &rc, State: op.State, Op: op}, nil
}

func (s *Service) attempt(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time, outcome model.Outcome, ref, errText string) error {
	a := &model.Attempt{OperationID: op.ID, Outcome: outcome, Fingerprint: p.Fingerprint, TraceID: p.TraceID,
		WorkerID: p.WorkerID, ProviderRef: ref, Error: errText, StartedAt: tx.Now(), Duration: s.Store.Now().Sub(start)}
	return tx.InsertAttempt(a)
}

// tombstoned answers a key whose operation was compacted: expired, reconcile.
func (s *Service) tombstoned(tx store.Tx, p *model.Prepared) (Result, bool, error) {
	ts, err := tx.GetTombstone(p.Tenant, p.Key)
	if model.IsCode(err, model.CodeNotFound) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	return TombstoneResult(p.Key, ts), true, nil
}

// TombstoneResult is the answer for a key whose operation was compacted
// into ts: expired, reconcile — a call's, and the gateway's read of it.
func TombstoneResult(key string, ts *model.Tombstone) Result {
	return Result{Class: model.ClassExpired, Outcome: model.OutcomeExpired, State: ts.FinalState,
		// ts.ExpiredAt is when the sweep compacted the receipt (the end of
		// its replay window came earlier, and is not kept).
		Message: fmt.Sprintf("key %q is past its replay window (state %s) and was compacted on %s; its receipt is no longer kept — reconcile the outcome, do not retry under a fresh key",
			key, ts.FinalState, ts.ExpiredAt.Format(time.RFC3339))}
}

// existing classifies a call on a key that has an operation. claim is true
// when this call may take the operation (not_applied, authorized, or an
// in_progress whose lease ended) — the caller decides what claiming means.
func (s *Service) existing(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time) (Result, bool, error) {
	rec := func(outcome model.Outcome, class model.Class, msg string) (Result, bool, error) {
		if err := s.attempt(tx, op, p, start, outcome, "", msg); err != nil {
			return Result{}, false, err
		}
		return Result{Class: class, Outcome: outcome, State: op.State, Message: msg, Op: op}, false, nil
	}
	if !p.SameRequest(op.Tool, op.PayloadVersion, op.Fingerprint) {
		return rec(model.OutcomeConflict, model.ClassConflict, s.conflictMsg(op, p))
	}
	now := tx.Now()
	if (op.State == model.StateApplied || op.State == model.StateFailed) && !op.ExpiresAt.IsZero() && !now.Before(op.ExpiresAt) {
		return rec(model.OutcomeExpired, model.ClassExpired, fmt.Sprintf(
			"key %q is past its replay window (ended %s, state %s) — reconcile the outcome, do not retry under a fresh key",
			op.Key, op.ExpiresAt.Format(time.RFC3339), op.State))
	}
	if op.State == model.StateFailed && op.Contradicted {
		// The provider said it applied it (a late answer, a lookup that
		// found it): "rejected for good" is not the truth, and the
		// effect may have happened — stop, a person decides.
		return rec(model.OutcomeRefused, model.ClassUnknown, s.failedContradictedMsg(op))
	}
	switch op.State {
	case model.StateApplied, model.StateFailed:
		var rc model.Receipt
		if err := json.Unmarshal(op.Receipt, &rc); err != nil {
			return Result{}, false, fmt.Errorf("stored receipt of %q is damaged: %w", op.Key, err)
		}
		rc.Status = "replayed"
		class := model.ClassDone
		msg := ""
		if op.State == model.StateFailed {
			class, msg = model.ClassFailed, failedReplayMsg
		}
		r, _, err := rec(model.OutcomeReplayed, class, msg)
		r.Receipt = &rc
		return r, false, err
	case model.StateUnknown:
		return rec(model.OutcomeRefused, model.ClassUnknown, fmt.Sprintf(
			"outcome of %q is unknown (the provider may or may not have applied it); stop — a person must reconcile it (retrysafe ops show%s --tenant %s --key %s)",
			op.Key, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key)))
	case model.StateSuperseded:
		newKey, err := tx.SupersedingKey(op.ID)
		if err != nil {
			return Result{}, false, err
		}
		r, _, err := rec(model.OutcomeRefused, model.ClassSuperseded, fmt.Sprintf(
			"key %q was superseded by an operator; use the new key %q", op.Key, newKey))
		r.NewKey = newKey
		return r, false, err
	case model.StateInProgress:
		if now.Before(op.LeaseUntil) {
			return rec(model.OutcomeInProgress, model.ClassInProgress, fmt.Sprintf(
				"key %q is in progress elsewhere (lease held by %s until %s); retry later with the same key",
				op.Key, orDash(op.LeaseOwner), op.LeaseUntil.Format(time.RFC3339)))
		}
		return Result{}, true, nil
	case model.StateNotApplied, model.StateAuthorized:
		return Result{}, true, nil
	}
	return Result{}, false, fmt.Errorf("operation %q is in unexpected state %q", op.Key, op.State)
}

// Unsettled reports whether op's first request may have taken effect
// with no settled answer yet: in progress, unknown, or flagged
// contradicted (a provider said "applied" against the ledger's word).
// A conflict on such a key must not advise a new key: the new key would
// make the effect again if the first request did make it.
func Unsettled(op *model.Operation) bool {
	if op == nil {
		return false
	}
	return op.State == model.StateInProgress || op.State == model.StateUnknown ||
		op.Contradicted && op.State != model.StateApplied
}

// conflictMsg is the answer for a key first used with other arguments.
func (s *Service) conflictMsg(op *model.Operation, p *model.Prepared) string {
	head := fmt.Sprintf("key %q was first used with different arguments (%s, payload v%d, fingerprint %.12s; this request has %.12s, payload v%d); nothing was changed",
		op.Key, op.Tool, op.PayloadVersion, op.Fingerprint, p.Fingerprint, p.PayloadVersion)
	original := "the original arguments"
	if op.Tool != p.Tool.Name {
		// A tool renamed in the config, or another tool named: the
		// arguments may be the very same bytes.
		args := "with the same arguments"
		if !bytes.Equal(op.Args, p.Canonical) {
			args = "and different arguments"
		}
		head = fmt.Sprintf("key %q was first used with another tool: %s (payload v%d, fingerprint %.12s); this request names tool %s %s (payload v%d, fingerprint %.12s); nothing was changed",
			op.Key, op.Tool, op.PayloadVersion, op.Fingerprint, p.Tool.Name, args, p.PayloadVersion, p.Fingerprint)
		original = "the original tool and arguments"
	}
	if Unsettled(op) {
		return fmt.Sprintf("%s — the first request's outcome is not settled (state %s: it may have taken effect): resend %s under this key, and use a new key only after a person has reconciled it (retrysafe ops show%s --tenant %s --key %s)",
			head, op.State, original, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
	}
	return head + " — use " + original + ", or a new key for a new action"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// claim is transaction A's outcome for an external call.
type claim struct {
	opID, attemptID, claimNo int64
	prov                     provider.Provider
	tenant, key              string
	downstreamKey            string
	tool                     string
	args                     json.RawMessage
	// leaseUntil is when the claim's lease ends, on the store's clock.
	leaseUntil time.Time
	// notSent: the lease ended before the request could leave.
	notSent bool
	// resend: the claim was taken from in_progress (a released claim, or
	// one whose lease ended): an earlier request of the operation may have
	// reached the provider with no definite answer, so "nothing left" or
	// "not taken" speaks of this request only.
	resend bool
	// earlierAnswered: of a resend, every earlier request of the
	// operation got a definite answer (busy, not applied) — the claim was
	// released after a busy answer, not a lost reply (earlierAnswered).
	earlierAnswered bool
	// sentNothing says why nothing left this process ("" if the request
	// was sent): set by dispatch, for the sweep's report.
	sentNothing string
}

func (s *Service) callExternal(ctx context.Context, p *model.Prepared, opt CallOptions) (Result, error) {
	// Durations are read on the store's clock, like every time the ledger
	// records: a ledger built on a played clock (the demo) stays coherent.
	start := s.Store.Now()
	name := opt.Provider
	if name == "" {
		name = p.Tool.Effect.Provider
	}
	prov, err := s.Providers.Get(name)
	if err != nil {
		err = model.Errorf(model.CodeInvalid, "%v", err)
		return errorResult(err), err
	}
	fresh := s.unseen(ctx, p)
	if !fresh {
		if r, ok := s.fastReplay(ctx, p, start, false); ok {
			return r, nil
		}
	}
	var (
		res Result
		cl  *claim
	)
	err = s.callTx(ctx, fresh, func(tx store.Tx, _ bool) error {
		res, cl = Result{}, nil
		op, err := tx.GetOperation(p.Tenant, p.Key)
		if model.IsCode(err, model.CodeNotFound) {
			if r, done, err := s.tombstoned(tx, p); done || err != nil {
				res = r
				return err
			}
			if r, done, err := s.refuseUnchecked(nil, p); done {
				res = r
				return err
			}
			if err := s.refuseDispatch(name); err != nil {
				return err
			}
			dk, err := downstreamKey(tx, p.Tenant, p.Key)
			if err != nil {
				return err
			}
			op = s.newOperation(tx, p)
			op.State, op.ClaimNo = model.StateInProgress, 1
			op.Provider, op.DownstreamKey = name, dk
			op.LeaseOwner, op.LeaseUntil = workerOr(p.WorkerID), tx.Now().Add(s.Lease)
			s.stampClaim(op, prov)
			if err := tx.InsertOperation(op); err != nil {
				return err
			}
			cl, err = s.recordClaim(tx, op, p, start, model.OutcomeDispatched)
			return err
		}
		if err != nil {
			return err
		}
		r, mayClaim, err := s.existing(tx, op, p, start)
		if err != nil || !mayClaim {
			res = r
			return err
		}
		if op.Provider == "" {
			// Recorded as a local operation, the tool external only
			// since: nothing of it is ever sent.
			res, err = s.kindChanged(tx, op, p, start)
			return err
		}
		if r, done, err := s.holdClaim(tx, op, p, start, ""); done || err != nil {
			res = r
			return err
		}
		if r, done, err := s.refuseUnchecked(op, p); done {
			res = r
			return err
		}
		prov, perr := s.Providers.Get(op.Provider)
		if perr != nil {
			return model.Errorf(model.CodeInvalid, "operation %q uses provider %q, which is not configured here", op.Key, op.Provider)
		}
		if err := s.refuseDispatch(op.Provider); err != nil {
			return err
		}
		if r, done, err := s.waitHold(tx, op); done || err != nil {
			res = r
			return err
		}
		resend := op.State == model.StateInProgress
		from, ver := op.State, op.Version
		op.State, op.ClaimNo = model.StateInProgress, op.ClaimNo+1
		op.LeaseOwner, op.LeaseUntil = workerOr(p.WorkerID), tx.Now().Add(s.Lease)
		if op.DownstreamKey == "" {
			// Recorded before downstream keys were: the key it was
			// sent under then.
			op.DownstreamKey = DownstreamKey("", op.Tenant, op.Key)
		}
		s.stampClaim(op, prov)
		if err := tx.UpdateOperation(op, from, ver); err != nil {
			return err
		}
		cl, err = s.recordClaim(tx, op, p, start, model.OutcomeDispatched)
		if cl != nil {
			cl.resend = resend
		}
		return err
	})
	if err != nil {
		return errorResult(err), err
	}
	if cl == nil {
		return res, nil
	}
	s.at(PointAfterClaim)
	return s.dispatch(ctx, cl, opt.Faults, start)
}

// holdClaim answers a call that may take op (existing's claim), an
// operation recorded with a provider, when its claim must be held back:
// a contradicted not_applied a provider that ignores downstream keys
// would apply again, an authorized key whose old one was found applied,
// or an in_progress whose lease ended that is not sent again — it becomes
// unknown. local, when set, is why this call sends nothing at all (its
// tool is a local effect now): it stands for the provider's reason, as
// if the provider ignored downstream keys. done false: nothing was
// written, and it may be claimed.
func (s *Service) holdClaim(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time, local string) (Result, bool, error) {
	why, _ := s.notResendable(op)
	if local != "" {
		// Whatever the provider, or whether this process has it at all
		// (a call of a local tool opens none), this call sends nothing.
		why = local
	}
	if op.State == model.StateNotApplied && op.Contradicted && why != "" {
		// A definite provider answer said "applied" against this
		// not-applied: dispatching again to a provider that ignores
		// downstream keys (here, or where the claim was made) could
		// apply it a second time.
		msg := s.contradictedMsg(op, why)
		if err := s.attempt(tx, op, p, start, model.OutcomeRefused, "", msg); err != nil {
			return Result{}, false, err
		}
		return Result{Class: model.ClassUnknown, Outcome: model.OutcomeRefused, State: op.State, Message: msg, Op: op}, true, nil
	}
	if op.State == model.StateAuthorized && !op.Contradicted && op.SupersedesID != 0 {
		// A lookup of the key it replaces that found the effect after
		// this key was authorized: hold it, as a late "applied" does
		// (holdSuccessor). Look holds it itself, in commit order, as
		// it records the finding; this catches a lookup recorded
		// before it did. One found before was overridden deliberately.
		found, err := foundSince(tx, op.SupersedesID, op.CreatedAt)
		if err != nil {
			return Result{}, false, err
		}
		if found {
			from, ver := op.State, op.Version
			op.Contradicted = true
			if err := tx.UpdateOperation(op, from, ver); err != nil {
				return Result{}, false, err
			}
		}
	}
	if op.State == model.StateAuthorized && op.Contradicted {
		// The key it replaces was applied after all (holdSuccessor):
		// its own downstream key is new, so no provider would know
		// it for the same effect.
		msg := s.supersededAppliedMsg(op)
		if err := s.attempt(tx, op, p, start, model.OutcomeRefused, "", msg); err != nil {
			return Result{}, false, err
		}
		return Result{Class: model.ClassUnknown, Outcome: model.OutcomeRefused, State: op.State, Message: msg, Op: op}, true, nil
	}
	if op.State == model.StateInProgress && why != "" {
		// The lease ended with no result and a re-dispatch could apply
		// twice (or is not made at all): the outcome is unknown, and
		// stays so until a person says.
		r, err := s.expireLease(tx, op, workerOr(p.WorkerID), p.TraceID, why)
		return r, err == nil, err
	}
	return Result{}, false, nil
}

// waitHold answers a call that would send op again while its provider's
// Retry-After has not passed (op.RetryNotBefore): nothing is sent, and the
// caller is told the wait still left, in whole seconds rounded up — a
// client or model that ignores Retry-After must not make the gateway hammer
// the provider with the operator's credentials. done false: the wait has
// passed (or none was asked), and it may be claimed.
func (s *Service) waitHold(tx store.Tx, op *model.Operation) (Result, bool, error) {
	left := waitLeft(op, tx.Now())
	if left <= 0 {
		return Result{}, false, nil
	}
	msg := fmt.Sprintf("provider %s asked to be left alone until %s (its Retry-After), so %q was not sent again; retry the same key in %d s",
		op.Provider, op.RetryNotBefore.UTC().Format(time.RFC3339), op.Key, int(left/time.Second))
	// No attempt is recorded: nothing was sent, the hold is on the
	// operation (RetryNotBefore), and a client hammering the key for the
	// whole wait would otherwise add a row per call.
	return Result{Class: model.ClassInProgress, Outcome: model.OutcomeInProgress, State: op.State, Message: msg, Op: op, RetryAfter: left}, true, nil
}

// waitLeft is how long op's provider still asked to be left alone at now
// (op.RetryNotBefore), in whole seconds rounded up; 0 when that has passed.
func waitLeft(op *model.Operation, now time.Time) time.Duration {
	if op.RetryNotBefore.IsZero() || !now.Before(op.RetryNotBefore) {
		return 0
	}
	return waitAsked(op.RetryNotBefore.Sub(now))
}

// cannotDispatch says why provider name cannot dispatch from this process
// at all — an HTTP provider whose dispatch reads a ${NAME} not set here (a
// sweep from cron, serve under systemd) — "" when it can, or cannot tell
// (provider.Checker is optional). Such a dispatch is refused before
// anything is claimed or written: claimed, it would only record "not
// sent", and a re-send answered so must not read as "not applied".
func (s *Service) cannotDispatch(name string) string {
	prov, err := s.Providers.Get(name)
	if err != nil {
		return "" // refused where the provider is looked up
	}
	c, ok := prov.(provider.Checker)
	if !ok {
		return ""
	}
	if err := c.CanDispatch(); err != nil {
		return fmt.Sprintf("provider %s cannot dispatch from this process: %v", name, err)
	}
	return ""
}

// ErrCannotDispatch is the cause of a call refused because this process
// cannot dispatch to its provider at all (cannotDispatch): the server's
// configuration, not the request — nothing was written, and the same key
// goes through once it is fixed. Its class is internal (retry later with
// the same key); the gateway answers it 503 /problems/misconfigured.
var ErrCannotDispatch = errors.New("cannot dispatch from this process")

// refuseDispatch is cannotDispatch as a call's refusal (nil: it can).
func (s *Service) refuseDispatch(name string) error {
	if why := s.cannotDispatch(name); why != "" {
		return model.Wrap(model.CodeUnavailable, ErrCannotDispatch, "%s; nothing was sent or written (set it and call again with the same key)", why)
	}
	return nil
}

func workerOr(w string) string {
	if w == "" {
		return "anonymous"
	}
	return w
}

func (s *Service) recordClaim(tx store.Tx, op *model.Operation, p *model.Prepared, start time.Time, outcome model.Outcome) (*claim, error) {
	a := &model.Attempt{OperationID: op.ID, Outcome: outcome, Fingerprint: op.Fingerprint, StartedAt: tx.Now()}
	if p != nil {
		a.TraceID, a.WorkerID = p.TraceID, p.WorkerID
	} else {
		a.WorkerID = "sweep"
	}
	if err := tx.InsertAttempt(a); err != nil {
		return nil, err
	}
	prov, err := s.Providers.Get(op.Provider)
	if err != nil {
		return nil, model.Errorf(model.CodeInvalid, "%v", err)
	}
	return &claim{opID: op.ID, attemptID: a.ID, claimNo: op.ClaimNo, prov: prov, tenant: op.Tenant, key: op.Key,
		downstreamKey: op.DownstreamKey, tool: op.Tool, args: op.Args, leaseUntil: op.LeaseUntil}, nil
}

// expireLease moves an in_progress operation whose lease ended to unknown;
// why it is not sent again (notResendable), "" for the provider ignoring
// downstream keys.
func (s *Service) expireLease(tx store.Tx, op *model.Operation, worker, trace, why string) (Result, error) {
	from, ver := op.State, op.Version
	lease, released := op.LeaseUntil, op.LeaseOwner == LeaseReleased
	op.State, op.LeaseOwner, op.LeaseUntil = model.StateUnknown, "", time.Time{}
	if err := tx.UpdateOperation(op, from, ver); err != nil {
		return Result{}, err
	}
	if why == "" {
		why = fmt.Sprintf("provider %s does not honour downstream keys", op.Provider)
	}
	msg := fmt.Sprintf("lease ended %s with no result recorded; %s, so the outcome is unknown — a person must reconcile it",
		lease.Format(time.RFC3339), why)
	switch {
	case released && !op.RetryNotBefore.IsZero():
		// Released after a busy answer with a Retry-After (finish keeps
		// one only from that answer): the provider's last word was a
		// definite busy, not "no definite answer" (R15 M5). Still
		// unknown: where keys are honoured a 503 counts as busy, and a
		// proxy may answer one after the request arrived
		// (httpapi.DefaultClass); an earlier request may have had no
		// answer at all.
		msg = fmt.Sprintf("claim released %s after provider %s answered busy, asking to be left alone until %s (its Retry-After); %s, so it is not sent again, and a busy answer alone does not prove that nothing under this key took effect (an earlier request's reply may have been lost, and where keys are honoured a 503, which a proxy may answer after the request arrived, counts as busy): the outcome is unknown — a person must reconcile it",
			lease.Format(time.RFC3339), op.Provider, op.RetryNotBefore.UTC().Format(time.RFC3339), why)
	case released:
		// Its result is recorded and the claim was released to be sent
		// again: not "no result". Which answer released it (a lost
		// reply, a busy one without a Retry-After, a re-send answered
		// not sent or nothing applied) is its attempts'.
		msg = fmt.Sprintf("claim released %s, to be sent again under its key, after a request with no definite answer or one the provider did not take (busy, not sent, nothing applied); %s, so the outcome is unknown — a person must reconcile it",
			lease.Format(time.RFC3339), why)
	}
	a := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLeaseExpired, Fingerprint: op.Fingerprint,
		WorkerID: worker, TraceID: trace, Error: msg, StartedAt: tx.Now()}
	if err := tx.InsertAttempt(a); err != nil {
		return Result{}, err
	}
	return Result{Class: model.ClassUnknown, Outcome: model.OutcomeLeaseExpired, State: op.State, Message: msg, Op: op}, nil
}

// providerTimeout is the request timeout provider name names (an http
// provider's configured timeout, "per request, connection to last byte"),
// or 0.
func (s *Service) providerTimeout(name string) time.Duration {
	if prov, err := s.Providers.Get(name); err == nil {
		if rt, ok := prov.(RequestTimeouter); ok && rt.RequestTimeout() > 0 {
			return rt.RequestTimeout()
		}
	}
	return 0
}

// dispatchTimeout is how long a dispatch to provider name waits at most:
// the provider's own request timeout where it names one (the README: "per
// request, connection to last byte" — it used to be cut to
// DispatchTimeout, 10 s), else DispatchTimeout. dispatch cuts it at the
// claim's lease end.
func (s *Service) dispatchTimeout(name string) time.Duration {
	if d := s.providerTimeout(name); d > 0 {
		return d
	}
	return s.DispatchTimeout
}

// earlierAnswered reports whether every request of cl's operation before
// this claim's got a definite answer (busy, not applied): none is left
// dispatched, re-dispatched, timed out or with its lease ended. false
// when the attempts cannot be read (the words stay the cautious ones).
func (s *Service) earlierAnswered(ctx context.Context, cl *claim) bool {
	d, err := s.Store.Detail(ctx, cl.tenant, cl.key)
	if err != nil || d.Operation.ID != cl.opID {
		return false
	}
	for _, a := range d.Attempts {
		if a.ID == cl.attemptID {
			continue
		}
		switch a.Outcome {
		case model.OutcomeDispatched, model.OutcomeRedispatched, model.OutcomeTimedOut, model.OutcomeLeaseExpired, model.OutcomeLateResult:
			return false
		}
	}
	return true
}

// dispatch sends a claimed request and records the answer (transaction B).
func (s *Service) dispatch(ctx context.Context, cl *claim, faults provider.Faults, start time.Time) (Result, error) {
	// The request is sent, and waited for, only while the claim's lease
	// lasts: past it a sweep may make the operation unknown, a lookup find
	// nothing and a person mark it not applied, and the next call sends
	// it again — a request of this claim still on its way would then make
	// the effect a second time. A claim whose lease ended before anything
	// left (a worker paused after its claim) sends nothing. The lease is
	// not stretched to the provider's timeout: a dead worker's claim
	// would hold its key that much longer, and --lease is the operator's.
	// A wait the lease cut short says so (leaseCut).
	full := s.dispatchTimeout(cl.prov.Name())
	timeout := full
	if left := cl.leaseUntil.Sub(s.Store.Now()); left < timeout {
		timeout = left
	}
	var (
		resp provider.Response
		derr error
	)
	defer func() {
		switch {
		case cl.notSent:
			cl.sentNothing = "the claim's lease ended before the request could leave"
		case derr == nil && provider.SentNothing(resp):
			cl.sentNothing = resp.Detail
		}
	}()
	if timeout <= 0 {
		cl.notSent = true
		resp = provider.Response{Status: provider.NotApplied, Detail: fmt.Sprintf(
			"not sent: the claim's lease ended (%s) before the request could leave", cl.leaseUntil.Format(time.RFC3339Nano))}
	} else {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		resp, derr = cl.prov.Dispatch(dctx, provider.Request{DownstreamKey: cl.downstreamKey, Tool: cl.tool, Args: cl.args, Faults: faults})
		if derr != nil && timeout < full && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			// "No answer within the timeout" would read as the provider's
			// timeout, which it never had.
			derr = fmt.Errorf("%w (waited only until the claim's lease ended, %s: the lease (%s) is shorter than provider %s's timeout (%s) — give the lease more than the timeout)",
				derr, cl.leaseUntil.UTC().Format(time.RFC3339), s.Lease, cl.prov.Name(), full)
		}
		cancel()
	}
	if derr != nil && !errors.Is(derr, provider.ErrAmbiguous) {
		derr = fmt.Errorf("%w: %v", provider.ErrAmbiguous, derr)
	}
	s.at(PointAfterDispatch)
	// The caller may have given up; the answer must still be written.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	res, err := s.finish(rctx, cl, resp, derr, start)
	if err != nil {
		// The request went out and whatever came back is not in the
		// ledger: the outcome is unknown to the caller, whatever the
		// reason the write failed. Retrying is not the answer a runner
		// should hear (a provider that ignores downstream keys would
		// apply it twice once the lease ends); a person reconciles.
		said := string(resp.Status)
		if derr != nil {
			said = "no definite answer (" + derr.Error() + ")"
		}
		res = Result{Class: model.ClassUnknown, Outcome: model.OutcomeDispatched, Message: fmt.Sprintf(
			"the request was sent to %s and it said %s, but that could not be recorded: %v — stop; a person must reconcile it (retrysafe ops check%s --tenant %s --key %s)",
			cl.prov.Name(), said, err, s.HintFlags, textsafe.ShellWord(cl.tenant), textsafe.ShellWord(cl.key))}
	}
	return res, err
}

func (s *Service) finish(ctx context.Context, cl *claim, resp provider.Response, derr error, start time.Time) (Result, error) {
	var res Result
	if cl.resend && derr == nil && (resp.Status == provider.Busy || resp.Status == provider.NotApplied) {
		cl.earlierAnswered = s.earlierAnswered(ctx, cl)
	}
	err := s.Store.WithTx(ctx, func(tx store.Tx) error {
		op, err := tx.GetOperationByID(cl.opID)
		if err != nil {
			return err
		}
		a := &model.Attempt{ID: cl.attemptID, ProviderRef: resp.Ref, Duration: s.Store.Now().Sub(start)}
		if op.State != model.StateInProgress || op.ClaimNo != cl.claimNo {
			res, err = s.lateResult(tx, op, a, resp, derr, cl)
			return err
		}
		from, ver := op.State, op.Version
		op.LeaseOwner, op.LeaseUntil = "", time.Time{}
		// The provider's wait is this answer's: any other answer clears
		// an earlier one.
		op.RetryNotBefore = time.Time{}
		switch {
		case derr != nil && cl.prov.HonoursKeys():
			// Safe to send again under the same downstream key: release the
			// claim now so the next call (or sweep) re-dispatches at once.
			op.LeaseOwner, op.LeaseUntil = LeaseReleased, tx.Now()
			a.Outcome, a.Error = model.OutcomeTimedOut, derr.Error()
			res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: fmt.Sprintf(
				"%v; provider %s honours downstream keys, so retrying the same key re-dispatches safely", derr, cl.prov.Name())}
		case derr != nil:
			op.State = model.StateUnknown
			a.Outcome, a.Error = model.OutcomeTimedOut, derr.Error()
			res = Result{Class: model.ClassUnknown, Outcome: a.Outcome, Message: fmt.Sprintf(
				"%v; the provider may or may not have applied it — stop, a person must reconcile it (retrysafe ops check%s --tenant %s --key %s)", derr, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))}
		case resp.Status == provider.Applied:
			rc := model.Receipt{Status: "created", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, ProviderRef: resp.Ref}
			rc.Result, _ = json.Marshal(map[string]string{"provider": cl.prov.Name(), "provider_ref": resp.Ref, "status": "applied"})
			op.Receipt, _ = json.Marshal(rc)
			op.State, op.ProviderRef, op.ExpiresAt = model.StateApplied, resp.Ref, tx.Now().Add(s.ReplayWindow)
			// A contradicted not_applied retried through a provider that
			// honours keys: its answer agrees with the late one, and the
			// ledger now does too. Left flagged, applied and contradicted
			// would read "a later answer says it was not" and offer a new
			// key — a second effect.
			op.Contradicted = false
			a.Outcome = model.OutcomeApplied
			res = Result{Class: model.ClassDone, Outcome: model.OutcomeCreated, Receipt: &rc}
		case resp.Status == provider.Rejected:
			rc := model.Receipt{Status: "failed", Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, ProviderRef: resp.Ref}
			rc.Result, _ = json.Marshal(map[string]string{"provider": cl.prov.Name(), "error": resp.Detail, "status": "rejected"})
			op.Receipt, _ = json.Marshal(rc)
			op.State, op.ExpiresAt = model.StateFailed, tx.Now().Add(s.ReplayWindow)
			a.Outcome, a.Error = model.OutcomeFailed, resp.Detail
			res = Result{Class: model.ClassFailed, Outcome: a.Outcome, Receipt: &rc, Message: "the provider rejected the request: " + resp.Detail}
		case (resp.Status == provider.Busy || resp.Status == provider.NotApplied) && cl.resend:
			// An earlier request of this operation may have reached the
			// provider and was never answered definitely: this answer
			// speaks of this request only, so the operation is not
			// not_applied (from there any config would send it again — a
			// second effect where the provider does not really dedupe).
			said := fmt.Sprintf("provider %s did not apply this request (%s)", cl.prov.Name(), resp.Detail)
			a.Outcome, a.Error = model.OutcomeNotApplied, resp.Detail
			if resp.Status == provider.Busy {
				said = fmt.Sprintf("provider %s is busy (%s)%s", cl.prov.Name(), resp.Detail, retryAfter(resp.RetryAfter))
				a.Outcome = model.OutcomeInProgress
			}
			earlier := "an earlier request under this key may have reached the provider with no definite answer (its reply lost, its worker gone): that request's outcome is still unknown"
			if cl.earlierAnswered {
				// Not "may have reached it with no definite answer":
				// every earlier request was answered busy or not applied.
				earlier = "the claim was released after a busy answer, and every earlier request under this key was answered definitely (busy or not applied): none of them is known to have taken effect"
			}
			if cl.prov.HonoursKeys() && op.ClaimHonoursKeys != nil && *op.ClaimHonoursKeys {
				// Sending it again under the same key stays safe: the
				// claim stays open, released, for the next call (or sweep).
				op.LeaseOwner, op.LeaseUntil = LeaseReleased, tx.Now()
				res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: fmt.Sprintf(
					"%s; %s — provider %s honours downstream keys, so the operation stays in progress: retry the same key", said, earlier, cl.prov.Name())}
				break
			}
			op.State = model.StateUnknown
			res = Result{Class: model.ClassUnknown, Outcome: a.Outcome, Message: fmt.Sprintf(
				"%s; %s, and provider %s is not known here to honour downstream keys — stop, a person must reconcile it (retrysafe ops check%s --tenant %s --key %s)",
				said, earlier, cl.prov.Name(), s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))}
		case resp.Status == provider.Busy && cl.prov.HonoursKeys():
			// The provider will answer the same downstream key with one
			// result: keep the claim open, released, so the next call (or
			// sweep) sends it again under that key.
			op.LeaseOwner, op.LeaseUntil = LeaseReleased, tx.Now()
			a.Outcome, a.Error = model.OutcomeInProgress, resp.Detail
			res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: fmt.Sprintf(
				"provider %s is busy (%s)%s; retry the same key", cl.prov.Name(), resp.Detail, retryAfter(resp.RetryAfter))}
		case resp.Status == provider.Busy:
			// It did not take the request: nothing was applied, and the
			// same key may try again.
			op.State = model.StateNotApplied
			a.Outcome, a.Error = model.OutcomeNotApplied, resp.Detail
			res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: fmt.Sprintf(
				"provider %s did not take it now (%s)%s; retry the same key", cl.prov.Name(), resp.Detail, retryAfter(resp.RetryAfter))}
		case resp.Status == provider.NotApplied && cl.notSent && cl.prov.HonoursKeys():
			// Nothing left, and sending it again under the same key is
			// safe: the claim is released, as for a busy provider, so
			// the next call (or sweep) sends it at once.
			op.LeaseOwner, op.LeaseUntil = LeaseReleased, tx.Now()
			a.Outcome, a.Error = model.OutcomeInProgress, resp.Detail
			res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: resp.Detail + "; retry the same key"}
		case resp.Status == provider.NotApplied:
			op.State = model.StateNotApplied
			a.Outcome, a.Error = model.OutcomeNotApplied, resp.Detail
			res = Result{Class: model.ClassInProgress, Outcome: a.Outcome, Message: fmt.Sprintf(
				"the provider did not apply it (%s); retry the same key", resp.Detail)}
		default:
			return fmt.Errorf("provider %s answered with unknown status %q", cl.prov.Name(), resp.Status)
		}
		if derr == nil && resp.Status == provider.Busy && res.Class == model.ClassInProgress {
			// It stays to be sent again (released, or not_applied):
			// never sooner than the provider asked (see waitHold).
			if d := waitAsked(resp.RetryAfter); d > 0 {
				op.RetryNotBefore = tx.Now().Add(d).UTC().Truncate(time.Millisecond)
			}
		}
		if err := tx.UpdateOperation(op, from, ver); err != nil {
			return err
		}
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		res.State, res.Op = op.State, op
		if derr == nil && resp.Status == provider.Busy && res.Class == model.ClassInProgress {
			res.RetryAfter = waitAsked(resp.RetryAfter)
		}
		return nil
	})
	if err != nil {
		return errorResult(err), err
	}
	return res, nil
}

// lateResult records a provider answer that arrived after its claim moved
// on (a sweep, a decision, another claim). It is never dropped: the attempt
// keeps it, and if it disagrees with what the ledger now says the operation
// is flagged contradicted for a person to look at.
//
// A claim that sent nothing (its lease ended first: cl.notSent) has no
// provider answer at all, so it neither contradicts nor is evidence —
// another claim (a sweep's re-dispatch) may well have applied it. And an
// answer that the request was not applied (rejected, not taken) speaks of
// its own request only: it contradicts "applied" only if no later claim
// was made — whose request may be the one applied. An "applied" names an
// effect, whichever claim's.
func (s *Service) lateResult(tx store.Tx, op *model.Operation, a *model.Attempt, resp provider.Response, derr error, cl *claim) (Result, error) {
	honours, notSent := cl.prov.HonoursKeys(), cl.notSent
	said := "provider said " + string(resp.Status)
	if derr != nil {
		said = "provider said no definite answer (" + derr.Error() + ")"
	}
	if notSent {
		said = resp.Detail
	}
	a.Outcome = model.OutcomeLateResult
	a.Error = fmt.Sprintf("%s after the operation had moved to %s", said, op.State)
	if err := tx.UpdateAttempt(a); err != nil {
		return Result{}, err
	}
	definite := derr == nil && !notSent
	contradicts := definite && contradiction(op.State, resp.Status) &&
		(resp.Status == provider.Applied || op.ClaimNo == cl.claimNo)
	// A definite answer for an operation still waiting on a person is new
	// evidence: it goes on the operation (its reference, a new version), so
	// a decision taken on the screen from before it is refused as stale.
	// An in_progress one whose claim moved on (another claim since) may be
	// waiting on a person too (Unheld: a decision is legal from it).
	evidence := definite && resp.Status != provider.Busy && (op.State == model.StateUnknown || op.State == model.StateInProgress)
	if (contradicts && !op.Contradicted) || evidence {
		from, ver := op.State, op.Version
		if contradicts {
			op.Contradicted = true
		}
		if evidence && resp.Status == provider.Applied && op.ProviderRef == "" {
			op.ProviderRef = resp.Ref
		}
		if err := tx.UpdateOperation(op, from, ver); err != nil {
			return Result{}, err
		}
		if contradicts && resp.Status == provider.Applied && op.State == model.StateSuperseded && op.SupersededByID != 0 {
			if err := holdSuccessor(tx, op); err != nil {
				return Result{}, err
			}
		}
		if resp.Status == provider.Applied {
			// The provider's own answer that it applied the call is as
			// strong as a lookup that found it (a provider never takes a
			// delivery back), and is recorded as one: "has it" then binds
			// every path to a decision — the console, ops resolve, ops
			// supersede, a bulk "not applied" — by the one rule
			// (LatestConclusiveFinding), and shows as the operation's
			// finding. A reference-less answer included, which leaves no
			// other mark on the operation.
			f := &model.Attempt{OperationID: op.ID, Outcome: model.OutcomeLookup, Fingerprint: op.Fingerprint,
				WorkerID: LateResultBy, ProviderRef: resp.Ref, Finding: model.FindingHasIt, StartedAt: tx.Now(),
				Detail: clip(fmt.Sprintf("%s answered \"applied\" to a dispatch after the operation had moved to %s", op.Provider, from))}
			if err := tx.InsertAttempt(f); err != nil {
				return Result{}, err
			}
		}
	}
	res := Result{Outcome: model.OutcomeLateResult, State: op.State, Op: op, Message: a.Error}
	switch op.State {
	case model.StateApplied:
		var rc model.Receipt
		if json.Unmarshal(op.Receipt, &rc) == nil {
			rc.Status = "replayed"
			res.Receipt = &rc
		}
		res.Class = model.ClassDone
	case model.StateFailed:
		res.Class = model.ClassFailed
		if op.Contradicted {
			// This request may be the one applied (existing).
			res.Class = model.ClassUnknown
		}
	case model.StateNotApplied:
		res.Class = model.ClassInProgress
		if op.Contradicted && !honours {
			// Retrying would be refused (see callExternal): stop instead.
			res.Class = model.ClassUnknown
		}
	case model.StateInProgress, model.StateAuthorized:
		res.Class = model.ClassInProgress
	case model.StateSuperseded:
		res.Class = model.ClassSuperseded
		res.NewKey, _ = tx.SupersedingKey(op.ID)
	default:
		res.Class = model.ClassUnknown
	}
	if contradicts {
		res.Message += "; the operation is flagged contradicted for an operator"
	}
	return res, nil
}

// holdSuccessor flags the new key an operator authorized in place of
// old (superseded) contradicted too, while nobody has used it yet: old's
// provider has just said it applied the call after all, and the new key's
// first call would make the effect a second time under another downstream
// key — whether or not the provider honours keys. callExternal refuses it
// until a person decides (LegalFor: mark it applied).
func holdSuccessor(tx store.Tx, old *model.Operation) error {
	n, err := tx.GetOperationByID(old.SupersededByID)
	if model.IsCode(err, model.CodeNotFound) {
		return nil
	}
	if err != nil || n.State != model.StateAuthorized || n.Contradicted {
		return err
	}
	from, ver := n.State, n.Version
	n.Contradicted = true
	return tx.UpdateOperation(n, from, ver)
}

// foundSince reports whether operation id's binding finding is a "has
// it" recorded after since.
func foundSince(tx store.Tx, id int64, since time.Time) (bool, error) {
	f, err := tx.LatestConclusiveFinding(id)
	if err != nil || f == nil {
		return false, err
	}
	return f.Kind == model.FindingHasIt && f.At.After(since), nil
}

// supersededAppliedMsg is the refusal of the first call of a new key whose
// old key the provider said, late, it applied.
func (s *Service) supersededAppliedMsg(op *model.Operation) string {
	return fmt.Sprintf("%q is a new key an operator authorized in place of an operation its provider then said it had applied after all (a late answer, or a lookup; flagged contradicted): sending it would make the effect a second time, so it is not sent — stop, a person must reconcile it: mark it applied with the old key's reference (retrysafe ops show%s --tenant %s --key %s)",
		op.Key, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
}

func (s *Service) contradictedMsg(op *model.Operation, why string) string {
	return fmt.Sprintf("%q was marked not applied, but a provider answer (or lookup) says it was applied (flagged contradicted); %s, so it is not dispatched again — stop, a person must reconcile it (retrysafe ops show%s --tenant %s --key %s)",
		op.Key, why, s.HintFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
}

// contradiction: a definite provider answer that disagrees with the state a
// decision (or another path) put the operation in.
func contradiction(st model.State, said provider.Status) bool {
	if said == provider.Busy {
		return false // "not now" says nothing about an earlier attempt
	}
	applied := said == provider.Applied
	switch st {
	case model.StateApplied:
		return !applied
	case model.StateNotApplied, model.StateSuperseded, model.StateAuthorized, model.StateFailed:
		return applied
	}
	return false
}

// retryAfter is a busy provider's Retry-After in its answer's words: the
// wait the caller is told and the ledger holds (waitAsked, at most
// MaxRetryAfter), and what it asked for when that was longer.
func retryAfter(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	if w := waitAsked(d); w < d.Truncate(time.Second) {
		longer := ""
		if d >= provider.MaxRetryAfter {
			// The most a provider reports: it may have asked longer
			// (its detail says how long, or until when).
			longer = " or longer"
		}
		return fmt.Sprintf(", it asks to wait %v%s (held %v, the most this waits)", d, longer, w)
	}
	return fmt.Sprintf(", it asks to wait %v", d)
}

// waitAsked is a busy provider's Retry-After as a result carries it: whole
// seconds, rounded up, at most MaxRetryAfter; 0 for none.
func waitAsked(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d > MaxRetryAfter {
		return MaxRetryAfter
	}
	return (d + time.Second - 1) / time.Second * time.Second
}

// applyCustom runs a custom local effect in tx; the receipt carries what it
// returned as "effect".
func (s *Service) applyCustom(tx store.Tx, op *model.Operation, p *model.Prepared) (json.RawMessage, error) {
	fn := s.LocalFuncs[op.Tool]
	if fn == nil {
		return nil, model.Errorf(model.CodeInvalid, "tool %s has a custom local effect, but no function is registered for it", op.Tool)
	}
	out, err := fn(tx, LocalCall{Tenant: op.Tenant, Key: op.Key, Tool: op.Tool, OperationID: op.ID, Args: p.Decoded, Canonical: p.Canonical})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = json.RawMessage(`null`)
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("tool %s: its local effect returned invalid JSON", op.Tool)
	}
	return json.Marshal(map[string]any{"effect": out, "status": "created"})
}
