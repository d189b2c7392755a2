package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// Provider findings in the console: the FINDING column and its filter, the
// background triage run (T), and the review by finding (R) — one review of
// the view's (or the marked) operations, proposing "mark applied" where the
// provider has the effect and "mark not applied" where an authoritative
// provider has nothing, each written as its own compare-and-set. Findings
// are evidence for a person: nothing is written until the person presses y.

// findingCell is the FINDING column: what the latest lookup found — or
// the earlier one that binds a decision (model.Operation.Shown: "has it
// (earlier)" after a later "cannot tell") — the provider's reference, and
// how long ago; a stale finding says so first.
func findingCell(f *model.Finding, now time.Time) string {
	if f == nil {
		return "not checked"
	}
	return f.Line(f.Ref, age(now, f.At))
}

// findingCellIn is the FINDING cell in w cells: the finding's words ("has
// it", "has nothing", "cannot tell", and "stale:") are never cut — the
// reference narrows in its middle first, then it goes, then the age.
func findingCellIn(f *model.Finding, now time.Time, w int) string {
	full := findingCell(f, now)
	if ansi.StringWidth(findingWords(f)) > w {
		// Too narrow for the words (40 columns): a short form that is
		// never cut and never one of the others cut ("ha…" read as both
		// "has it" and "has nothing").
		return fit(findingTiny(f), w)
	}
	if f == nil || ansi.StringWidth(full) <= w {
		return fit(full, w)
	}
	when := age(now, f.At)
	if f.Kind == model.FindingHasIt && f.Ref != "" {
		// "has it · " + ref + " " + when, with the ref clipped.
		if room := w - ansi.StringWidth(f.Line("", when)) - 3; room >= 4 {
			return fit(f.Line(clipMiddle(f.Ref, room), when), w)
		}
	}
	if short := f.Line("", when); ansi.StringWidth(short) <= w {
		return fit(short, w)
	}
	return fit(strings.TrimSpace(f.Line("", "")), w)
}

// findingTiny is a finding in at most 6 cells, for a FINDING column too
// narrow for its words: "has it", "none" (has nothing), "can't" (cannot
// tell), "other" (has another request), "stale", "—" (not checked). An earlier lookup that binds reads as
// its words: it is what a decision is held to.
func findingTiny(f *model.Finding) string {
	switch {
	case f == nil:
		return "—"
	case f.Stale:
		return "stale"
	case f.Kind == model.FindingHasIt:
		return "has it"
	case f.Kind == model.FindingHasNothing:
		return "none"
	case f.Kind == model.FindingHasOther:
		return "other"
	}
	return "can't"
}

// findingWords is the narrowest a finding can be shown in: its words.
func findingWords(f *model.Finding) string {
	if f == nil {
		return "not checked"
	}
	return strings.TrimSpace(f.Line("", ""))
}

// findingStyle colours a finding by what it supports; stale and "cannot
// tell" support nothing.
func findingStyle(s *Styles, f *model.Finding) lipgloss.Style {
	switch {
	case f == nil || f.Stale:
		return s.Muted
	case f.Kind == model.FindingHasIt:
		return s.State(model.StateApplied)
	case f.Kind == model.FindingHasNothing:
		return s.State(model.StateNotApplied)
	}
	return s.State(model.StateUnknown)
}

// findingSentence is a finding in the detail: what, where, when, by whom.
func findingSentence(e env, f *model.Finding) string {
	text := f.Kind.Words()
	if f.Ref != "" {
		text += " · " + f.Ref
	}
	text += fmt.Sprintf(" — %s, %s (%s ago)", or(f.Provider, "provider"), clockTime(f.At, e), age(e.now, f.At))
	if f.By != "" {
		text += ", " + f.By
	}
	switch {
	case f.Kind == model.FindingCannotTell && f.Detail != "":
		// The words are said once: the detail repeats them.
		text += ": " + cannotTellWhy(f.Detail)
	case f.Detail != "":
		text += ": " + localTimes(f.Detail, e)
	}
	if f.Kind == model.FindingCannotTell {
		text += " — no evidence either way"
	}
	if f.Stale {
		text += " — stale: an attempt that may have reached the provider came after it; check again (c)"
	}
	return text
}

// nextFindingFilter is the filter after f in the f key's cycle.
func nextFindingFilter(f model.FindingFilter) model.FindingFilter {
	cycle := append([]model.FindingFilter{model.FilterAnyFinding}, model.AllFindingFilters...)
	for i, x := range cycle {
		if x == f {
			return cycle[(i+1)%len(cycle)]
		}
	}
	return model.FilterAnyFinding
}

