package ui

import (
	"context"
	"errors"
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// A bulk decision: one form (reason, evidence) for every marked row, one
// review listing each operation's from → to, then each written as its own
// compare-and-set with the version it had on screen, and a result per row
// (written / refused as stale / illegal).

// bulkRequestMsg asks for a decision on the marked rows.
type bulkRequestMsg struct {
	Action model.Action
	Ops    []model.Operation // as the screen showed them
	// OffTab: how many of them are not in the state of the tab shown
	// (marks outlive a tab change).
	OffTab int
}

// bulkDecisionMsg is every row's result.
type bulkDecisionMsg struct {
	Seq      int
	Action   model.Action
	Outcomes []reconcile.Outcome
	Err      error
}

func decideMany(ctx context.Context, svc *reconcile.Service, seq int, action model.Action, d reconcile.Decision, ops []model.Operation) tea.Cmd {
	targets := make([]reconcile.Target, len(ops))
	for i, op := range ops {
		targets[i] = reconcile.TargetOf(op)
	}
	if d.Override {
		// The override is for the findings on the review: a row looked
		// up again since is refused, not written against what nobody saw.
		reconcile.SeeLookups(targets, ops)
	}
	return func() tea.Msg {
		// A long bulk decision gets more than one read's time.
		ctx, cancel := context.WithTimeout(ctx, ioTimeout*time.Duration(1+len(ops)/1000))
		defer cancel()
		out, err := svc.DecideMany(ctx, action, d, targets)
		return bulkDecisionMsg{Seq: seq, Action: action, Outcomes: out, Err: err}
	}
}

// stageResults shows a bulk decision's result per row; stageChecking waits
// for the marked rows' providers before the review.
const (
	stageResults  actionStage = 100
	stageChecking actionStage = 101
)

// bulkCheckedMsg is the marked rows with the findings their providers gave
// before a bulk "not applied" (reconcile.LookFirst).
type bulkCheckedMsg struct {
	Seq int
	Ops []model.Operation
	Err error
}

func lookFirst(ctx context.Context, svc *reconcile.Service, seq int, action model.Action, ops []model.Operation, by string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout+reconcile.DefaultLookupTimeout*time.Duration(1+len(ops)/reconcile.DefaultTriageConcurrency))
		defer cancel()
		out, err := svc.LookFirst(ctx, action, ops, by)
		return bulkCheckedMsg{Seq: seq, Ops: out, Err: err}
	}
}

// bulkRereadMsg is the marked rows as the ledger holds them now, read
// again in one batched read before the bulk review (Now[i]: the i-th
// marked row, nil if it is no longer there).
type bulkRereadMsg struct {
	Seq int
	Now []*model.Operation
	Err error
}

// rereadRows reads the marked rows again: store.Ledger.RequestHistories,
// one statement per chunk of keys, never one read per row.
func rereadRows(ctx context.Context, st store.Ledger, seq int, ops []model.Operation) tea.Cmd {
	keys := make([]store.OpKey, len(ops))
	for i, op := range ops {
		keys[i] = store.OpKey{Tenant: op.Tenant, Key: op.Key}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout*time.Duration(1+len(ops)/1000))
		defer cancel()
		hs, err := st.RequestHistories(ctx, keys, nil)
		if err != nil {
			return bulkRereadMsg{Seq: seq, Err: err}
		}
		msg := bulkRereadMsg{Seq: seq, Now: make([]*model.Operation, len(ops))}
		for i, k := range keys {
			if h, ok := hs[k]; ok {
				op := h.Operation
				msg.Now[i] = &op
			}
		}
		return msg
	}
}

// rereadBulk starts the bulk review: the marked rows are read again
// first, so that one another process decided since it was marked is
// neither proposed nor asked about (bulkReread).
func (a actionModel) rereadBulk(e env) (actionModel, tea.Cmd) {
	a.stage, a.checkingN = stageChecking, 0
	a.override.Blur()
	if e.st == nil {
		a.stage = stageConfirm
		return a.readBulkGrace(e)
	}
	return a, rereadRows(e.ctx, e.st, a.seq, a.bulk)
}

// bulkReread takes the marked rows as they are now: a row whose state or
// version moved on since it was marked is changed (the write refuses it
// as stale: its decision was made on what it was) and its provider is
// not asked; the others' providers are asked first where the decision
// needs it (lookFirstRows), then the review opens.
func (m Model) bulkReread(msg bulkRereadMsg) (Model, tea.Cmd) {
	a := &m.action
	if msg.Seq != a.seq || a.stage != stageChecking || len(a.bulk) == 0 {
		return m, nil
	}
	e := m.env()
	if msg.Err != nil {
		m.log.Printf("bulk %s: reading the marked rows again failed: %v", a.action, msg.Err)
		a.stage = stageForm
		a.problem = "reading the marked operations again failed: " + oneLine(writeErrText(msg.Err))
		return m, nil
	}
	changed := make([]*model.Operation, len(a.bulk))
	skip := make([]bool, len(a.bulk))
	n := 0
	for i, op := range a.bulk {
		now := msg.Now[i]
		if now == nil || now.State != op.State || now.Version != op.Version {
			if now == nil {
				now = &model.Operation{Tenant: op.Tenant, Key: op.Key}
			}
			changed[i], skip[i] = now, true
			continue
		}
		if e.svc != nil && !e.readOnly && e.svc.NeedsLook(a.action, op) {
			n++
		}
	}
	a.changedRows = changed
	if n > 0 {
		a.checkingN = n
		return m, lookFirstRows(e.ctx, e.svc, a.seq, a.action, a.bulk, skip, e.operator)
	}
	a.setBulk(a.bulk, e.now)
	a.stage = stageConfirm
	var read tea.Cmd
	m.action, read = m.action.readBulkGrace(e)
	return m, read
}

// lookFirstRows is lookFirst for the marked rows not skipped (changed
// since they were marked): those are returned as they were, asked nothing.
func lookFirstRows(ctx context.Context, svc *reconcile.Service, seq int, action model.Action, ops []model.Operation, skip []bool, by string) tea.Cmd {
	var idx []int
	var ask []model.Operation
	for i, op := range ops {
		if !skip[i] {
			idx, ask = append(idx, i), append(ask, op)
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout+reconcile.DefaultLookupTimeout*time.Duration(1+len(ask)/reconcile.DefaultTriageConcurrency))
		defer cancel()
		looked, err := svc.LookFirst(ctx, action, ask, by)
		out := append([]model.Operation(nil), ops...)
		for j, i := range idx {
			if j < len(looked) {
				out[i] = looked[j]
			}
		}
		return bulkCheckedMsg{Seq: seq, Ops: out, Err: err}
	}
}

