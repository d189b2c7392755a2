package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// Decision policy of the console: whether a decision may be asked for at
// all (read-only, legal from the state), what its form starts with (only
// evidence that supports it), and what the banner says once it is written
// or refused.

// requestAction opens an action's form — if the console may write and the
// operation's state allows it. Refusals say why in the banner.
func (m Model) requestAction(req actionRequestMsg, e env) (Model, tea.Cmd) {
	op := req.Op
	ref := op.Tenant + "/" + op.Key
	if m.cfg.ReadOnly {
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Read-only console: cannot %s %s. Reopen without --read-only to decide.", req.Action.Verb(), ref), at: e.now}
		return m, nil
	}
	if op.State == model.StateInProgress && !reconcile.Unheld(op, e.now) {
		// A worker may be sending it right now (R6 D3): once its lease
		// has ended, it is decided as an unknown one is.
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Cannot %s %s: a worker holds its claim (lease %s until %s) and may be sending it now. Decide once the lease has ended, if it is still in progress then.",
			req.Action.Verb(), ref, or(op.LeaseOwner, "-"), clockTime(op.LeaseUntil, e)), at: e.now}
		return m, nil
	}
	if !reconcile.AllowedAt(op, req.Action, e.now) {
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Cannot %s %s: it is %s, and %s allows %s.", req.Action.Verb(), ref, op.State, op.State, legalList(op)), at: e.now}
		return m, nil
	}
	if why := otherRequestWhy(op, m.detail.check.current(), m.screen == screenDetail); req.Action == model.ActionMarkApplied && why != "" {
		// The provider holds a different request under the key: nothing
		// to mark applied on (the ledger refuses it too).
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Cannot mark %s applied: %s Nothing was written.", ref, why), at: e.now}
		return m, nil
	}
	// The last provider check of this operation that answered is the
	// decision's finding. Evidence is pre-filled only where it supports
	// the decision: a found delivery's reference for "applied", never for
	// "not applied" (and a lookup that found nothing is recorded by
	// reconcile itself, not typed in for the operator).
	var finding *provider.Evidence
	// A check out of date — made before an attempt that may have reached
	// the provider — is none (checkState.current): n and s ask first.
	if c := m.detail.check.current(); m.screen == screenDetail && c != nil && c.err == nil && c.key == op.Key && c.tenant == op.Tenant {
		ev := c.ev
		finding = &ev
	}
	held := op.State == model.StateAuthorized && op.SupersedesID != 0
	if finding == nil && !held {
		// No check on this screen: the latest recorded finding, if it is
		// fresh and conclusive (a triage run's, another operator's). A new
		// key's own lookups (it was never sent) say nothing: the replaced
		// key's bind it, read below.
		finding = reconcile.EvidenceOf(op.Finding)
	}
	if finding == nil || !finding.Found {
		// The provider's late "applied" on a contradicted operation
		// binds as a "has it" (contradicted.go).
		var atts []model.Attempt
		if d := m.detail.d; m.screen == screenDetail && d != nil && d.Operation.ID == op.ID {
			atts = d.Attempts
		}
		if late := lateApplied(op, atts); late != nil {
			finding = late
		}
	}
	if finding == nil || !finding.Found {
		// An applied operation's receipt names the effect: a new key
		// (legal once a late answer contradicts it) goes against it.
		if ae := reconcile.AppliedEvidence(op); ae != nil {
			finding = ae
		}
	}
	evidence := ""
	if req.Action == model.ActionMarkApplied {
		switch {
		case finding != nil && finding.Found:
			evidence = reconcile.RefEvidence(finding.Ref)
		case finding == nil:
			// A late provider result named it: evidence it applied.
			evidence = reconcile.RefEvidence(op.ProviderRef)
		}
	}
	m.action = openAction(req.Action, op, evidence, finding, m.styles, m.action.seq+1)
	m.overlay = overlayAction
	if d := m.detail.d; m.screen == screenDetail && d != nil && d.Operation.ID == op.ID && !held {
		// The grace after its latest request is worked out from these
		// (graceAt) when the review opens; else from the read below.
		m.action.attempts, m.action.attemptsRead = d.Attempts, true
	}
	var chk *checkState
	if m.screen == screenDetail {
		chk = m.detail.check.current()
	}
	if held && (finding == nil || !finding.Found) {
		// A new key (held: the key it replaced was applied after all):
		// the replaced key's lookups bind its decision, and its "has it"
		// reference is where mark applied starts (loadActionOp reads
		// them; historyIn fills the evidence).
		m.action.history = historyReading
		return m, loadActionOp(m.ctx, m.cfg.Store, m.action.seq, op.Tenant, op.Key)
	}
	if why := cannotTellNow(op, chk); why != "" && finding == nil {
		// The provider cannot tell now; an earlier lookup may have found
		// the effect. The review waits for the history (one read). The
		// row's own binding finding says the same of the lookups the
		// screen saw (TestTheFormsHistoryReadEqualsTheListedBindingFinding),
		// but the read also sees one recorded since — another console's
		// triage — so that the form asks for the override the write will
		// need (TestTheFormReadsALookupRecordedAfterTheListWasDrawn).
		m.action.cannotTell, m.action.history = why, historyReading
		return m, loadActionOp(m.ctx, m.cfg.Store, m.action.seq, op.Tenant, op.Key)
	}
	if (finding != nil && !finding.Found) || (finding == nil && op.Finding != nil && op.Finding.Stale) {
		// A lookup found nothing, or the last one is stale (the key was
		// tried again); an earlier one may have found the effect, which
		// the ledger holds to (a provider never takes a delivery back):
		// the review waits for the history (one read).
		m.action.history = historyReading
		return m, loadActionOp(m.ctx, m.cfg.Store, m.action.seq, op.Tenant, op.Key)
	}
	if !m.action.attemptsRead && (req.Action == model.ActionMarkNotApplied || req.Action == model.ActionAuthorizeKey) {
		// Its attempts, for the grace after its latest request: read in
		// the background — the review does not wait for them (the write
		// checks the grace itself, and a refusal opens the same prompt).
		return m, loadActionOp(m.ctx, m.cfg.Store, m.action.seq, op.Tenant, op.Key)
	}
	return m, nil
}