// ---- the background triage run ------------------------------------------

// triageRun is the console's triage in the background: it runs in its own
// goroutine and reports through ch, which a tea.Cmd reads one message at
// a time, so Update never waits for a provider.
type triageRun struct {
	seq     int
	running bool
	cancel  context.CancelFunc
	ch      chan tea.Msg
	done    int
	total   int
	n       map[model.FindingKind]int
	errs    int
}

// triageRequestMsg asks the root to start (or stop) a triage run.
type triageRequestMsg struct{}

// triageEventMsg is one finding of the run.
type triageEventMsg struct {
	Seq         int
	Done, Total int
	Kind        model.FindingKind
	Err         error
}

// triageDoneMsg ends the run.
type triageDoneMsg struct {
	Seq    int
	Report reconcile.TriageReport
	Err    error
}

func waitTriage(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// startTriage starts a run over the console's tenant scope. It sets no
// rate: each provider is paced as `retrysafe triage` without --rate paces
// it (its config entry's lookup rate, else the default; see
// reconcile.Service.LookupRate).
func startTriage(ctx context.Context, svc *reconcile.Service, seq int, scope, operator string) (triageRun, tea.Cmd) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan tea.Msg, 64)
	run := triageRun{seq: seq, running: true, cancel: cancel, ch: ch, n: map[model.FindingKind]int{}}
	go func() {
		rep, err := svc.Triage(ctx, reconcile.TriageOptions{Tenant: scope, By: "console triage by " + operator,
			Progress: func(ev reconcile.TriageEvent) {
				msg := triageEventMsg{Seq: seq, Done: ev.Done, Total: ev.Total, Kind: ev.Looked.Finding.Kind, Err: ev.Err}
				select {
				case ch <- msg:
				default:
					// The screen is behind: this step's count arrives with
					// the final report; the run never waits on the screen.
				}
			}})
		ch <- triageDoneMsg{Seq: seq, Report: rep, Err: err}
		cancel()
	}()
	return run, waitTriage(ch)
}

func (t triageRun) progressText() string {
	return fmt.Sprintf("Triage: %s of %s asked · has it %s · has nothing %s · cannot tell %s%s%s · T stops",
		count(t.done), count(t.total), count(t.n[model.FindingHasIt]), count(t.n[model.FindingHasNothing]),
		count(t.n[model.FindingCannotTell]), otherText(t.n[model.FindingHasOther]), errsText(t.errs))
}

// otherText is a triage count of "has another request" (none: nothing
// said): no evidence either way, not to be marked applied.
func otherText(n int) string {
	if n == 0 {
		return ""
	}
	return " · has another request " + count(n) + " (not to be marked applied)"
}

func errsText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" · %s not recorded", count(n))
}

// toggleTriage starts a triage run, or stops the one running.
func (m Model) toggleTriage(e env) (Model, tea.Cmd) {
	if m.triage.running {
		m.triage.cancel()
		m.banner = banner{kind: bannerInfo, text: "Stopping the triage run: what was recorded stays.", at: e.now}
		return m, nil
	}
	if m.cfg.ReadOnly || !e.canCheck {
		m.banner = banner{kind: bannerErr, text: "Triage is off in a read-only console: it opens no provider and records nothing. Run `retrysafe triage --read-only` to see findings without recording them.", at: e.now}
		return m, nil
	}
	var c tea.Cmd
	m.triage, c = startTriage(m.ctx, m.cfg.Service, m.triage.seq+1, m.scope, m.cfg.Operator)
	m.log.Printf("triage started by %s (tenant %q)", m.cfg.Operator, m.scope)
	m.banner = banner{kind: bannerInfo, text: "Triage: listing the unknown operations… (T stops)", at: e.now}
	return m, c
}

// triageEvent counts one finding and waits for the next.
func (m Model) triageEvent(msg triageEventMsg, e env) (Model, tea.Cmd) {
	if msg.Seq != m.triage.seq || !m.triage.running {
		return m, nil
	}
	t := &m.triage
	t.done, t.total = msg.Done, msg.Total
	if msg.Err != nil {
		t.errs++
	} else {
		t.n[msg.Kind]++
	}
	m.banner = banner{kind: bannerInfo, text: t.progressText(), at: e.now}
	return m, waitTriage(t.ch)
}