// needLook is how many marked rows' providers are asked before the review
// — or, for one operation, whether its provider is (1): "not applied" on
// an operation no check on this screen answered for, as the bulk review
// asks (reconcile.Service.NeedsLook). A check that found nothing before
// the operation's latest recorded attempt or lookup (reconcile.
// CheckOutdated) answered for nothing: the provider is asked again.
func (a actionModel) needLook(e env) int {
	if e.svc == nil || e.readOnly {
		return 0
	}
	if len(a.bulk) == 0 {
		if (a.finding == nil || reconcile.CheckOutdated(a.finding, a.op.Finding) != "") && e.svc.NeedsLook(a.action, a.op) {
			return 1
		}
		return 0
	}
	n := 0
	for i, op := range a.bulk {
		if i < len(a.changedRows) && a.changedRows[i] != nil {
			continue // not asked: the write refuses it as stale
		}
		if e.svc.NeedsLook(a.action, op) {
			n++
		}
	}
	return n
}

// bulkAgainst is how many marked rows the decision would go against the
// binding finding of (reconcile's rule: refused unless overridden) — the
// latest, or an earlier "has it" a later lookup could not take back.
func (a actionModel) bulkAgainst() int { return a.nAgainst }

// bulkEval is what a bulk decision's form and review say about the marked
// rows, worked out once per set of rows (setBulk: when the form opens, and
// when the rows come back with their providers' findings): a frame, drawn
// on every key, reads only the rows it draws — a review of 5,000 rows does
// not ask the rule 5,000 times a frame. Its counts are the write's: a row
// against its finding or refused by its state is what DecideMany refuses.
type bulkEval struct {
	// againstRow, refusedRow: per marked row, whether the decision goes
	// against its finding (its state allowing it), whether its state
	// refuses it.
	againstRow, refusedRow []bool
	nAgainst, nRefused     int
	// nOther of nRefused: refused because the latest lookup found a
	// different request under the key (reconcile.OtherRequestRefuses).
	nOther int
	// changedRows[i] is the i-th marked row as it is now when it changed
	// since it was marked (its state or version moved on, or it is gone),
	// else nil: the write refuses it as stale (nChanged of them), and its
	// provider is not asked (bulkReread).
	changedRows []*model.Operation
	nChanged    int
	// cannotTellRow: per marked row, whether the write would decide it on
	// the typed evidence alone (its provider cannot tell); nCannotTell of
	// them are written — not the ones the grace skips (recountCannotTell)
	// — and cannotTellWhy is the first one's reason.
	cannotTellRow []bool
	nCannotTell   int
	cannotTellWhy string
	// nameW is the widest tenant/key; order lists the rows the write
	// refuses first, the others after, each in marked order.
	nameW int
	order []int
	// verdicts and outOrder are the same for the results (setOutcomes).
	verdicts map[reconcile.Verdict]int
	outOrder []int
}

// evalBulk works out bulkEval for deciding action on ops.
func evalBulk(action model.Action, ops []model.Operation, changed []*model.Operation, now time.Time) bulkEval {
	v := bulkEval{againstRow: make([]bool, len(ops)), refusedRow: make([]bool, len(ops)), cannotTellRow: make([]bool, len(ops)), order: make([]int, 0, len(ops)),
		changedRows: changed}
	for i, op := range ops {
		v.nameW = max(v.nameW, ansi.StringWidth(oneLine(op.Tenant+"/"+op.Key)))
		if v.rowChanged(i) {
			v.nChanged++
			continue
		}
		allowed := reconcile.AllowedAt(op, action, now)
		other := allowed && reconcile.OtherRequestRefuses(action, op)
		allowed = allowed && !other
		against, _ := reconcile.AgainstFinding(action, op)
		v.againstRow[i], v.refusedRow[i] = against && allowed, !allowed
		switch {
		case v.refusedRow[i]:
			v.nRefused++
			if other {
				v.nOther++
			}
		case v.againstRow[i]:
			v.nAgainst++
		default:
			if f := op.Binding(); f != nil && !f.Stale && f.Kind == model.FindingCannotTell {
				v.cannotTellRow[i] = true
			}
		}
	}
	for pass := 0; pass < 2; pass++ {
		for i := range ops {
			if refused := v.againstRow[i] || v.refusedRow[i] || v.rowChanged(i); refused == (pass == 0) {
				v.order = append(v.order, i)
			}
		}
	}
	v.recountCannotTell(ops, nil)
	return v
}

// rowChanged reports whether the i-th marked row changed since it was
// marked (changedRows).
func (v bulkEval) rowChanged(i int) bool { return i < len(v.changedRows) && v.changedRows[i] != nil }

// recountCannotTell counts the rows the write decides on the typed
// evidence alone: those whose provider cannot tell, less the ones the
// grace skips (within: per row, nil before their requests are read) —
// nothing is written for those, on any evidence.
func (v *bulkEval) recountCannotTell(ops []model.Operation, within []bool) {
	v.nCannotTell, v.cannotTellWhy = 0, ""
	for i, ct := range v.cannotTellRow {
		if !ct || i < len(within) && within[i] {
			continue
		}
		if v.nCannotTell == 0 {
			v.cannotTellWhy = whyWords(ops[i].Binding().Detail)
		}
		v.nCannotTell++
	}
}

// setBulk sets the marked rows and works out, once, what the form and the
// review say about them (bulkEval).
func (a *actionModel) setBulk(ops []model.Operation, now time.Time) {
	a.bulk = ops
	a.bulkEval = evalBulk(a.action, ops, a.changedRows, now)
}