// otherRequestWhy says, in plain words, why "mark applied" is refused on
// op when the provider holds a different request under its key: the
// check on this screen found it (onDetail), or the latest recorded
// lookup did (reconcile.OtherRequestRefuses). "" otherwise.
func otherRequestWhy(op model.Operation, c *checkState, onDetail bool) string {
	var other *provider.OtherRequest
	what, held := "", ""
	switch {
	case onDetail && c != nil && c.key == op.Key && c.tenant == op.Tenant && errors.As(c.err, &other):
		what, held = " ("+textsafe.Visible(other.What)+")", textsafe.Visible(other.Ref)
	case reconcile.OtherRequestRefuses(model.ActionMarkApplied, op):
		held = textsafe.Visible(op.Finding.Ref)
	default:
		return ""
	}
	if held == "" {
		held = "something"
	}
	return fmt.Sprintf("%s holds %s under its key, a different request%s — no evidence its effect happened. Check %s at the provider; to send this one, authorize a new key (s).",
		textsafe.Visible(op.Provider), held, what, held)
}

func legalList(op model.Operation) string {
	l := reconcile.LegalFor(op)
	if len(l) == 0 {
		return "no decisions"
	}
	var parts []string
	for _, a := range l {
		parts = append(parts, a.Verb())
	}
	return "only: " + strings.Join(parts, ", ")
}

// decided turns a decision's outcome into a banner and a refresh. A stale
// or refused decision wrote nothing; the banner says what changed and the
// refresh shows it.
func (m Model) decided(msg decisionMsg) (Model, tea.Cmd) {
	if msg.Seq != m.action.seq || m.action.stage != stageRunning {
		return m, nil
	}
	e := m.env()
	ref := msg.Tenant + "/" + msg.Key
	if gr := (*reconcile.GraceRefusal)(nil); errors.As(msg.Err, &gr) && len(m.action.bulk) == 0 {
		// Within the grace after its latest request: nothing was
		// written; the review says when it was sent and when to decide,
		// and writes it only on the typed override.
		m.log.Printf("decision %s on %s refused within the grace: %v", msg.Action, ref, msg.Err)
		m.action = m.action.graceRefused(gr)
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Not written: %s is within the grace after its latest request; decide after %s.", clipMiddle(ref, 44), clockTime(gr.Until, e)), at: e.now}
		return m, nil
	}
	if msg.Err != nil {
		m.log.Printf("decision %s on %s failed: %v", msg.Action, ref, msg.Err)
		// The form stays, with what was typed: a refusal is news, not a
		// reason to type it all again. reconcile's refusal says what
		// changed; the refresh says who (the form's stale warning).
		problem := oneLine(writeErrText(msg.Err))
		switch {
		case errors.Is(msg.Err, reconcile.ErrCheckOutdated):
			// The operation may be as the form saw it; the provider check
			// it rested on is not: another attempt (or lookup) came after.
			problem = fmt.Sprintf("the provider check this rested on is out of date — an attempt that may have reached the provider, or another lookup, came after it; nothing was written. esc, then check %s again (c).", clipMiddle(ref, 44))
		case model.IsCode(msg.Err, model.CodeStale):
			// Our words, not the store's (one time format on screen); the
			// fresh read reloadAll asks for says who moved it on
			// (staleNoticed).
			problem = fmt.Sprintf("%s changed since you looked: you saw %s (version %d); nothing was written.", clipMiddle(ref, 44), msg.From, m.action.op.Version)
			m.action.refusedStale = true
		}
		m.action.stage, m.action.problem = stageForm, problem
		m.banner = banner{kind: bannerErr, text: "Not written: " + problem, at: e.now}
		c := m.reloadAll()
		return m, c
	}
	m.action = actionModel{keys: m.action.keys, closed: true, seq: m.action.seq}
	m.overlay = overlayNone
	m.log.Printf("decision %s on %s by %s: %s → %s", msg.Action, ref, m.cfg.Operator, msg.From, msg.Op.State)
	text := fmt.Sprintf("%s: %s → %s (version %d), recorded for %s.", ref, msg.From, msg.Op.State, msg.Op.Version, m.cfg.Operator)
	if msg.NewOp != nil {
		text = fmt.Sprintf("%s: %s → superseded. New key %q is authorized; retries of the old key are told to use it.", ref, msg.From, msg.NewOp.Key)
	}
	m.banner = banner{kind: bannerOK, text: text, at: e.now}
	c := m.reloadAll()
	return m, c
}