// triageDone shows the run's summary; the rows have been updating from the
// ledger as findings were recorded, and are read once more now.
func (m Model) triageDone(msg triageDoneMsg, e env) (Model, tea.Cmd) {
	if msg.Seq != m.triage.seq {
		return m, nil
	}
	m.triage.running = false
	if msg.Err != nil {
		m.banner = banner{kind: bannerErr, text: "Triage could not start: " + oneLine(msg.Err.Error()), at: e.now}
		return m, nil
	}
	r, t := msg.Report, msg.Report.Totals()
	text := fmt.Sprintf("Triage asked about %s of %s in %.1fs: has it %s · has nothing %s · cannot tell %s%s%s. Nothing was decided — f filters by finding, R reviews.",
		count(r.Checked), plural(r.Candidates, "operation", "operations"), r.Elapsed.Seconds(), count(t.HasIt), count(t.HasNothing), count(t.CannotTell), otherText(t.HasOther), errsText(t.Errors))
	kind := bannerOK
	if r.Cancelled {
		text = "Triage stopped. " + text
		kind = bannerInfo
	}
	if t.Errors > 0 {
		kind = bannerErr
	}
	m.log.Printf("triage done: %+v", t)
	m.banner = banner{kind: kind, text: text, at: e.now}
	c := m.reloadAll()
	return m, c
}

// ---- the review by finding ------------------------------------------------

// reviewRequestMsg asks for a review of these operations (the marked
// ones), or of the whole view when Ops is nil.
type reviewRequestMsg struct {
	Ops   []model.Operation
	Query store.ListQuery
}

// reviewOpsMsg brings the view's operations for a review.
type reviewOpsMsg struct {
	Seq       int
	Ops       []model.Operation
	Truncated bool
	Err       error
	// Refresh: a fresh read of an open review's operations after the
	// ledger changed (reloadReviewOps), not its first.
	Refresh bool
	// Rechecked: the operations after their providers were asked again
	// (recheckReviewOps), not to be asked again.
	Rechecked bool
}

// recheckReviewOps asks the providers of a review's Recheck rows again
// (a "has nothing" this console did not ask for: reconcile.LookFirst
// records this console's own), and brings the review's operations back
// with their new findings.
func recheckReviewOps(ctx context.Context, svc *reconcile.Service, seq int, msg reviewOpsMsg, recheck []model.Operation, by string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout+reconcile.DefaultLookupTimeout*time.Duration(1+len(recheck)/reconcile.DefaultTriageConcurrency))
		defer cancel()
		looked, err := svc.LookFirst(ctx, model.ActionMarkNotApplied, recheck, by)
		byKey := make(map[[2]string]model.Operation, len(looked))
		for _, op := range looked {
			byKey[[2]string{op.Tenant, op.Key}] = op
		}
		out := make([]model.Operation, len(msg.Ops))
		for i, op := range msg.Ops {
			if l, ok := byKey[[2]string{op.Tenant, op.Key}]; ok {
				op = l
			}
			out[i] = op
		}
		return reviewOpsMsg{Seq: seq, Ops: out, Truncated: msg.Truncated, Err: err, Rechecked: true}
	}
}

// reloadReviewOps reads an open review's operations again: the marked ones
// by key, or the view's query.
func reloadReviewOps(ctx context.Context, st store.Ledger, seq int, src reviewRequestMsg) tea.Cmd {
	if src.Ops == nil {
		return func() tea.Msg {
			msg := loadReviewOps(ctx, st, seq, src.Query)().(reviewOpsMsg)
			msg.Refresh = true
			return msg
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		ops := make([]model.Operation, 0, len(src.Ops))
		for _, o := range src.Ops {
			op, err := st.Get(ctx, o.Tenant, o.Key)
			if err != nil {
				return reviewOpsMsg{Seq: seq, Err: err, Refresh: true}
			}
			ops = append(ops, op.Visible())
		}
		return reviewOpsMsg{Seq: seq, Ops: ops, Refresh: true}
	}
}

func loadReviewOps(ctx context.Context, st store.Ledger, seq int, q store.ListQuery) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		q.Limit = reconcile.MaxBulk + 1
		ops, err := st.List(ctx, q)
		msg := reviewOpsMsg{Seq: seq, Err: err}
		if len(ops) > reconcile.MaxBulk {
			ops, msg.Truncated = ops[:reconcile.MaxBulk], true
		}
		for i := range ops {
			ops[i] = ops[i].Visible()
		}
		msg.Ops = ops
		return msg
	}
}