// setOutcomes sets the rows' results and, once, how many of each verdict
// and their order on screen: the refused first, then the written.
func (a *actionModel) setOutcomes(out []reconcile.Outcome) {
	a.outcomes, a.verdicts, a.outOrder = out, map[reconcile.Verdict]int{}, make([]int, 0, len(out))
	for _, o := range out {
		a.verdicts[o.Verdict]++
	}
	for pass := 0; pass < 2; pass++ {
		for i, o := range out {
			if (o.Verdict != reconcile.VerdictWritten) == (pass == 0) {
				a.outOrder = append(a.outOrder, i)
			}
		}
	}
}

// bulkChecked takes the rows' findings and opens the review on them.
func (m Model) bulkChecked(msg bulkCheckedMsg) (Model, tea.Cmd) {
	if msg.Seq != m.action.seq || m.action.stage != stageChecking {
		return m, nil
	}
	if msg.Err != nil {
		m.log.Printf("bulk %s: asking the providers failed: %v", m.action.action, msg.Err)
		m.action.stage = stageForm
		m.action.problem = "asking the providers first failed: " + oneLine(writeErrText(msg.Err))
		return m, nil
	}
	if len(m.action.bulk) == 0 {
		m.action = m.action.lookedAt(msg.Ops)
		return m, m.reloadAll()
	}
	m.action.setBulk(msg.Ops, m.env().now)
	m.action.stage = stageConfirm
	var read tea.Cmd
	m.action, read = m.action.readBulkGrace(m.env())
	return m, tea.Batch(m.reloadAll(), read) // the FINDING column shows what was recorded
}

// bulkGrace is what the bulk review knows of the marked rows within the
// grace after their latest request (the provider may still apply it):
// the write skips them (reconcile.DecideMany: VerdictSkipped), and the
// review says so before y.
type bulkGrace struct {
	// graceReading: their attempts are being read; graceErr: they could
	// not be.
	graceReading bool
	graceErr     string
	// graceRow: per marked row, whether it is within the grace;
	// graceUntil: the latest end of their graces.
	graceRow   []bool
	graceUntil time.Time
}

// bulkGraceMsg is the marked rows' graces, read for the bulk review.
type bulkGraceMsg struct {
	Seq    int
	Within []bool
	Until  time.Time
	Err    error
}

// readBulkGrace starts reading the marked rows' attempts for the bulk
// review, where the decision is one the grace holds ("not applied", a new
// key): nil for any other, or for one operation (its review reads its
// own, graceAt).
func (a actionModel) readBulkGrace(e env) (actionModel, tea.Cmd) {
	a.bulkGrace = bulkGrace{}
	if len(a.bulk) == 0 || e.svc == nil || (a.action != model.ActionMarkNotApplied && a.action != model.ActionAuthorizeKey) {
		return a, nil
	}
	a.graceReading = true
	return a, graceOfRows(e.ctx, e.svc, a.seq, a.action, a.bulk, e.now)
}

// graceOfRows reads the rows' requests in one batched read and asks
// reconcile.GraceCheck of each — the single review's rule, and the
// write's (reconcile.GraceChecks) — whether deciding action on it at now
// is refused within the grace.
func graceOfRows(ctx context.Context, svc *reconcile.Service, seq int, action model.Action, ops []model.Operation, now time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout*time.Duration(1+len(ops)/1000))
		defer cancel()
		msg := bulkGraceMsg{Seq: seq, Within: make([]bool, len(ops))}
		checks, err := svc.GraceChecks(ctx, action, ops, now)
		if err != nil {
			msg.Err = err
			return msg
		}
		for i, c := range checks {
			var gr *reconcile.GraceRefusal
			if errors.As(c, &gr) {
				msg.Within[i] = true
				if gr.Until.After(msg.Until) {
					msg.Until = gr.Until
				}
			}
		}
		return msg
	}
}

// bulkGraced takes the marked rows' graces into the bulk review.
func (m Model) bulkGraced(msg bulkGraceMsg) (Model, tea.Cmd) {
	a := &m.action
	if msg.Seq != a.seq || !a.graceReading || len(msg.Within) != len(a.bulk) {
		return m, nil
	}
	a.graceReading = false
	if msg.Err != nil {
		a.graceErr = oneLine(msg.Err.Error())
		return m, nil
	}
	a.graceRow, a.graceUntil = msg.Within, msg.Until
	a.recountCannotTell(a.bulk, a.graceRow)
	return m, nil
}

// graceSkips is how many rows the write would skip within the grace: of
// those it writes (not refused by their state; against their finding
// only when overridden).
func (a actionModel) graceSkips(overridden bool) int {
	n := 0
	for i, in := range a.graceRow {
		if in && i < len(a.bulk) && !a.refusedRow[i] && !a.rowChanged(i) && (overridden || !a.againstRow[i]) {
			n++
		}
	}
	return n
}

// bulkGraceWarning is the bulk review's word on the grace before y: how
// many marked rows are within it and are skipped, and when to decide.
func (a actionModel) bulkGraceWarning(s *Styles, e env, inner int) string {
	switch {
	case a.graceReading:
		return s.Muted.Render(wrap("Reading their requests for the grace…", inner, " "))
	case a.graceErr != "":
		return s.BannerErr.Render(wrap("! Their requests could not be read for the grace ("+a.graceErr+"): the write skips any whose latest request may still land.", inner, " "))
	}
	n := a.graceSkips(a.overriding)
	if n == 0 {
		return ""
	}
	return s.BannerErr.Render(wrap(fmt.Sprintf("! %s within the grace: the provider may still apply %s — the write skips %s (nothing written for %s). Decide after %s.",
		map[bool]string{true: "1 of them is", false: fmt.Sprintf("%d of them are", n)}[n == 1],
		map[bool]string{true: "its latest request", false: "their latest requests"}[n == 1],
		map[bool]string{true: "it", false: "them"}[n == 1], map[bool]string{true: "it", false: "them"}[n == 1], clockTime(a.graceUntil, e)), inner, " "))
}