// requestBulk opens the form of a decision on the marked rows, unless the
// console is read-only.
func (m Model) requestBulk(req bulkRequestMsg, e env) (Model, tea.Cmd) {
	if m.cfg.ReadOnly {
		m.banner = banner{kind: bannerErr, text: fmt.Sprintf("Read-only console: cannot %s %s. Reopen without --read-only to decide.",
			req.Action.Verb(), plural(len(req.Ops), "marked operation", "marked operations")), at: e.now}
		return m, nil
	}
	if len(req.Ops) == 0 {
		return m, nil
	}
	if req.Action == model.ActionMarkNotApplied {
		// A row whose provider answered "applied" late before the ledger
		// recorded such an answer as a lookup (contradicted.go) is
		// decided on its own, where n asks for the override: the bulk
		// review, like the ledger, goes by recorded lookups only.
		var late []string
		for _, op := range req.Ops {
			if ev := lateApplied(op, nil); ev != nil && op.State == model.StateUnknown {
				late = append(late, clipMiddle(op.Tenant+"/"+op.Key, 44)+" ("+clipMiddle(ev.Ref, 24)+")")
			}
		}
		if len(late) > 0 {
			more := ""
			if len(late) > 3 {
				late, more = late[:3], fmt.Sprintf(" and %d more", len(late)-3)
			}
			m.banner = banner{kind: bannerErr, at: e.now, text: fmt.Sprintf("Not opened: the provider answered \"applied\" late for %s%s — marking it not applied would send it a second time. Unmark it (space) and decide it on its own.",
				strings.Join(late, ", "), more)}
			return m, nil
		}
	}
	m.action = openBulk(req.Action, req.Ops, m.styles, m.action.seq+1, e.now)
	m.action.offTab = req.OffTab
	m.overlay = overlayAction
	if strings.HasPrefix(m.banner.text, "Marked ") {
		// The box's title counts the marked rows: the lines the marks'
		// banner took are the form's (three of ten at 40x10).
		m.banner = banner{}
		m = m.sized()
	}
	return m, nil
}

// staleNoticed takes the fresh read after a write refused as stale: the
// banner says what the operation is now and who moved it on, and the list
// follows it (its state's tab, the cursor on it), so the operation the
// operator was deciding on stays under the cursor.
func (m Model) staleNoticed(msg actionOpMsg, e env) (Model, tea.Cmd) {
	a := m.action
	if !a.refusedStale || msg.Seq != a.seq || msg.Err != nil || msg.Op == nil || msg.Op.ID != a.op.ID {
		return m, nil
	}
	m.action.refusedStale = false
	op := *msg.Op
	ref := op.Tenant + "/" + op.Key
	// Who comes first: a long key is clipped in its middle so that the
	// banner's few lines always reach it.
	m.banner = banner{kind: bannerErr, at: e.now, text: fmt.Sprintf("Not written: %s changed since you looked — %s; it is now %s (version %d), you saw %s (version %d).",
		clipMiddle(ref, 44), changedBy(op, msg.Last, a.op.Version, e), op.State, op.Version, a.op.State, a.op.Version)}
	var c tea.Cmd
	m.list, c = m.list.follow(e, op)
	return m, c
}