// reviewDoneMsg is every proposed decision's result.
type reviewDoneMsg struct {
	Seq      int
	Outcomes []reviewOutcome
	Err      error
}

type reviewOutcome struct {
	Action model.Action
	reconcile.Outcome
}

func writeReview(ctx context.Context, svc *reconcile.Service, seq int, d reconcile.Decision, r reconcile.FindingReview) tea.Cmd {
	return func() tea.Msg {
		n := len(r.Apply) + len(r.NotApplied)
		ctx, cancel := context.WithTimeout(ctx, ioTimeout*time.Duration(1+n/1000))
		defer cancel()
		var out []reviewOutcome
		for _, part := range []struct {
			action  model.Action
			targets []reconcile.Target
		}{{model.ActionMarkApplied, r.Apply}, {model.ActionMarkNotApplied, r.NotApplied}} {
			if len(part.targets) == 0 {
				continue
			}
			os, err := svc.DecideMany(ctx, part.action, d, part.targets)
			for _, o := range os {
				out = append(out, reviewOutcome{Action: part.action, Outcome: o})
			}
			if err != nil {
				return reviewDoneMsg{Seq: seq, Outcomes: out, Err: err}
			}
		}
		return reviewDoneMsg{Seq: seq, Outcomes: out}
	}
}

type reviewStage int

const (
	reviewLoading reviewStage = iota
	reviewForm
	reviewConfirm
	reviewRunning
	reviewResults
)

// reviewModel is the review by finding, an overlay.
type reviewModel struct {
	seq       int
	stage     reviewStage
	review    reconcile.FindingReview
	truncated bool
	// rechecking is how many providers are being asked again before the
	// review is shown (reconcile.FindingReview.Recheck).
	rechecking int
	// cancel stops the recheck's lookups when the review is closed first
	// (nil: none running).
	cancel   context.CancelFunc
	reason   textinput.Model
	problem  string
	outcomes []reviewOutcome
	closed   bool
	// src is what the review was asked for, read again when the ledger
	// changes under it (a lookup, a retry that makes a finding stale).
	src reviewRequestMsg

	width, height int
}

func newReview(seq int) reviewModel {
	in := textinput.New()
	in.Prompt = "› "
	in.CharLimit = maxFieldLen
	in.Cursor.SetMode(cursor.CursorStatic)
	in.SetValue("provider lookup: the finding shown for each")
	return reviewModel{seq: seq, reason: in}
}

// proposed is how many decisions the review would write.
func (r reviewModel) proposed() int { return len(r.review.Apply) + len(r.review.NotApplied) }

func (r reviewModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		if r.stage == reviewForm {
			var c tea.Cmd
			r.reason, c = r.reason.Update(msg)
			return r, c
		}
		return r, nil
	}
	switch r.stage {
	case reviewLoading, reviewRunning:
		if k.String() == "esc" && r.stage == reviewLoading {
			r.closed = true
			if r.cancel != nil {
				r.cancel() // the recheck's lookups not made yet are not made
			}
		}
		return r, nil
	case reviewResults:
		if k.String() == "esc" || k.String() == "enter" || k.String() == "q" {
			r.closed = true
		}
		return r, nil
	case reviewConfirm:
		switch k.String() {
		case "y":
			if k.Paste || r.proposed() == 0 {
				return r, nil
			}
			r.stage = reviewRunning
			d := reconcile.Decision{Operator: e.operator, Reason: strings.TrimSpace(r.reason.Value())}
			return r, writeReview(e.ctx, e.svc, r.seq, d, r.review)
		case "esc":
			r.stage = reviewForm
			return r, r.reason.Focus()
		}
		return r, nil
	}
	// The form: the reason, then enter reviews.
	switch k.String() {
	case "esc":
		r.closed = true
		return r, nil
	case "enter":
		d := reconcile.Decision{Operator: e.operator, Reason: strings.TrimSpace(r.reason.Value())}
		for _, p := range d.Problems(model.ActionAuthorizeKey) {
			if p.Field == reconcile.FieldReason || p.Field == reconcile.FieldOperator {
				r.problem = p.Message
				return r, nil
			}
		}
		if r.proposed() == 0 {
			r.problem = "No decision to propose: nothing here has a fresh finding a bulk decision may rest on. Decide them one by one (enter on a row)."
			return r, nil
		}
		r.problem = ""
		r.stage = reviewConfirm
		r.reason.Blur()
		return r, nil
	}
	var c tea.Cmd
	r.reason, c = r.reason.Update(k)
	return r, c
}