// lookedAt opens one operation's review on what its provider said when
// it was asked first (ops: the operation, its finding as recorded): a
// finding that binds is the decision's (against it: the typed override),
// a "cannot tell" is said with what the decision risks.
func (a actionModel) lookedAt(ops []model.Operation) actionModel {
	if len(ops) == 1 {
		op := ops[0]
		if a.finding != nil && !a.finding.Found {
			// Asked again (needLook): what the provider said before is
			// no finding now, whatever it says this time.
			a.finding = nil
		}
		if f := op.Finding; f != nil && !f.Stale && f.Kind == model.FindingCannotTell {
			a.cannotTell = or(cannotTellWhy(f.Detail), "the provider could not be asked")
		} else {
			a.cannotTell = ""
		}
		if b := op.Binding(); b.Conclusive() {
			a.finding = reconcile.EvidenceOf(b)
			if b != op.Finding {
				a.earlier = b
			}
		}
	}
	a.stage = stageConfirm
	if a.needsOverride() { // against the finding, or within the grace
		a.override.Focus()
	}
	return a
}

// bulkReview is the bulk review's keys: y writes (a row against its
// finding is refused by the ledger, the others written); o, the override
// word, enter writes them all, against the findings too.
func (a actionModel) bulkReview(msg tea.Msg, e env) (actionModel, tea.Cmd) {
	km, isKey := msg.(tea.KeyMsg)
	if isKey && km.Paste {
		return a, nil
	}
	if a.overriding {
		switch {
		case isKey && key.Matches(km, a.keys.Cancel):
			a.overriding, a.overrideErr = false, ""
			a.override.SetValue("")
			a.override.Blur()
		case isKey && km.Type == tea.KeyEnter:
			if a.override.Value() != overrideWord {
				a.overrideErr = fmt.Sprintf("type %q to write against the findings, or esc", overrideWord)
				return a, nil
			}
			return a.write(e)
		default:
			var c tea.Cmd
			a.override, c = a.override.Update(msg)
			a.overrideErr = ""
			return a, c
		}
		return a, nil
	}
	switch {
	case isKey && key.Matches(km, a.keys.Cancel):
		a.stage = stageForm
	case isKey && km.String() == "o" && a.bulkAgainst() > 0:
		a.overriding = true
		a.override.SetValue("")
		a.override.Focus()
	case isKey && key.Matches(km, a.keys.Confirm):
		a.override.SetValue("") // y never overrides
		if a.legalCount() == 0 {
			// Nothing it would write (the review does not offer y).
			return a, nil
		}
		return a.write(e)
	}
	return a, nil
}

// nothingToWrite is why y would write none of the marked rows, in a few
// words ("2 within the grace, skipped · 1 refused by its state"); the
// review says it instead of offering y.
func (a actionModel) nothingToWrite() string {
	var parts []string
	if g := a.graceSkips(false); g > 0 {
		parts = append(parts, fmt.Sprintf("%d within the grace, skipped", g))
	}
	if a.nAgainst > 0 {
		parts = append(parts, fmt.Sprintf("%d against the provider's finding", a.nAgainst))
	}
	if n := a.nRefused - a.nOther; n > 0 {
		parts = append(parts, fmt.Sprintf("%d refused by %s state", n, map[bool]string{true: "its", false: "their"}[n == 1]))
	}
	if a.nOther > 0 {
		parts = append(parts, fmt.Sprintf("%d refused: the provider has a different request under the key", a.nOther))
	}
	if a.nChanged > 0 {
		parts = append(parts, fmt.Sprintf("%d changed since marked", a.nChanged))
	}
	return strings.Join(parts, " · ")
}

// bulkNothingKeys is the help line of a bulk review with nothing for y to
// write: o when an override would write some, and esc.
func (a actionModel) bulkNothingKeys() keyMap {
	back := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))
	short := []key.Binding{back}
	narrow := []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))}
	if a.bulkAgainst() > 0 {
		short = append([]key.Binding{key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "override the findings"))}, short...)
		narrow = append([]key.Binding{key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "override"))}, narrow...)
	}
	return keyMap{short: short, full: [][]key.Binding{short}, narrow: narrow}
}

func openBulk(a model.Action, ops []model.Operation, s *Styles, seq int, now time.Time) actionModel {
	m := openAction(a, ops[0], "", nil, s, seq)
	m.setBulk(ops, now)
	switch a {
	case model.ActionMarkNotApplied:
		m.fields[1].hint = "why a timeout is not the only evidence, for all of them: an incident, a ticket"
	case model.ActionMarkApplied:
		// One evidence for every row; a row's receipt names the
		// reference of its own "has it" when one binds it (reconcile's
		// DecideMany), never another operation's.
		m.fields[0].hint = "for all of them; a row the provider has keeps its own reference in its receipt"
	}
	return m
}

// bulkCannotTellWarning names the rows the decision would write although
// their provider cannot tell — on the typed evidence alone — with why (the
// first row's reason) and what it risks; "" if there are none.
func (a actionModel) bulkCannotTellWarning(s *Styles, inner int) string {
	n := a.nCannotTell
	if n == 0 {
		return ""
	}
	them := "them"
	if n == 1 {
		them = "it"
	}
	return s.BannerErr.Render(wrap(fmt.Sprintf("! The provider cannot tell about %d of them (%s): y writes %s on your evidence alone. %s",
		n, a.cannotTellWhy, them, bulkCannotTellRisk(a.action)), inner, " "))
}

// bulkCannotTellRisk is cannotTellRisk for many rows.
func bulkCannotTellRisk(a model.Action) string {
	if a == model.ActionMarkNotApplied {
		return "If one was sent, its next call sends it a second time."
	}
	return "If one was not sent, its retries replay a receipt for an effect that never happened."
}

// legalCount is how many marked rows the write would decide: those that
// allow the action and, unless the override is typed, do not go against
// their finding.
func (a actionModel) legalCount() int {
	if a.override.Value() == overrideWord {
		return len(a.bulk) - a.nRefused - a.nChanged - a.graceSkips(true)
	}
	return len(a.bulk) - a.nRefused - a.nChanged - a.nAgainst - a.graceSkips(false)
}

// overrideWrites is how many marked rows the typed override writes: all
// but those their state refuses, those changed since they were marked and
// those within the grace.
func (a actionModel) overrideWrites() int {
	return len(a.bulk) - a.nRefused - a.nChanged - a.graceSkips(true)
}

// findingShort names a conclusive finding in a few words, its reference
// first: "the provider has it (sbx_12)", or "(earlier: sbx_12)" for one
// before the latest lookup.
func findingShort(f *model.Finding) string {
	words, earlier := "the provider has nothing", ""
	if f.Kind == model.FindingHasIt {
		words = "the provider has it"
	}
	if f.Earlier {
		earlier = "earlier"
	}
	if f.Kind == model.FindingHasIt && f.Ref != "" {
		return words + " (" + strings.Join(nonEmpty(earlier, textsafe.Visible(f.Ref)), ": ") + ")"
	}
	if earlier != "" {
		return words + " (" + earlier + ")"
	}
	return words
}

// findingNote is the i-th row's finding, as the review shows it: a row
// against its finding is refused — or, once o is pressed, written
// against it by the typed override, and the row says so.
func (a actionModel) findingNote(s *Styles, i int, op model.Operation) string {
	if a.againstRow[i] && a.overriding {
		return s.BannerErr.Render("against: " + findingShort(op.Binding()))
	}
	return findingNote(s, a.againstRow[i], op)
}

// findingNote is a review row's finding, as the review shows it.
func findingNote(s *Styles, against bool, op model.Operation) string {
	if against {
		return s.BannerErr.Render("refused: " + findingShort(op.Binding()))
	}
	f := op.Shown()
	switch {
	case op.Provider == "":
		return ""
	case f == nil:
		return s.Muted.Render("not checked")
	case f.Stale:
		return s.Muted.Render("stale: " + f.Kind.Words() + " · your evidence")
	case f.Kind == model.FindingCannotTell:
		// Why, in a few words: "the provider is down" and "its file went
		// back in time" are not the same night.
		return s.BannerErr.Render("cannot tell (" + whyWords(f.Detail) + ") · your evidence")
	case f.Kind == model.FindingHasOther:
		return s.BannerErr.Render("has another request under its key · no evidence either way")
	}
	return s.Muted.Render(f.Kind.Words())
}

// otherRequestNote is a review row's note when "mark applied" is refused
// on it: the provider holds a different request under its key
// (reconcile.OtherRequestRefuses) — no evidence either way; a new key
// sends its own.
func otherRequestNote(op model.Operation) string {
	held := "something"
	if f := op.Finding; f != nil && f.Ref != "" {
		held = textsafe.Visible(f.Ref)
	}
	return "refused: the provider holds " + held + ", a different request; a new key (s) sends this one"
}

// changedNote is a marked row's note when it changed since it was
// marked: what it is now, and that the write refuses it.
func changedNote(now *model.Operation) string {
	if now.State == "" {
		return "gone since you marked it · refused"
	}
	return fmt.Sprintf("changed since you marked it: now %s (v%d) · refused as stale", now.State, now.Version)
}

// offTabWords says how many of n marked operations are not on the tab
// shown, or "".
func offTabWords(n, off int) string {
	switch {
	case off <= 0:
		return ""
	case off == n && n == 1:
		return ", not on this tab"
	case off == n:
		return ", none on this tab"
	}
	return fmt.Sprintf(", %d not on this tab", off)
}