func (r reviewModel) View(e env) string {
	s := e.styles
	boxW := min(max(r.width-6, 30), 100)
	inner := boxW - 4
	var b strings.Builder
	b.WriteString(s.Title.Render("Review by finding") + "\n")
	if r.stage == reviewLoading {
		text := "reading the operations in view… (esc cancels)"
		if r.rechecking > 0 {
			text = fmt.Sprintf("asking again about %s another process recorded… (esc cancels)", plural(r.rechecking, `"has nothing"`, `"has nothing" findings`))
		}
		b.WriteString("\n" + s.Muted.Render(text))
		return "\n" + lipgloss.PlaceHorizontal(r.width, lipgloss.Center, s.Box.Width(boxW).Render(b.String()))
	}
	rows := max((r.height-18)/3, 2)
	section := func(title string, n int, style lipgloss.Style, lines []string) {
		if n == 0 {
			return
		}
		b.WriteString("\n" + style.Render(title) + "\n")
		for i, l := range lines {
			if i == rows && len(lines) > rows+1 {
				b.WriteString(s.Muted.Render(fmt.Sprintf("  … and %s more", count(len(lines)-rows))) + "\n")
				break
			}
			b.WriteString(truncate("  "+l, inner) + "\n")
		}
	}
	// A name too long for its column is clipped in its middle: keys differ
	// at their ends, and "umbrella-logistics/op…" named no operation.
	name := func(tenant, key string) string {
		w := max(inner-48, 16)
		return fit(clipMiddle(tenant+"/"+key, w), w)
	}
	targetLine := func(t reconcile.Target, what string) string {
		return fmt.Sprintf("%s  %s (v%d) → %s", name(t.Tenant, t.Key), t.ExpectState, t.ExpectVersion, what)
	}
	opLine := func(op model.Operation) string {
		return fmt.Sprintf("%s  %s · %s", name(op.Tenant, op.Key), op.State, findingCell(op.Finding, e.now))
	}
	if r.stage == reviewResults {
		n := map[reconcile.Verdict]int{}
		var lines []string
		for _, o := range r.outcomes {
			n[o.Verdict]++
			if o.Verdict == reconcile.VerdictWritten {
				lines = append(lines, s.BannerOK.Render("written ")+fmt.Sprintf(" %s  %s → %s (v%d)", oneLine(o.Tenant+"/"+o.Key), o.ExpectState, o.State, o.Version))
			} else {
				why := localTimes(oneLine(writeErrText(o.Err)), e)
				if gr := (*reconcile.GraceRefusal)(nil); o.Verdict == reconcile.VerdictSkipped && errors.As(o.Err, &gr) {
					why = fmt.Sprintf("within the grace: sent %s; decide after %s", clockTime(gr.Sent, e), clockTime(gr.Until, e))
				}
				lines = append(lines, s.BannerErr.Render(fmt.Sprintf("%-8s", o.Verdict))+fmt.Sprintf(" %s  %s", oneLine(o.Tenant+"/"+o.Key), why))
			}
		}
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
		section(summary, len(lines), s.Bold, lines)
		if r.problem != "" {
			b.WriteString("\n" + s.BannerErr.Render(wrap(r.problem, inner, " ")) + "\n")
		}
		b.WriteString("\n" + s.Key.Render("esc") + s.Muted.Render(" close"))
		return r.fit(e, s.Box, boxW, b.String())
	}
	var apply, notApplied, oneByOne, laterUnsure, left []string
	for _, t := range r.review.Apply {
		apply = append(apply, targetLine(t, "applied · evidence "+t.Evidence))
	}
	for _, t := range r.review.NotApplied {
		notApplied = append(notApplied, targetLine(t, "not applied · "+or(t.Finding.Provider, "provider")+" has nothing"))
	}
	for _, op := range r.review.OneByOne {
		oneByOne = append(oneByOne, opLine(op))
	}
	for _, op := range r.review.LaterUnsure {
		laterUnsure = append(laterUnsure, opLine(op))
	}
	for _, op := range r.review.Left {
		left = append(left, opLine(op))
	}
	if r.truncated {
		b.WriteString(s.Muted.Render(fmt.Sprintf("The newest %s in view (a review takes at most that many).", count(reconcile.MaxBulk))) + "\n")
	}
	section(fmt.Sprintf("Mark applied — the provider has it (%s)", count(len(apply))), len(apply), s.State(model.StateApplied), apply)
	section(fmt.Sprintf("Mark not applied — an authoritative provider has nothing (%s)", count(len(notApplied))), len(notApplied), s.State(model.StateNotApplied), notApplied)
	section(fmt.Sprintf("Decide one by one — has nothing, but the provider's lookup is not declared authoritative (%s)", count(len(oneByOne))), len(oneByOne), s.State(model.StateUnknown), oneByOne)
	section(fmt.Sprintf("Decide one by one — the latest lookup could not tell (an earlier one found nothing) (%s)", count(len(laterUnsure))), len(laterUnsure), s.State(model.StateUnknown), laterUnsure)
	section(fmt.Sprintf("Nothing proposed — cannot tell, has another request, stale, not checked, or not unknown (%s)", count(len(left))), len(left), s.Muted, left)
	if r.proposed() == 0 && len(oneByOne)+len(laterUnsure)+len(left) == 0 {
		b.WriteString("\n" + s.Muted.Render("Nothing in view.") + "\n")
	}
	b.WriteString("\n" + s.Label.Render("reason") + s.Muted.Render("  recorded with every decision") + "\n")
	in := r.reason
	in.Width = inner - 3
	b.WriteString(in.View() + "\n")
	if r.problem != "" {
		b.WriteString(s.InputErr.Render("  ✗ "+r.problem) + "\n")
	}
	b.WriteString("\n")
	switch r.stage {
	case reviewForm:
		b.WriteString(s.Muted.Render("enter review · esc cancel"))
	case reviewConfirm:
		b.WriteString(s.Bold.Render(fmt.Sprintf("Write %s, each its own compare-and-set with the version shown, by %s?", plural(r.proposed(), "decision", "decisions"), oneLine(e.operator))) + "\n")
		b.WriteString(s.Key.Render("y") + s.Muted.Render(" write them     ") + s.Key.Render("esc") + s.Muted.Render(" back"))
	case reviewRunning:
		b.WriteString(s.Muted.Render(fmt.Sprintf("%s writing %s…", e.spin, plural(r.proposed(), "decision", "decisions"))))
	}
	box := s.Box
	if r.stage != reviewForm {
		box = s.BoxDanger
	}
	return r.fit(e, box, boxW, b.String())
}

// fit draws the review's text in its box, or — too tall for the screen
// (40×10, 60×15) — the tiny review: what y writes, how many of each kind,
// and the keys always on screen; the rows get the lines left.
func (r reviewModel) fit(e env, box lipgloss.Style, boxW int, text string) string {
	drawn := box.Width(boxW).Render(text)
	if lipgloss.Height(drawn)+1 > r.height {
		drawn = box.Width(boxW).Render(strings.Join(r.tiny(e, boxW-4, r.height-2), "\n"))
		return lipgloss.PlaceHorizontal(r.width, lipgloss.Center, drawn)
	}
	return "\n" + lipgloss.PlaceHorizontal(r.width, lipgloss.Center, drawn)
}

// tiny is the review, or its results, in at most n lines of inner cells,
// each one thing, clipped: the title, a count line for each kind of
// proposal (what y writes), the reason, the question and the keys; then
// the rows, the proposals' first, as room allows, with how many more.
func (r reviewModel) tiny(e env, inner, n int) []string {
	s := e.styles
	clip := func(t string) string { return truncate(t, inner) }
	name := func(tenant, key string) string { return clipMiddle(tenant+"/"+key, max(inner-4, 8)) }
	head := []string{clip(s.Title.Render("Review by finding"))}
	var tail []string
	type group struct {
		count string
		rows  []string
	}
	var groups []group
	if r.stage == reviewResults {
		n := map[reconcile.Verdict]int{}
		var rows []string
		for _, o := range r.outcomes {
			n[o.Verdict]++
			mark := s.BannerOK.Render("ok ")
			if o.Verdict != reconcile.VerdictWritten {
				mark = s.BannerErr.Render(string(o.Verdict) + " ")
			}
			rows = append(rows, clip("  "+mark+name(o.Tenant, o.Key)))
		}
		summary := fmt.Sprintf("%s written", count(n[reconcile.VerdictWritten]))
		for _, v := range []reconcile.Verdict{reconcile.VerdictStale, reconcile.VerdictIllegal, reconcile.VerdictFailed} {
			if n[v] > 0 {
				summary += fmt.Sprintf(", %s %s", count(n[v]), v)
			}
		}
		if k := n[reconcile.VerdictSkipped]; k > 0 {
			summary += fmt.Sprintf(", %s skipped", count(k))
		}
		groups = append(groups, group{clip(s.Bold.Render(summary)), rows})
		if r.problem != "" {
			tail = append(tail, clip(s.BannerErr.Render(oneLine(r.problem))))
		}
		tail = append(tail, clip(s.Key.Render("esc")+s.Muted.Render(" close")))
	} else {
		targets := func(ts []reconcile.Target) []string {
			var out []string
			for _, t := range ts {
				out = append(out, clip("  "+name(t.Tenant, t.Key)))
			}
			return out
		}
		ops := func(os []model.Operation) []string {
			var out []string
			for _, op := range os {
				out = append(out, clip("  "+name(op.Tenant, op.Key)))
			}
			return out
		}
		if r.truncated {
			head = append(head, clip(s.Muted.Render(fmt.Sprintf("the newest %s in view", count(reconcile.MaxBulk)))))
		}
		for _, g := range []struct {
			words string
			style lipgloss.Style
			rows  []string
		}{
			{"Mark applied: %d (has it)", s.State(model.StateApplied), targets(r.review.Apply)},
			{"Mark not applied: %d (nothing)", s.State(model.StateNotApplied), targets(r.review.NotApplied)},
			{"One by one: %d (not authoritative)", s.State(model.StateUnknown), ops(r.review.OneByOne)},
			{"One by one: %d (latest could not tell)", s.State(model.StateUnknown), ops(r.review.LaterUnsure)},
			{"Not proposed: %d", s.Muted, ops(r.review.Left)},
		} {
			if len(g.rows) > 0 {
				groups = append(groups, group{clip(g.style.Render(fmt.Sprintf(g.words, len(g.rows)))), g.rows})
			}
		}
		if len(groups) == 0 {
			head = append(head, clip(s.Muted.Render("Nothing in view.")))
		}
		switch r.stage {
		case reviewForm:
			in := r.reason
			in.Width = max(inner-ansi.StringWidth("reason ")-3, 4)
			tail = append(tail, clip(s.Label.Render("reason ")+in.View()))
			if r.problem != "" {
				tail = append(tail, clip(s.InputErr.Render("✗ "+oneLine(r.problem))))
			}
		case reviewConfirm:
			tail = append(tail, clip(s.Bold.Render(fmt.Sprintf("Write %s, by %s?", plural(r.proposed(), "decision", "decisions"), oneLine(e.operator)))),
				clip(s.Key.Render("y")+s.Muted.Render(fmt.Sprintf(" write %d · ", r.proposed()))+s.Key.Render("esc")+s.Muted.Render(" back")))
		case reviewRunning:
			tail = append(tail, clip(s.Muted.Render(fmt.Sprintf("%s writing %s…", e.spin, plural(r.proposed(), "decision", "decisions")))))
		}
	}
	room := n - len(head) - len(tail) - len(groups)
	var body []string
	for _, g := range groups {
		body = append(body, g.count)
		take := min(len(g.rows), max(room, 0))
		if take < len(g.rows) && take > 0 {
			take-- // the last line left says how many more
		}
		body = append(body, g.rows[:take]...)
		room -= take
		if rest := len(g.rows) - take; rest > 0 && room > 0 {
			more := fmt.Sprintf("  … and %d more", rest)
			if take == 0 {
				more = "  " + plural(rest, "row", "rows") + " not shown"
			}
			body = append(body, clip(s.Muted.Render(more)))
			room--
		}
	}
	out := append(append(head, body...), tail...)
	for len(out) > n && len(head) > 0 {
		// Shorter still: the title goes first; the counts and keys stay.
		out, head = out[1:], head[1:]
	}
	return out
}