func (a actionModel) bulkView(e env, w, h int) string {
	s := e.styles
	boxW := min(max(w-6, 30), 96)
	inner := boxW - 4
	verb := a.action.Verb()
	title := s.Title.Render(strings.ToUpper(verb[:1])+verb[1:]) + s.Muted.Render(" — ") +
		s.Bold.Render(plural(len(a.bulk), "marked operation", "marked operations")+offTabWords(len(a.bulk), a.offTab))
	var b strings.Builder
	b.WriteString(title + "\n")
	rows := max(h-14, 3)
	// The name column is as wide as the longest name, within reason.
	nameW := min(max(a.nameW, 12), max(inner-36, 16))
	// A row and its note on one line if they fit, else the note on its
	// own line below (what a row's finding or refusal says is never cut
	// off at 80 columns); the rows stop, with "… and N more", when the
	// lines run out.
	lines := 0
	row := func(main, note string) {
		if note == "" {
			b.WriteString(truncate(main, inner) + "\n")
			lines++
			return
		}
		if ansi.StringWidth(main+"  "+note) > inner {
			b.WriteString(truncate(main, inner) + "\n" + truncate("      "+note, inner) + "\n")
			lines += 2
			return
		}
		b.WriteString(truncate(main+"  "+note, inner) + "\n")
		lines++
	}
	// more ends the rows at the i-th of n when the lines ran out, saying
	// how many of the rest y writes or wrote (written: whether the k-th
	// would be, or was; done: "written", else "to write").
	more := func(i, n int, done string, written func(k int) bool) bool {
		if lines >= rows && n > i+1 || lines >= rows+1 {
			w := 0
			for k := i; k < n; k++ {
				if written(k) {
					w++
				}
			}
			var parts []string
			if w > 0 {
				parts = append(parts, plural(w, done, done))
			}
			if n-i-w > 0 {
				parts = append(parts, plural(n-i-w, "refused", "refused"))
			}
			b.WriteString(s.Muted.Render(fmt.Sprintf("  … and %s more: %s", count(n-i), strings.Join(parts, ", "))) + "\n")
			return true
		}
		return false
	}
	// The rows that will be refused come first (a stable order
	// otherwise): when the screen has room for only a few, those are
	// the ones to see.
	listOps := func(line func(i int, op model.Operation) (string, string)) {
		for n, i := range a.order {
			if more(n, len(a.order), "to write", func(k int) bool {
				return !a.againstRow[a.order[k]] && !a.refusedRow[a.order[k]] && !a.rowChanged(a.order[k])
			}) {
				break
			}
			row(line(i, a.bulk[i]))
		}
	}
	change := func(op model.Operation) string {
		return s.State(op.State).Render(string(op.State)) + fmt.Sprintf(" (v%d) → ", op.Version) + s.State(a.action.Target()).Render(string(a.action.Target()))
	}
	switch a.stage {
	case stageForm:
		// Rows whose recorded finding this decision goes against are named
		// before a reason is typed, as on a single decision's form.
		if against := a.bulkAgainst(); against > 0 {
			b.WriteString(s.BannerErr.Render(wrap(fmt.Sprintf("! %s against a recorded finding (%s). The review refuses them unless you type %s.",
				plural(against, "marked operation goes", "marked operations go"), againstWhat(a.action), overrideWord), inner, " ")) + "\n")
		}
		b.WriteString(s.Muted.Render(strings.ReplaceAll(consequence(a.action), "this key", "each key")+" Each is written on its own, with the version shown.") + "\n")
		for i, f := range a.fields {
			b.WriteString("\n")
			label := s.Label.Render("  " + f.label)
			if i == a.focus {
				label = s.Bold.Render("▸ " + f.label)
			}
			b.WriteString(fieldHead(s, label, f, inner))
			in := f.input
			in.Width = inner - 3
			b.WriteString(in.View() + "\n")
			if f.err != "" {
				b.WriteString(s.InputErr.Render("  ✗ "+f.err) + "\n")
			}
		}
		b.WriteString("\n" + s.Muted.Render("enter next / review · tab switch field · esc cancel"))
	case stageChecking:
		if a.checkingN == 0 {
			b.WriteString("\n" + s.Bold.Render("Reading the marked operations again…") + "\n\n")
			b.WriteString(s.Key.Render("esc") + s.Muted.Render(" back to the form"))
			break
		}
		b.WriteString("\n" + s.Bold.Render(fmt.Sprintf("Asking the providers about %s first…", plural(a.checkingN, "operation", "operations"))) + "\n")
		b.WriteString(s.Muted.Render(wrap("Each finding is recorded. One whose provider has the effect will be refused; one it cannot tell about stays your decision, on the evidence you typed.", inner, "")) + "\n\n")
		b.WriteString(s.Key.Render("esc") + s.Muted.Render(" back to the form"))
	case stageConfirm, stageRunning:
		legal := a.legalCount()
		// What follows the rows is drawn first: the rows get the height
		// it leaves (at least one), so the warning and the keys stay on
		// screen at 20 lines.
		var t strings.Builder
		t.WriteString("\n")
		if ev := a.value("Evidence"); ev != "" {
			t.WriteString("  " + s.Label.Render(fit("evidence", 10)) + " " + truncate(ev, inner-13) + "\n")
		}
		t.WriteString("  " + s.Label.Render(fit("reason", 10)) + " " + truncate(a.value("Reason"), inner-13) + "\n")
		t.WriteString("  " + s.Label.Render(fit("operator", 10)) + " " + oneLine(e.operator) + "\n\n")
		if a.nChanged > 0 {
			t.WriteString(s.BannerErr.Render(wrap(fmt.Sprintf("! %s since you marked %s (another process decided or retried %s): the write refuses %s as stale, and %s provider was not asked. Look at %s again after this.",
				map[bool]string{true: "1 of them changed", false: fmt.Sprintf("%d of them changed", a.nChanged)}[a.nChanged == 1],
				map[bool]string{true: "it", false: "them"}[a.nChanged == 1], map[bool]string{true: "it", false: "them"}[a.nChanged == 1],
				map[bool]string{true: "it", false: "them"}[a.nChanged == 1], map[bool]string{true: "its", false: "their"}[a.nChanged == 1],
				map[bool]string{true: "it", false: "them"}[a.nChanged == 1]), inner, " ")) + "\n")
		}
		if w := a.bulkCannotTellWarning(s, inner); w != "" {
			t.WriteString(w + "\n")
		}
		if w := a.bulkGraceWarning(s, e, inner); w != "" && a.stage == stageConfirm {
			t.WriteString(w + "\n")
		}
		against := a.bulkAgainst()
		switch {
		case a.stage == stageRunning:
			t.WriteString(s.Muted.Render(fmt.Sprintf("writing %s…", plural(len(a.bulk), "decision", "decisions"))))
		case against > 0 && a.overriding:
			t.WriteString(s.BannerErr.Render(wrap(fmt.Sprintf("Against the findings of %s. %s", plural(against, "operation", "operations"), againstRisk(a.action)), inner, "")) + "\n")
			t.WriteString(s.Bold.Render(wrap("Type "+overrideWord+" and press enter to write them all", inner, "")) + "\n")
			in := a.override
			in.Width = inner - 3
			t.WriteString(in.View() + "\n")
			if a.overrideErr != "" {
				t.WriteString(s.InputErr.Render(wrap("  ✗ "+a.overrideErr, inner, "    ")) + "\n")
			}
			t.WriteString(s.Key.Render("esc") + s.Muted.Render(" back"))
		case against > 0 && legal == 0:
			t.WriteString(s.BannerErr.Render(wrap(fmt.Sprintf("%s against the provider's finding: refused unless you override it (o); nothing else to write.",
				plural(against, "operation goes", "operations go")), inner, "")) + "\n")
			t.WriteString(s.Key.Render("o") + s.Muted.Render(" override · ") + s.Key.Render("esc") + s.Muted.Render(" back"))
		case against > 0:
			t.WriteString(s.BannerErr.Render(wrap(fmt.Sprintf("%s against the provider's finding: y writes the others and these are refused.",
				plural(against, "operation goes", "operations go")), inner, "")) + "\n")
			t.WriteString(s.Key.Render("y") + s.Muted.Render(" write the others · ") + s.Key.Render("o") + s.Muted.Render(" override · ") +
				s.Key.Render("esc") + s.Muted.Render(" back"))
		case legal == 0:
			t.WriteString(s.Muted.Render("Nothing is written; ") + s.Key.Render("esc") + s.Muted.Render(" back to the form"))
		default:
			t.WriteString(s.Key.Render("y") + s.Muted.Render(" write them     ") + s.Key.Render("esc") + s.Muted.Render(" back to the form"))
		}
		tail := t.String()
		// 3: the box's borders and the line above it; 4: title, blank,
		// question, blank. When even that leaves no room for every row,
		// the blank lines go (below) and the rows get theirs.
		rows = h - 3 - 4 - strings.Count(tail, "\n") - 1
		if rows < len(a.bulk) {
			rows += 1 + strings.Count(tail, "\n\n")
		}
		rows = max(rows, 1)
		b.WriteString("\n" + s.Bold.Render(a.bulkQuestion(legal)) + "\n\n")
		listOps(func(i int, op model.Operation) (string, string) {
			note := ""
			switch {
			case a.rowChanged(i):
				note = s.BannerErr.Render(changedNote(a.changedRows[i]))
			case a.refusedRow[i] && reconcile.OtherRequestRefuses(a.action, op):
				note = s.BannerErr.Render(otherRequestNote(op))
			case a.refusedRow[i]:
				note = s.BannerErr.Render(fmt.Sprintf("refused: %s allows no %s", op.State, a.action.Verb()))
			case i < len(a.graceRow) && a.graceRow[i] && (a.overriding || !a.againstRow[i]):
				note = s.BannerErr.Render("skipped: within the grace")
			default:
				note = a.findingNote(s, i, op)
			}
			// Keys differ at their ends: clipped in the middle, never there.
			return "  " + fit(clipMiddle(op.Tenant+"/"+op.Key, nameW), nameW) + " " + change(op), note
		})
		b.WriteString(tail)
	case stageResults:
		n := a.verdicts
		summary := fmt.Sprintf("%s written", count(n[reconcile.VerdictWritten]))
		for _, v := range []reconcile.Verdict{reconcile.VerdictStale, reconcile.VerdictIllegal, reconcile.VerdictFailed} {
			if n[v] > 0 {
				summary += fmt.Sprintf(" · %s refused as %s", count(n[v]), v)
			}
		}
		if k := n[reconcile.VerdictSkipped]; k > 0 {
			// The provider may still apply their latest request.
			summary += fmt.Sprintf(" · %s skipped: within the grace", count(k))
		}
		b.WriteString("\n" + s.Bold.Render(summary) + "\n\n")
		for n, i := range a.outOrder {
			o := a.outcomes[i]
			if more(n, len(a.outOrder), "written", func(k int) bool { return a.outcomes[a.outOrder[k]].Verdict == reconcile.VerdictWritten }) {
				break
			}
			var line, note string
			switch o.Verdict {
			case reconcile.VerdictWritten:
				line = s.BannerOK.Render("  written ") + " " + fit(clipMiddle(o.Tenant+"/"+o.Key, nameW), nameW) +
					fmt.Sprintf(" v%d → %s v%d", o.ExpectVersion, o.State, o.Version)
			default:
				why := localTimes(oneLine(writeErrText(o.Err)), e)
				switch o.Verdict {
				case reconcile.VerdictStale:
					why = fmt.Sprintf("now %s v%d: changed since you looked", o.State, o.Version)
				case reconcile.VerdictSkipped:
					if gr := (*reconcile.GraceRefusal)(nil); errors.As(o.Err, &gr) {
						why = fmt.Sprintf("within the grace: sent %s; decide after %s", clockTime(gr.Sent, e), clockTime(gr.Until, e))
					}
				case reconcile.VerdictIllegal:
					why = fmt.Sprintf("it is %s: no %s from there", o.State, a.action.Verb())
					allowed := reconcile.Allowed(o.State, a.action)
					if i < len(a.bulk) {
						// As listed (a contradicted operation allows more),
						// in the state the ledger found.
						op := a.bulk[i]
						op.State = o.State
						allowed = reconcile.AllowedAt(op, a.action, e.now)
					}
					if allowed {
						// The state allows it: the ledger refused it as
						// against the operation's recorded finding.
						why = "against its recorded finding"
						if i < len(a.againstRow) && a.againstRow[i] {
							why = "refused: " + findingShort(a.bulk[i].Binding())
						}
					}
				}
				line, note = s.BannerErr.Render(fmt.Sprintf("  %-8s", o.Verdict))+" "+fit(clipMiddle(o.Tenant+"/"+o.Key, nameW), nameW), why
			}
			row(line, note)
		}
		b.WriteString("\n" + s.Key.Render("esc") + s.Muted.Render(" close"))
	}
	box := s.Box
	if a.stage != stageForm {
		box = s.BoxDanger
	}
	content := b.String()
	if strings.Count(content, "\n")+1+3 > h {
		// Too tall for the screen: the blank lines go first.
		var kept []string
		for _, line := range strings.Split(content, "\n") {
			if strings.TrimSpace(ansi.Strip(line)) != "" {
				kept = append(kept, line)
			}
		}
		content = strings.Join(kept, "\n")
	}
	drawn := box.Width(boxW).Render(content)
	if bh := lipgloss.Height(drawn); bh+1 > h && bh <= h {
		// The line above the box goes before anything in it.
		return lipgloss.PlaceHorizontal(w, lipgloss.Center, drawn)
	}
	if a.stage != stageResults && a.stage != stageRunning && lipgloss.Height(drawn) > h {
		// Smaller still (40x10, 60x15): the tiny bulk box, as one
		// operation's — every line one thing, the fields, errors, counts,
		// warning and keys kept, the rows dropped first.
		lines := a.bulkTiny(e, inner, max(h-2, 3))
		return lipgloss.PlaceHorizontal(w, lipgloss.Center, box.Width(boxW).Render(strings.Join(lines, "\n")))
	}
	return "\n" + lipgloss.PlaceHorizontal(w, lipgloss.Center, drawn)
}