func (r reviewModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	r.width, r.height = w, h
	return r, nil
}

func (r reviewModel) Keys(e env) keyMap {
	var short []key.Binding
	switch r.stage {
	case reviewForm:
		short = []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "review")), key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	case reviewConfirm:
		short = []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "write them")), key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))}
	default:
		short = []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close"))}
	}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// requestReview opens the review of the marked operations, or reads the
// view's first.
func (m Model) requestReview(msg reviewRequestMsg, e env) (Model, tea.Cmd) {
	if m.cfg.ReadOnly {
		m.banner = banner{kind: bannerErr, text: "Read-only console: no decisions. Reopen without --read-only to review findings.", at: e.now}
		return m, nil
	}
	m.review = newReview(m.review.seq + 1)
	m.review.width, m.review.height = m.width, m.bodyHeight()
	m.overlay = overlayReview
	m.review.src = msg
	if msg.Ops != nil {
		return m.reviewLoaded(reviewOpsMsg{Seq: m.review.seq, Ops: msg.Ops}, e)
	}
	return m, loadReviewOps(m.ctx, m.cfg.Store, m.review.seq, msg.Query)
}

func (m Model) reviewLoaded(msg reviewOpsMsg, e env) (Model, tea.Cmd) {
	if msg.Refresh {
		return m.reviewRefreshed(msg), nil
	}
	if msg.Seq != m.review.seq || m.overlay != overlayReview || m.review.stage != reviewLoading {
		return m, nil
	}
	if msg.Err != nil {
		m.overlay = overlayNone
		m.banner = banner{kind: bannerErr, text: "Cannot read the operations to review: " + oneLine(msg.Err.Error()), at: e.now}
		return m, nil
	}
	if m.review.cancel != nil {
		m.review.cancel()
		m.review.cancel = nil
	}
	m.review.review = m.cfg.Service.ReviewByFinding(msg.Ops)
	if rc := m.review.review.Recheck; len(rc) > 0 && !msg.Rechecked {
		// A "has nothing" read from the ledger, not asked for here: asked
		// again before anything is proposed on it.
		m.review.rechecking = len(rc)
		ctx, cancel := context.WithCancel(m.ctx)
		m.review.cancel = cancel
		return m, recheckReviewOps(ctx, m.cfg.Service, m.review.seq, msg, rc, m.cfg.Operator)
	}
	m.review.truncated = msg.Truncated
	m.review.stage = reviewForm
	return m, m.review.reason.Focus()
}

// reviewRefreshed takes a fresh read of an open review's operations: if
// what it would propose changed (a lookup recorded since, a retry that
// made a "has nothing" stale, a row decided elsewhere), the proposals are
// the ledger's as it is now, and an open confirmation goes back to the
// form, saying so, so that y never writes what the screen no longer shows.
func (m Model) reviewRefreshed(msg reviewOpsMsg) Model {
	r := m.review
	if msg.Seq != r.seq || m.overlay != overlayReview || msg.Err != nil || (r.stage != reviewForm && r.stage != reviewConfirm) {
		return m
	}
	next := m.cfg.Service.ReviewByFinding(msg.Ops)
	if sameProposals(r.review, next) {
		m.review.review = next // the words shown (ages, other rows) as they are now
		return m
	}
	m.review.review = next
	m.review.problem = "Changed since this review opened: findings or states moved on (a lookup, a retry, a decision); the proposals are the ledger's as it is now."
	if r.stage == reviewConfirm {
		m.review.stage = reviewForm
		m.review.reason.Focus()
	}
	return m
}

// sameProposals reports whether two reviews propose the same decisions,
// on the same versions and findings.
func sameProposals(a, b reconcile.FindingReview) bool {
	same := func(x, y []reconcile.Target) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Tenant != y[i].Tenant || x[i].Key != y[i].Key || x[i].ExpectVersion != y[i].ExpectVersion || x[i].ExpectState != y[i].ExpectState ||
				x[i].Evidence != y[i].Evidence || !sameLookup(x[i].Finding, y[i].Finding) {
				return false
			}
		}
		return true
	}
	return same(a.Apply, b.Apply) && same(a.NotApplied, b.NotApplied)
}

func (m Model) reviewWritten(msg reviewDoneMsg, e env) (Model, tea.Cmd) {
	if msg.Seq != m.review.seq || m.review.stage != reviewRunning {
		return m, nil
	}
	m.review.stage, m.review.outcomes = reviewResults, msg.Outcomes
	written := 0
	for _, o := range msg.Outcomes {
		if o.Verdict == reconcile.VerdictWritten {
			written++
		}
	}
	m.log.Printf("review by finding by %s: %d of %d written", m.cfg.Operator, written, m.review.proposed())
	kind, text := bannerOK, fmt.Sprintf("Review by finding: %s of %s written, recorded for %s.", count(written), plural(m.review.proposed(), "decision", "decisions"), m.cfg.Operator)
	if msg.Err != nil {
		m.review.problem = "Then the ledger failed: " + oneLine(writeErrText(msg.Err))
		kind, text = bannerErr, text+" "+m.review.problem
	} else if written < m.review.proposed() {
		kind, text = bannerErr, text+" The others were refused per row: nothing was written for them."
	}
	m.list.marked = marks{ops: map[int64]model.Operation{}}
	m.banner = banner{kind: kind, text: text, at: e.now}
	c := m.reloadAll()
	return m, c
}