// bulkQuestion is the review's question: what y writes, or — overriding —
// what the typed override writes, and how many of those go against the
// provider's finding.
func (a actionModel) bulkQuestion(legal int) string {
	if a.overriding {
		return fmt.Sprintf("Override: write %s to the ledger, %d against the provider's finding?",
			plural(a.overrideWrites(), "decision", "decisions"), a.bulkAgainst())
	}
	if legal == 0 && !a.graceReading {
		return "Nothing to write: " + a.nothingToWrite() + "."
	}
	return fmt.Sprintf("Write %s to the ledger?", plural(legal, "decision", "decisions"))
}

// bulkTiny is a bulk form or review in at most n lines of inner cells:
// each line one thing, clipped, never wrapped; the rows (review) get what
// the title, counts, warning, fields or prompt and keys leave.
func (a actionModel) bulkTiny(e env, inner, n int) []string {
	s := e.styles
	verb := a.action.Verb()
	clip := func(t string) string { return truncate(t, inner) }
	var head, tail []string
	head = append(head, clip(s.Title.Render(strings.ToUpper(verb[:1])+verb[1:])+s.Muted.Render(" — ")+s.Bold.Render(fmt.Sprintf("%d marked", len(a.bulk)))))
	if a.problem != "" {
		head = append(head, clip(s.BannerErr.Render("Not written: "+oneLine(a.problem))))
	}
	against := a.bulkAgainst()
	var rows []string
	switch a.stage {
	case stageForm:
		if against > 0 {
			head = append(head, clip(s.BannerErr.Render(fmt.Sprintf("! %d against its finding", against))))
		}
		for i, f := range a.fields {
			label := s.Label.Render("  " + f.label)
			if i == a.focus {
				label = s.Bold.Render("▸ " + f.label)
			}
			in := f.input
			in.Width = max(inner-ansi.StringWidth(f.label)-6, 4)
			tail = append(tail, clip(label+" "+in.View()))
			if f.err != "" {
				// Two lines at most: what the field needs is said in
				// its first words, and the rest of them follow.
				for i, l := range strings.SplitN(wrap("✗ "+f.err, inner-2, "  "), "\n", 3) {
					if i < 2 {
						tail = append(tail, clip(s.InputErr.Render("  "+l)))
					}
				}
			}
		}
	case stageChecking:
		what := fmt.Sprintf("Asking %d providers first…", a.checkingN)
		if a.checkingN == 0 {
			what = "Reading them again…"
		}
		tail = append(tail, clip(s.Bold.Render(what)),
			clip(s.Key.Render("esc")+s.Muted.Render(" back to the form")))
	case stageConfirm:
		legal := a.legalCount()
		counts := fmt.Sprintf("%d to write", legal)
		if legal == 0 && !a.graceReading {
			counts = "Nothing to write"
		}
		if r := len(a.bulk) - legal - a.graceSkips(a.override.Value() == overrideWord); r > 0 {
			counts += fmt.Sprintf(", %d refused", r)
		}
		if a.overriding {
			head = append(head, clip(s.Bold.Render(fmt.Sprintf("Override writes %d, %d against", a.overrideWrites(), against))))
		} else {
			head = append(head, clip(s.Bold.Render(counts)))
		}
		if against > 0 {
			head = append(head, clip(s.BannerErr.Render(fmt.Sprintf("! %d: the provider has it", against))))
		}
		if a.overriding {
			tail = append(tail, clip(s.Bold.Render("Type "+overrideWord+" + enter")+s.Muted.Render(" · ")+s.Key.Render("esc")))
			in := a.override
			in.Width = inner - 3
			tail = append(tail, clip(in.View()))
			if a.overrideErr != "" {
				tail = append(tail, clip(s.InputErr.Render("  ✗ "+a.overrideErr)))
			}
		}
		if a.nChanged > 0 {
			head = append(head, clip(s.BannerErr.Render(fmt.Sprintf("! %d changed: refused", a.nChanged))))
		}
		if a.nCannotTell > 0 {
			head = append(head, clip(s.BannerErr.Render(fmt.Sprintf("! %d cannot tell: your evidence", a.nCannotTell))))
		}
		if g := a.graceSkips(a.overriding); g > 0 {
			head = append(head, clip(s.BannerErr.Render(fmt.Sprintf("! %d in the grace: skipped", g))))
		}
		if !a.overriding {
			var keys []string
			if legal > 0 {
				keys = append(keys, s.Key.Render("y")+s.Muted.Render(fmt.Sprintf(" write %d", legal)))
			}
			if against > 0 {
				keys = append(keys, s.Key.Render("o")+s.Muted.Render(" override"))
			}
			keys = append(keys, s.Key.Render("esc"))
			tail = append(tail, clip(strings.Join(keys, s.Muted.Render(" · "))))
		}
		// Keys differ at their ends: clipped in the middle, as wide as
		// half the box allows.
		keyW := min(max(inner/2-2, 14), 40)
		for _, i := range a.order {
			op := a.bulk[i]
			note := a.findingNote(s, i, op)
			if a.refusedRow[i] {
				note = s.BannerErr.Render("refused: " + string(op.State))
			}
			if a.rowChanged(i) {
				note = s.BannerErr.Render("changed: " + string(a.changedRows[i].State))
			}
			rows = append(rows, clip("  "+clipMiddle(op.Key, keyW)+" "+note))
		}
	}
	room := n - len(head) - len(tail)
	if room < 0 {
		// The title goes last of all; the warnings before the keys.
		for len(head) > 1 && len(head)+len(tail) > n {
			head = head[:len(head)-1]
		}
		room = 0
	}
	if len(rows) > room {
		if room == 0 {
			rows = nil
		} else {
			rest := len(rows) - (room - 1)
			more := fmt.Sprintf("  … and %d more", rest)
			if room == 1 {
				more = fmt.Sprintf("  (%d rows not shown)", rest)
			}
			rows = append(rows[:room-1], clip(s.Muted.Render(more)))
		}
	}
	out := append(append(head, rows...), tail...)
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// bulkDecided shows every row's result in the box and refreshes the list;
// the marks are cleared (a refused row is looked at again, not retried).
func (m Model) bulkDecided(msg bulkDecisionMsg) (Model, tea.Cmd) {
	if msg.Seq != m.action.seq || m.action.stage != stageRunning {
		return m, nil
	}
	e := m.env()
	if msg.Err != nil && len(msg.Outcomes) == 0 {
		m.log.Printf("bulk %s failed: %v", msg.Action, msg.Err)
		m.action.stage = stageForm
		m.action.problem = oneLine(writeErrText(msg.Err))
		return m, nil
	}
	written := 0
	for _, o := range msg.Outcomes {
		if o.Verdict == reconcile.VerdictWritten {
			written++
		}
	}
	m.log.Printf("bulk %s by %s: %d of %d written", msg.Action, m.cfg.Operator, written, len(m.action.bulk))
	m.action.stage = stageResults
	m.action.setOutcomes(msg.Outcomes)
	m.list.marked = marks{ops: map[int64]model.Operation{}}
	kind, text := bannerOK, fmt.Sprintf("%s: %s of %s written, recorded for %s.", m.action.action.Verb(), count(written), plural(len(m.action.bulk), "operation", "operations"), m.cfg.Operator)
	if msg.Err != nil {
		kind, text = bannerErr, text+" Then the ledger failed: "+oneLine(writeErrText(msg.Err))
	} else if written < len(m.action.bulk) {
		kind = bannerErr
		text += " The others were refused: nothing was written for them."
	}
	m.banner = banner{kind: kind, text: text, at: e.now}
	c := m.reloadAll()
	return m, c
}

// againstWhat is the finding a bulk decision of action goes against.
func againstWhat(a model.Action) string {
	if a == model.ActionMarkApplied {
		return "the provider has nothing"
	}
	return "the provider has it"
}
