package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/cellbuf"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operator decision: a form (evidence, reason, new key), validated as
// it is submitted; then a confirmation that shows the exact transition —
// from → to, tenant, key — and only then the write, through reconcile's
// decision functions with the state and version the screen showed.

// allowed reports whether op allows a at now: an in_progress operation
// nobody holds (its claim released, its lease ended) allows what an
// unknown one does; one whose lease is live, nothing (reconcile.LegalAt).
func allowed(op model.Operation, a model.Action, now time.Time) bool {
	return reconcile.AllowedAt(op, a, now) && !reconcile.OtherRequestRefuses(a, op)
}

// needsWords is a key's help words, after its own, for what the write
// asks for first (o: reconcile.OfferOf, the write's rule): against the
// finding that binds it, the typed override, ": override, against the
// finding" — for good, the grace is moot then, as in the review; within
// the grace after the latest request, ": override until 15:04:05" (the
// time of day: a grace is minutes); "" when nothing.
func needsWords(o reconcile.Offer, e env) string {
	switch {
	case !o.Allowed:
		return ""
	case o.Against:
		return ": override, against the finding"
	case o.Grace != nil:
		return ": override until " + o.Grace.Until.In(e.loc).Format("15:04:05")
	}
	return ""
}

type actionStage int

const (
	stageForm actionStage = iota
	stageConfirm
	stageRunning
)

// maxFieldLen matches what reconcile accepts for reasons and evidence.
const maxFieldLen = 2000

type formField struct {
	label string
	field reconcile.Field // which of the decision's fields it fills
	hint  string
	input textinput.Model
	err   string
}

// overrideWord is what an operator types to write a decision against the
// last provider check's finding: a word, not a key, so no stray or
// repeated keystroke can pass it.
const overrideWord = "override"

type actionModel struct {
	keys   formKeys
	action model.Action
	op     model.Operation // as shown when the action was asked for
	fields []formField
	focus  int
	stage  actionStage
	seq    int
	closed bool
	// finding is the last provider check of this operation, if one
	// answered: a decision against it needs the typed override.
	finding *provider.Evidence
	// cannotTell is why the provider cannot tell now (a failed check, a
	// fresh recorded "cannot tell"), or "": the box says it, with what the
	// decision risks. earlier is the lookup before it that said something
	// (has it, has nothing), when there is one: it is then the decision's
	// finding, as it is the ledger's when it writes.
	cannotTell string
	earlier    *model.Finding
	// history: with the provider unable to tell, the operation's lookups
	// are read (an actionOpMsg) before the review may open, so that an
	// earlier finding is never missed; historyErr is why they could not be.
	history    historyState
	historyErr string
	// whyMax clips the reason on a terminal too short for it whole (0:
	// whole); the detail always has it in full.
	whyMax int
	// override is where the operator types overrideWord.
	override    textinput.Model
	overrideErr string
	// problem is a refusal that does not belong to one field (the write
	// was refused: stale, illegal), shown above the form that was kept.
	problem string
	// changed is the operation as a refresh found it after the form was
	// opened, when it is no longer what the decision expects: the write
	// would be refused, and the box says so before anyone presses y.
	changed   *model.Operation
	changedBy *model.Decision
	// refusedStale: the last write was refused because the operation had
	// moved on; the fresh read that follows names who moved it.
	refusedStale bool

	width, height int

	// bulk: the marked operations a bulk decision is about (op is the
	// first); outcomes: each one's result once written.
	bulk     []model.Operation
	outcomes []reconcile.Outcome
	// checkingN: how many marked rows' providers are being asked before
	// the review; overriding: the bulk review's override word is being
	// typed (o), to write the rows against their findings too.
	checkingN  int
	overriding bool
	// bulkEval: what setBulk worked out about each marked row, once.
	bulkEval
	// tiny: the box on a terminal too small for it compact (view);
	// tinyWords: its warnings in a few words too.
	// oneLine: the warning against the finding on one line (the tiny
	// form with a change under it, 40×10).
	tiny, tinyWords, oneLine bool
	// offTab: how many marked operations are not on the tab shown.
	offTab int
	// grace is the write's refusal within the grace after the
	// operation's latest request (the provider may still apply it), as
	// worked out from its attempts (graceAt) or as the write refused it:
	// the review says when it was sent and when to decide, y does not
	// write, and only the typed override writes it (WithinGrace).
	// attempts are the operation's recorded attempts, once read.
	grace        *reconcile.GraceRefusal
	attempts     []model.Attempt
	attemptsRead bool
	// bulkGrace: the marked rows within the grace after their latest
	// request, as read before the bulk review's y (readBulkGrace): the
	// write skips them.
	bulkGrace
}

const stillReading = "still reading its earlier lookups; press enter again in a moment."

// historyState is where the form is in reading the operation's lookups.
type historyState int

const (
	historyNotNeeded historyState = iota
	historyReading
	historyRead
	historyFailed
)

// historyIn takes the operation's attempts, read when the form opened
// with the provider unable to tell: a lookup before that found the effect
// becomes the decision's finding (against it: the override), and its
// reference the evidence of "applied" if none was typed.
func (a actionModel) historyIn(msg actionOpMsg) actionModel {
	if a.history != historyReading || msg.Seq != a.seq {
		return a
	}
	if msg.Err != nil {
		a.history, a.historyErr = historyFailed, oneLine(msg.Err.Error())
		return a
	}
	a.history = historyRead
	if a.problem == stillReading {
		a.problem = ""
	}
	if f := earlierFinding(a.op.Provider, msg.Attempts); f != nil && (a.finding == nil || (f.Kind == model.FindingHasIt && !a.finding.Found)) {
		a.earlier, a.finding = f, reconcile.EvidenceOf(f)
		if a.action == model.ActionMarkApplied && f.Kind == model.FindingHasIt {
			for i := range a.fields {
				if a.fields[i].field == reconcile.FieldEvidence && strings.TrimSpace(a.fields[i].input.Value()) == "" {
					a.fields[i].input.SetValue(reconcile.RefEvidence(f.Ref))
				}
			}
		}
	}
	return a
}

// noticed keeps a refreshed copy of the operation the form is about, if it
// moved on from the state and version the decision carries, with the
// decision that moved it (who and when), if one did.
func (a actionModel) noticed(op model.Operation, last *model.Decision) actionModel {
	if op.Tenant != a.op.Tenant || op.Key != a.op.Key {
		return a
	}
	if op.Version != a.op.Version || op.State != a.op.State {
		a.changed, a.changedBy = &op, last
	} else {
		a.changed, a.changedBy = nil, nil
	}
	if len(a.bulk) == 0 {
		a = a.findingNoticed(op)
	}
	return a
}

// findingNoticed takes a lookup recorded since the form opened — another
// operator's ops check, a triage, a retry that made a "has nothing"
// stale, the lookup that made the ledger refuse this very write — which
// changes neither the state nor the version but is what the ledger holds
// the decision to: the finding, its warnings and the override the review
// asks for are worked out again from the operation as it is now, as
// requestAction works them out when the form opens.
func (a actionModel) findingNoticed(op model.Operation) actionModel {
	if sameLookup(a.op.Finding, op.Finding) && sameLookup(a.op.BindingFinding, op.BindingFinding) {
		return a
	}
	a.op.Finding, a.op.BindingFinding = op.Finding, op.BindingFinding
	b := op.Binding()
	a.earlier = nil
	a.finding = reconcile.EvidenceOf(b)
	if a.finding != nil && b.Earlier {
		a.earlier = b
	}
	if a.finding == nil || !a.finding.Found {
		// The provider's late "applied" binds as a "has it" (contradicted.go).
		if late := lateApplied(op, nil); late != nil {
			a.finding, a.earlier = late, nil
		}
	}
	if !a.against() {
		// An applied operation's receipt counts too, as the ledger holds
		// it (reconcile.AgainstFinding).
		if ae := reconcile.AppliedEvidence(op); ae != nil && reconcile.Against(a.action, ae) {
			a.finding, a.earlier = ae, nil
		}
	}
	if why := cannotTellNow(op, nil); why != "" || op.Finding.Conclusive() {
		a.cannotTell = why
	}
	for i := range a.fields {
		f := &a.fields[i]
		if f.field != reconcile.FieldEvidence {
			continue
		}
		switch a.action {
		case model.ActionMarkNotApplied:
			f.hint = "why a timeout is not the only evidence: a ticket, the provider's console"
			if reconcile.LookupEvidence(a.finding) != "" {
				f.hint = "optional: the lookup that found nothing is recorded"
			}
		case model.ActionMarkApplied:
			if a.finding != nil && a.finding.Found && strings.TrimSpace(f.input.Value()) == "" {
				f.input.SetValue(reconcile.RefEvidence(a.finding.Ref))
			}
		}
	}
	if a.stage == stageConfirm {
		a.overrideErr = ""
		if a.needsOverride() {
			a.override.Focus()
		} else {
			a.override.Blur()
			a.override.SetValue("")
		}
	}
	return a
}

// sameLookup reports whether two findings name the same lookup, as fresh
// or as stale as each other.
func sameLookup(x, y *model.Finding) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.Seq == y.Seq && x.Kind == y.Kind && x.Stale == y.Stale && x.Earlier == y.Earlier && x.Ref == y.Ref
}

// staleWarning is the box's line about a change under it, or "".
func (a actionModel) staleWarning(e env, width int) string {
	if a.changed == nil {
		return ""
	}
	who := " — " + changedBy(*a.changed, a.changedBy, a.op.Version, e)
	return e.styles.BannerErr.Render(wrap(fmt.Sprintf("Changed since you opened this: it is now %s (version %d)%s. Writing will be refused — esc and look again.",
		a.changed.State, a.changed.Version, who), width, ""))
}

// openAction opens a decision's form. evidence pre-fills the evidence
// field only if it supports the decision (the caller never passes a
// finding's reference to "not applied"); finding is the last provider
// check that answered, or nil.
func openAction(a model.Action, op model.Operation, evidence string, finding *provider.Evidence, s *Styles, seq int) actionModel {
	m := actionModel{keys: newFormKeys(), action: a, op: op, seq: seq, finding: finding, override: newInput(s)}
	m.override.CharLimit = len(overrideWord) + 8
	evidenceField := func(hint string) formField {
		f := formField{label: "Evidence", field: reconcile.FieldEvidence, hint: hint, input: newInput(s)}
		f.input.SetValue(evidence)
		return f
	}
	reasonField := formField{label: "Reason", field: reconcile.FieldReason, hint: "why — for the next person who reads this", input: newInput(s)}
	switch a {
	case model.ActionMarkApplied:
		m.fields = []formField{evidenceField("a provider reference (sbx_12), or where you saw it"), reasonField}
	case model.ActionMarkNotApplied:
		hint := "why a timeout is not the only evidence: a ticket, the provider's console"
		if reconcile.LookupEvidence(finding) != "" {
			hint = "optional: the lookup that found nothing is recorded"
		}
		m.fields = []formField{reasonField, evidenceField(hint)}
	case model.ActionAuthorizeKey:
		newKey := formField{label: "New key", field: reconcile.FieldNewKey, hint: "optional: leave empty and one is generated", input: newInput(s)}
		newKey.input.CharLimit = model.MaxKeyLen
		m.fields = []formField{reasonField, newKey}
	}
	m.fields[0].input.Focus()
	return m
}

// against reports whether the decision contradicts the last finding.
func (a actionModel) against() bool { return reconcile.Against(a.action, a.finding) }

func newInput(s *Styles) textinput.Model {
	in := textinput.New()
	in.Prompt = "› "
	in.CharLimit = maxFieldLen
	in.PromptStyle = s.Key
	in.TextStyle = s.Input
	in.PlaceholderStyle = s.Muted
	in.Cursor.Style = s.Input.Reverse(true)
	in.Cursor.TextStyle = s.Input
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// printable refuses control characters (a paste can carry them).
func printable(v string) error {
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("must be printable text (no control characters)")
		}
	}
	return nil
}

func (a actionModel) value(label string) string {
	for _, f := range a.fields {
		if f.label == label {
			return strings.TrimSpace(f.input.Value())
		}
	}
	return ""
}

func (a actionModel) setFocus(i int) actionModel {
	n := len(a.fields)
	a.focus = (i + n) % n
	for j := range a.fields {
		if j == a.focus {
			a.fields[j].input.Focus()
		} else {
			a.fields[j].input.Blur()
		}
	}
	return a
}

// validate checks every field with reconcile's rule — the one the
// command line uses — and focuses the first field that fails. The
// confirmation against a finding is asked for on the review, not here.
func (a actionModel) validate(e env) (actionModel, bool) {
	first := -1
	for i := range a.fields {
		a.fields[i].err = ""
	}
	for _, p := range a.decision(e).Problems(a.action) {
		for i := range a.fields {
			if a.fields[i].field == p.Field && a.fields[i].err == "" {
				a.fields[i].err = p.Message
				if first < 0 || i < first {
					first = i
				}
			}
		}
	}
	if first >= 0 {
		a = a.setFocus(first)
		return a, false
	}
	return a, true
}

func (a actionModel) decision(e env) reconcile.Decision {
	return reconcile.Decision{
		Tenant: a.op.Tenant, Key: a.op.Key, Operator: e.operator,
		Reason: a.value("Reason"), Evidence: a.value("Evidence"), NewKey: a.value("New key"),
		ExpectState: a.op.State, ExpectVersion: a.op.Version,
		Finding: a.finding, Override: (a.against() || a.bulkAgainst() > 0) && a.override.Value() == overrideWord,
		WithinGrace: a.inGrace() && a.override.Value() == overrideWord,
	}
}

func (a actionModel) update(msg tea.Msg, e env) (actionModel, tea.Cmd) {
	km, isKey := msg.(tea.KeyMsg)
	switch a.stage {
	case stageRunning:
		return a, nil
	case stageChecking:
		if isKey && key.Matches(km, a.keys.Cancel) {
			a.stage = stageForm // its answer is dropped (the stage moved on)
		}
		return a, nil
	case stageConfirm:
		if len(a.bulk) > 0 {
			return a.bulkReview(msg, e)
		}
		return a.review(msg, e)
	case stageResults:
		if km, ok := msg.(tea.KeyMsg); ok && (key.Matches(km, a.keys.Cancel) || km.String() == "q") {
			a.closed = true
		}
		return a, nil
	}
	if isKey {
		switch {
		case key.Matches(km, a.keys.Cancel):
			a.closed = true
			return a, nil
		case key.Matches(km, a.keys.Next):
			return a.setFocus(a.focus + 1), nil
		case key.Matches(km, a.keys.Prev):
			return a.setFocus(a.focus - 1), nil
		case key.Matches(km, a.keys.Submit):
			if a.focus < len(a.fields)-1 {
				return a.setFocus(a.focus + 1), nil
			}
			switch a.history {
			case historyReading:
				a.problem = stillReading
				return a, nil
			case historyFailed:
				a.problem = "its earlier lookups could not be read (" + a.historyErr + "), and one may have found the effect: nothing is written without them — esc and open it again."
				return a, nil
			}
			var ok bool
			if a, ok = a.validate(e); ok {
				a.stage = stageConfirm
				a.problem = ""
				a.override.SetValue("")
				a.overrideErr = ""
				a.overriding = false
				a = a.graceAt(e)
				if a.needsOverride() {
					a.override.Focus()
				}
				if len(a.bulk) > 0 {
					// The marked rows are read again first (bulkReread).
					return a.rereadBulk(e)
				}
				if n := a.needLook(e); n > 0 {
					// Each row's provider is asked first: the review
					// shows what it found, and a row it has is refused
					// (one operation: needs the typed override).
					ops := a.bulk
					if len(ops) == 0 {
						ops = []model.Operation{a.op}
					}
					a.stage, a.checkingN = stageChecking, n
					a.override.Blur()
					return a, lookFirst(e.ctx, e.svc, a.seq, a.action, ops, e.operator)
				}
				return a.readBulkGrace(e)
			}
			return a, nil
		}
	}
	var c tea.Cmd
	f := &a.fields[a.focus]
	f.input, c = f.input.Update(msg)
	f.err = ""
	return a, c
}

// review is the last step before the write. Its key is y — never enter,
// the key that opened it, so a repeated or doubled enter cannot write.
// Against the last finding it takes a typed word instead, which no stray
// key can produce. Pastes are ignored: a decision is not pasted through.
func (a actionModel) review(msg tea.Msg, e env) (actionModel, tea.Cmd) {
	km, isKey := msg.(tea.KeyMsg)
	if isKey && km.Paste {
		return a, nil
	}
	if isKey && (key.Matches(km, a.keys.Cancel) || (!a.needsOverride() && km.String() == "n")) {
		a.stage = stageForm
		a.override.Blur()
		return a, nil
	}
	if a.needsOverride() {
		if isKey && km.Type == tea.KeyEnter {
			if a.override.Value() != overrideWord {
				what := "against the finding"
				if !a.against() {
					what = "within the grace"
				}
				a.overrideErr = fmt.Sprintf("type %q to write %s, or esc", overrideWord, what)
				return a, nil
			}
			return a.write(e)
		}
		var c tea.Cmd
		a.override, c = a.override.Update(msg)
		a.overrideErr = ""
		return a, c
	}
	if isKey && key.Matches(km, a.keys.Confirm) {
		return a.write(e)
	}
	return a, nil
}

func (a actionModel) write(e env) (actionModel, tea.Cmd) {
	a.stage = stageRunning
	if len(a.bulk) > 0 {
		return a, decideMany(e.ctx, e.svc, a.seq, a.action, a.decision(e), a.bulk)
	}
	return a, decide(e.ctx, e.svc, a.seq, a.action, a.decision(e))
}

func (a actionModel) keyMap() keyMap {
	k := a.keys
	if a.stage == stageResults {
		short := []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close"))}
		return keyMap{short: short, full: [][]key.Binding{short}}
	}
	if a.stage == stageChecking {
		short := []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))}
		return keyMap{short: short, full: [][]key.Binding{short}}
	}
	// A review's narrow help line (40 columns) keeps the keys that act,
	// in fewer words, beside esc.
	back := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))
	overrideKey := func(what string) key.Binding {
		return key.NewBinding(key.WithKeys("enter"), key.WithHelp(overrideWord+"+enter", what))
	}
	if a.stage == stageConfirm && len(a.bulk) > 0 && !a.overriding && a.legalCount() == 0 && !a.graceReading {
		return a.bulkNothingKeys()
	}
	if a.stage == stageConfirm && len(a.bulk) > 0 && a.bulkAgainst() == 0 {
		short := []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "write them")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))}
		narrow := []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", fmt.Sprintf("write %d", a.legalCount()))), back}
		return keyMap{short: short, full: [][]key.Binding{short}, narrow: narrow}
	}
	if a.stage == stageConfirm && len(a.bulk) > 0 {
		short := []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "write the others")), key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "override the findings")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))}
		narrow := []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", fmt.Sprintf("write %d", a.legalCount()))),
			key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "override")), back}
		if a.overriding {
			short = []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("type "+overrideWord+" + enter", "write all, against the findings")),
				key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))}
			narrow = []key.Binding{overrideKey(fmt.Sprintf("write %d", a.overrideWrites())), back}
		}
		return keyMap{short: short, full: [][]key.Binding{short}, narrow: narrow}
	}
	if a.stage == stageConfirm {
		confirm := k.Confirm
		narrow := []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "write it")), back}
		if a.needsOverride() {
			// Short enough that esc still fits a 60-column help line.
			confirm = key.NewBinding(key.WithKeys("enter"), key.WithHelp("type "+overrideWord+" + enter", "write anyway"))
			narrow = []key.Binding{overrideKey("write anyway"), back}
		}
		short := []key.Binding{confirm, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))}
		return keyMap{short: short, full: [][]key.Binding{short}, narrow: narrow}
	}
	// enter moves on until the last field: the help says which it does.
	// esc comes second, so a narrow help line never loses the way out.
	short := []key.Binding{k.Submit, k.Cancel, k.Next, k.Prev}
	if a.focus < len(a.fields)-1 {
		short = []key.Binding{relabel(k.Submit, "next field"), k.Cancel, k.Prev}
	}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// transition is the exact change a decision asks for.
func (a actionModel) transition(s *Styles) string {
	from := s.State(a.op.State).Render(string(a.op.State)) + fmt.Sprintf(" (version %d)", a.op.Version)
	to := s.State(a.action.Target()).Render(string(a.action.Target()))
	return from + "  →  " + to
}

// view draws the form or the review in a box that fits h lines: whole if
// it fits; else compact — the box gives up its blank lines and the lines
// the help line repeats, never a warning, a field or the prompt of the
// override; and if still too tall, the provider's reason gives way, from
// its end (its start says what happened), before any field or prompt
// would. The box's text is made at most twice (whole, compact) and its
// height measured, not drawn; only the parts with the reason are made
// again per clip; the box is drawn once.
func (a actionModel) view(e env, w, h int) string {
	if len(a.bulk) > 0 {
		return a.bulkView(e, w, h)
	}
	t := a.content(e, w, false)
	if 1+t.height() <= h {
		return "\n" + a.box(e.styles, w, t.String())
	}
	t = a.content(e, w, true)
	for n := 240; t.height() > h && a.cannotTell != "" && n >= 60; n -= 30 {
		t.clipWhy(n)
	}
	if t.height() > h && a.stage != stageForm {
		// Smaller still (40×10, 60×15): the tiny review — one line a
		// thing, what is decided and for which key always on it.
		return a.box(e.styles, w, strings.Join(a.reviewTiny(e, boxWidth(w)-2, h-2), "\n"))
	}
	if t.height() > h {
		// Smaller still (40×10, 60×15): the tiny box — the warning in a
		// few words, each field on one line — and then its droppable
		// lines, least needed first, so that the warning and the fields
		// are always on screen.
		c := a
		c.tiny = true
		t = c.content(e, w, true)
		for n := 240; t.height() > h && a.cannotTell != "" && n >= 60; n -= 30 {
			t.clipWhy(n)
		}
		t.dropUntil(h)
		if t.height() > h {
			c.tinyWords = true // the warning in a few words
			t = c.content(e, w, true)
			t.dropUntil(h)
		}
		if t.height() > h && a.against() {
			c.oneLine = true // and on one line
			t = c.content(e, w, true)
			t.dropUntil(h)
		}
	}
	return a.box(e.styles, w, t.String())
}

// reviewTiny is the review in at most n lines of inner cells (the box's
// width less its padding), each one
// thing, clipped, never wrapped by the box. Always there: the action and
// the tenant (the title), the operation's key (whole, or both its ends),
// a change under the form, the warning (against the finding, or the
// provider cannot tell) and the prompt — the typed override and its
// field, or y; then, as room allows, the warning in more words, the key
// whole on more lines, the prompt on a line of its own, the change, the
// new key, the evidence and the reason.
func (a actionModel) reviewTiny(e env, inner, n int) []string {
	s := e.styles
	inner = max(inner, 12)
	clip := func(t string) string { return truncate(t, inner) }
	verb := strings.ToUpper(a.action.Verb()[:1]) + a.action.Verb()[1:]
	title := s.Title.Render(verb)
	if rest := inner - ansi.StringWidth(verb) - 3; rest >= 6 {
		title += s.Muted.Render(" — ") + s.Bold.Render(clipMiddle(a.op.Tenant, rest))
	}
	keyLine := func(whole bool) []string {
		if !whole || ansi.StringWidth(a.op.Key) <= inner-4 {
			return []string{s.Label.Render("key ") + clipMiddle(a.op.Key, inner-4)}
		}
		var out []string
		for i, l := range strings.Split(ansi.Hardwrap(a.op.Key, inner-4, false), "\n") {
			lead := "    "
			if i == 0 {
				lead = s.Label.Render("key ")
			}
			out = append(out, lead+l)
		}
		return out
	}
	var stale []string
	if c := a.changed; c != nil {
		stale = append(stale, clip(s.BannerErr.Render(fmt.Sprintf("! Now %s (v%d): y is refused; esc", c.State, c.Version))))
	}
	// The warning, in one line and in a few words more.
	var short, long string
	switch {
	case a.against():
		short = a.againstLine(s, inner)
		c := a
		c.tinyWords = true
		long = c.againstWarning(e, inner, true, true)
	case a.inGrace():
		// Two short lines: when it was sent, and when to decide.
		short = s.BannerErr.Render(clip("! Sent "+a.grace.Sent.In(e.loc).Format("15:04:05")+": may still land")) + "\n" +
			s.BannerErr.Render(clip("! Decide after "+a.grace.Until.In(e.loc).Format("15:04:05")))
		long = a.graceWarning(e, inner, true)
	case a.cannotTell != "":
		c := a
		c.tinyWords, c.whyMax = true, 40
		long = c.cannotTellWarning(e, inner, true)
		short = s.BannerErr.Render(clip("! Provider cannot tell: " + shortWhy(localTimes(a.cannotTell, e), 40)))
		if f := a.earlier; f != nil && f.Kind == model.FindingHasIt {
			short = s.BannerOK.Render(clip("Earlier check found it (" + or(f.Ref, "has it") + ")"))
		}
	}
	// The prompt: the override's field with its words, or y.
	var prompt []string
	var promptLong []string
	switch {
	case a.stage == stageRunning:
		prompt = []string{s.Muted.Render("writing…")}
	case a.needsOverride():
		// The word and its cursor fit beside "Type override+enter" at
		// 40 columns.
		label := "Type " + overrideWord + "+enter "
		if inner-ansi.StringWidth(label)-3 < len(overrideWord) {
			label = overrideWord + "+enter "
		}
		in := a.override
		in.Width = max(inner-ansi.StringWidth(label)-3, 4)
		prompt = []string{s.Bold.Render(label) + in.View()}
		full := a.override
		full.Width = inner - 3
		words := "Type " + overrideWord + "+enter:"
		for _, w := range []string{"Type " + overrideWord + " and press enter to write it", "Type " + overrideWord + " + enter to write it"} {
			if ansi.StringWidth(w) <= inner {
				words = w
				break
			}
		}
		promptLong = []string{clip(s.Bold.Render(words)), full.View()}
		if a.overrideErr != "" {
			prompt = append(prompt, clip(s.InputErr.Render(fmt.Sprintf("✗ type %q, or esc", overrideWord))))
			promptLong = append(promptLong, prompt[len(prompt)-1])
		}
	default:
		prompt = []string{clip(s.Key.Render("y") + s.Muted.Render(" write it · ") + s.Key.Render("esc") + s.Muted.Render(" back"))}
	}
	var warn []string
	if short != "" {
		warn = strings.Split(short, "\n")
	}
	key := keyLine(false)
	build := func() []string {
		out := append([]string{clip(title)}, key...)
		out = append(out, stale...)
		out = append(out, warn...)
		return append(out, prompt...)
	}
	// The extras, the most needed first, each taken if it fits.
	if long != "" {
		if l := strings.Split(long, "\n"); len(build())-1+len(l) <= n {
			warn = l
		}
	}
	if k := keyLine(true); len(k) > 1 && len(build())-1+len(k) <= n {
		key = k
	}
	if promptLong != nil && len(build())-len(prompt)+len(promptLong) <= n {
		prompt = promptLong
	}
	row := func(label, value string) string {
		return clip(s.Label.Render(fit(label, 9)) + value)
	}
	// The change in its fewest words: from (version) → to, no label.
	extras := []string{clip(s.State(a.op.State).Render(string(a.op.State)) + fmt.Sprintf(" v%d → ", a.op.Version) +
		s.State(a.action.Target()).Render(string(a.action.Target())))}
	if a.action == model.ActionAuthorizeKey {
		nk := a.value("New key")
		if nk == "" {
			nk = s.Muted.Render("(generated on write)")
		}
		extras = append(extras, row("new key", clipMiddle(nk, inner-9)))
	}
	if v := a.value("Evidence"); v != "" {
		extras = append(extras, row("evidence", v))
	}
	if v := a.value("Reason"); v != "" {
		extras = append(extras, row("reason", v))
	}
	if !a.needsOverride() && a.cannotTell == "" {
		// y with no warning: the change is what it writes.
		key = append(key, extras[0])
		extras = extras[1:]
	}
	var taken []string
	for _, x := range extras {
		if len(build())+len(taken)+1 <= n {
			taken = append(taken, x)
		}
	}
	out := build()
	// The extras go under the key, above the warning and the prompt.
	head := 1 + len(key)
	out = append(append(append([]string{}, out[:head]...), taken...), out[head:]...)
	if len(out) > n && len(key) == 1 {
		// Shorter than the smallest screen the console supports: the key
		// joins the action's line, both still on screen.
		out[1] = clip(s.Title.Render(verb) + " " + clipMiddle(a.op.Key, max(inner-ansi.StringWidth(verb)-1, 8)))
		out = out[1:]
	}
	return out
}

// boxLines is a decision box's text in parts, to measure before it is
// drawn: why holds the parts that carry the provider's reason, made again
// at a clip (clipWhy).
type boxLines struct {
	parts  []string
	why    map[int]func(whyMax int) string
	wrapAt int // the box's text width: a longer line is wrapped by it
	// droppable: parts a tiny box may give up, by priority (the lowest
	// first).
	droppable map[int]int
}

// writeDroppable writes a part the tiny box gives up when too tall, those
// of a lower priority first.
func (t *boxLines) writeDroppable(prio int, s string) {
	t.droppable[len(t.parts)] = prio
	t.parts = append(t.parts, s)
}

// dropUntil empties droppable parts, the lowest priority first, until the
// box fits h lines (or none is left).
func (t *boxLines) dropUntil(h int) {
	for prio := 0; prio <= 9; prio++ {
		for i, p := range t.droppable {
			if p == prio && t.height() > h {
				t.parts[i] = ""
			}
		}
	}
}

func (t *boxLines) WriteString(s string) { t.parts = append(t.parts, s) }

// writeWhy writes a part with the provider's reason in it: part(0) now,
// part(n) at clipWhy(n).
func (t *boxLines) writeWhy(part func(whyMax int) string) {
	if t.why == nil {
		t.why = map[int]func(int) string{}
	}
	t.why[len(t.parts)] = part
	t.parts = append(t.parts, part(0))
}

// clipWhy makes the parts with the provider's reason again, clipped at n.
func (t *boxLines) clipWhy(n int) {
	for i, part := range t.why {
		t.parts[i] = part(n)
	}
}

func (t *boxLines) String() string { return strings.TrimRight(strings.Join(t.parts, ""), "\n") }

// height is how many lines the box takes with this text: its lines, a
// line too wide for the box wrapped as the box wraps it, and its borders.
func (t *boxLines) height() int {
	n := 2
	for _, l := range strings.Split(t.String(), "\n") {
		if ansi.StringWidth(l) <= t.wrapAt {
			n++
			continue
		}
		n += strings.Count(cellbuf.Wrap(l, t.wrapAt, ""), "\n") + 1
	}
	return n
}

// againstWarning is the box's warning about a decision against the last
// finding — on the form as on the review, so it is seen before a reason
// is typed — or "".
func (a actionModel) againstWarning(e env, inner int, review, compact bool) string {
	s := e.styles
	if !a.against() {
		return ""
	}
	text := fmt.Sprintf("! Against the last check: %s. %s", localTimes(reconcile.FindingText(a.finding), e), againstRisk(a.action))
	if a.finding.Status == reconcile.StatusReceipt {
		text = fmt.Sprintf("! Against the receipt: %s. If the effect did happen, the new key's first call makes it a second time: check the provider (c) first.", reconcile.FindingText(a.finding))
	} else if f := a.earlier; f != nil && a.cannotTell == "" {
		// A later check found nothing, or the key was tried again: a
		// provider never takes a delivery back, so neither undoes it.
		text = fmt.Sprintf("! Against an earlier check: %s, %s, %s. Nothing since takes it back (a later lookup that found nothing, a retry of the key): a provider never takes a delivery back. %s",
			localTimes(reconcile.FindingText(a.finding), e), clockTime(f.At, e), or(f.By, "a lookup"), againstRisk(a.action))
	} else if f != nil {
		// The last check could not tell: the one that found it is older.
		text = fmt.Sprintf("! Against an earlier check: %s, %s, %s. The last check cannot tell (%s); that takes nothing back. %s",
			localTimes(reconcile.FindingText(a.finding), e), clockTime(f.At, e), or(f.By, "a lookup"), shortWhy(localTimes(a.cannotTell, e), a.whyMax), againstRisk(a.action))
	}
	if !review && !(compact && a.earlier != nil) { // the review asks for it anyway
		text += " The review will ask you to type " + overrideWord + " to write it."
	}
	if a.oneLine {
		return a.againstLine(s, inner)
	}
	if a.tinyWords {
		// The finding in a few words; the detail says the rest.
		text = "! Against the last check: " + tinyFinding(a.finding) + "."
		if a.earlier != nil {
			text = "! Against an earlier check: " + tinyFinding(a.finding) + "."
		}
	}
	return s.BannerErr.Render(wrap(text, inner, " "))
}

// againstLine is the warning against the finding on one line of inner
// cells: the tiny review's, and the tiny form's when even its few words
// do not fit (oneLine).
func (a actionModel) againstLine(s *Styles, inner int) string {
	f := a.finding
	what, ref := "has it", f.Ref
	switch {
	case f.Status == reconcile.StatusReceipt:
		what = "its receipt"
	case !f.Found:
		what, ref = "has nothing", ""
	}
	lead := "! Against: "
	if a.earlier != nil {
		lead = "! Against earlier: "
	}
	if f.Status != reconcile.StatusReceipt && ansi.StringWidth(lead+"provider "+what)+min(ansi.StringWidth(ref), 6)+3 <= inner {
		what = "provider " + what
	}
	short := lead + what
	if room := inner - ansi.StringWidth(short) - 3; ref != "" && room >= 4 {
		short += " (" + clipMiddle(ref, room) + ")"
	}
	return s.BannerErr.Render(truncate(short, inner))
}

// cannotTellWarning is the box's warning when the provider cannot tell and
// no finding stands against the decision: the reason, and what the
// decision risks if it is wrong — on the form and on the review.
func (a actionModel) cannotTellWarning(e env, inner int, compact bool) string {
	s := e.styles
	if a.cannotTell == "" || a.against() {
		return ""
	}
	if f := a.earlier; f != nil && f.Kind == model.FindingHasNothing {
		// "not applied" on an earlier "has nothing": that lookup is the
		// evidence recorded, and the provider cannot tell now.
		return s.BannerErr.Render(wrap(fmt.Sprintf("! The provider cannot tell now (%s); an earlier check found nothing, %s, %s. %s",
			shortWhy(localTimes(a.cannotTell, e), a.whyMax), clockTime(f.At, e), or(f.By, "a lookup"), cannotTellRisk(a.action, compact)), inner, " "))
	}
	if f := a.earlier; f != nil {
		// "applied" on an earlier "has it": the evidence the form starts
		// with is that lookup's, and the box says where it came from.
		return s.BannerOK.Render(wrap(fmt.Sprintf("The provider cannot tell now (%s), but an earlier check found the effect (%s), %s, %s: its reference is filled in.",
			shortWhy(localTimes(a.cannotTell, e), a.whyMax), or(f.Ref, "has it"), clockTime(f.At, e), or(f.By, "a lookup")), inner, " "))
	}
	if a.tinyWords {
		return s.BannerErr.Render(wrap("! The provider cannot tell: "+shortWhy(localTimes(a.cannotTell, e), 40)+".", inner, " "))
	}
	return s.BannerErr.Render(wrap("! The provider cannot tell: "+shortWhy(localTimes(a.cannotTell, e), a.whyMax)+". "+cannotTellRisk(a.action, compact), inner, " "))
}

// tinyFinding is a finding the tiny box names: what the provider said,
// its reference clipped in the middle.
func tinyFinding(f *provider.Evidence) string {
	switch {
	case f.Status == reconcile.StatusReceipt:
		return "its receipt says applied (" + clipMiddle(or(f.Ref, "no reference"), 16) + ")"
	case f.Found:
		return "the provider has it (" + clipMiddle(or(f.Ref, "no reference"), 16) + ")"
	}
	return "the provider has nothing"
}

// boxWidth is a decision box's width on a w-column screen.
func boxWidth(w int) int { return min(max(w-6, 30), 76) }

// box draws text in the decision's box, centred on a w-column screen.
func (a actionModel) box(s *Styles, w int, text string) string {
	box := s.Box
	if a.stage != stageForm {
		box = s.BoxDanger
	}
	return lipgloss.PlaceHorizontal(w, lipgloss.Center, box.Width(boxWidth(w)).Render(text))
}

// content is the box's text, whole or compact (view).
func (a actionModel) content(e env, w int, compact bool) *boxLines {
	s := e.styles
	boxW := boxWidth(w)
	inner := boxW - 4
	gap := func(b *boxLines) {
		if !compact {
			b.WriteString("\n")
		}
	}
	// whyAt is a warning with the provider's reason clipped at n.
	whyAt := func(warning func(a actionModel) string) func(int) string {
		return func(n int) string {
			c := a
			c.whyMax = n
			if text := warning(c); text != "" {
				return text + "\n"
			}
			return ""
		}
	}
	verb := strings.ToUpper(a.action.Verb()[:1]) + a.action.Verb()[1:]
	name := oneLine(a.op.Tenant + " / " + a.op.Key)
	if compact {
		// One line: the review's rows name the tenant and key in full.
		name = clipMiddle(name, max(inner-ansi.StringWidth(verb)-3, 8))
	}
	title := s.Title.Render(verb) + s.Muted.Render(" — ") + s.Bold.Render(name)
	b := &boxLines{wrapAt: boxW - 2, droppable: map[int]int{}} // the box's padding: a cell each side
	if a.tiny && a.stage != stageForm {
		b.writeDroppable(8, title+"\n") // the last to go
	} else {
		b.WriteString(title + "\n")
	}
	if a.tiny && a.changed != nil {
		// The tiny box (40×10): the change in a few words, on one line,
		// as the tiny review says it; its whole sentence took five lines
		// there and pushed the fields and the box's bottom off screen.
		var line string
		for _, tail := range []string{": writing is refused; esc", ": refused; esc", ": refused"} {
			if line = fmt.Sprintf("! Now %s (v%d)%s", a.changed.State, a.changed.Version, tail); ansi.StringWidth(line) <= inner {
				break
			}
		}
		b.WriteString(s.BannerErr.Render(truncate(line, inner)) + "\n")
	} else if w := a.staleWarning(e, inner); w != "" {
		b.WriteString(w + "\n")
	}
	if a.problem != "" && a.changed == nil { // the stale warning says it better
		b.WriteString(s.BannerErr.Render(wrap("Not written: "+localTimes(a.problem, e), inner, " ")) + "\n")
	}
	switch a.stage {
	case stageForm:
		warned := false
		if w := a.againstWarning(e, inner, false, compact); w != "" {
			b.writeWhy(whyAt(func(a actionModel) string { return a.againstWarning(e, inner, false, compact) }))
			warned = true
		}
		if w := a.cannotTellWarning(e, inner, compact); w != "" {
			b.writeWhy(whyAt(func(a actionModel) string { return a.cannotTellWarning(e, inner, compact) }))
			warned = true
		}
		if a.history == historyReading {
			b.WriteString(s.Muted.Render(wrap("reading its earlier lookups…", inner, " ")) + "\n")
		}
		if !a.tiny {
			b.WriteString(a.transition(s) + "\n")
		}
		if !(compact && warned) && !a.tiny { // the warning says what the decision does
			b.WriteString(s.Muted.Render(wrap(consequence(a.action), inner, " ")) + "\n")
		}
		for i, f := range a.fields {
			if a.tiny {
				// One line a field: its name, then what is typed.
				label := s.Label.Render("  " + f.label)
				if i == a.focus {
					label = s.Bold.Render("▸ " + f.label)
				}
				in := f.input
				in.Width = max(inner-ansi.StringWidth(f.label)-6, 4)
				b.WriteString(label + " " + in.View() + "\n")
				if f.err != "" {
					b.WriteString(s.InputErr.Render(wrap("  ✗ "+f.err, inner, "    ")) + "\n")
				}
				continue
			}
			gap(b)
			// The focused field is marked with a character, not only bold:
			// with NO_COLOR there is no bold to see.
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
		if !compact {
			b.WriteString("\n" + s.Muted.Render("enter next / review · tab switch field · esc cancel"))
		}
	case stageChecking:
		gap(b)
		b.WriteString(a.transition(s) + "\n")
		b.WriteString(s.Bold.Render("Asking the provider first…") + "\n")
		on := "the evidence you typed"
		if a.action == model.ActionAuthorizeKey {
			on = "the reason you typed"
		}
		b.WriteString(s.Muted.Render(wrap("Its finding is recorded. If it has the effect, writing needs the typed override; if it cannot tell, the decision stays yours, on "+on+".", inner, "")) + "\n")
		gap(b)
		b.WriteString(s.Key.Render("esc") + s.Muted.Render(" back to the form"))
	case stageConfirm, stageRunning:
		gap(b)
		if a.tiny && a.needsOverride() { // the override prompt asks it
			b.writeDroppable(0, s.Bold.Render("Write this decision to the ledger?")+"\n")
		} else {
			b.WriteString(s.Bold.Render("Write this decision to the ledger?") + "\n")
		}
		gap(b)
		row := func(label, value string) {
			if value == "" {
				return
			}
			v := truncate(value, inner-13)
			if label == "tenant" || label == "key" {
				v = clipMiddle(value, inner-13) // keys differ at their ends
			}
			line := "  " + s.Label.Render(fit(label, 10)) + " " + v + "\n"
			if a.tiny {
				// Each row goes when the box is too tall, the least
				// needed first; the title names the operation.
				prio := map[string]int{"operator": 1, "check": 2, "tenant": 3, "key": 3, "evidence": 4, "reason": 4, "change": 6, "new key": 7}[label]
				b.writeDroppable(prio, line)
				return
			}
			b.WriteString(line)
		}
		row("tenant", oneLine(a.op.Tenant))
		row("key", oneLine(a.op.Key))
		row("change", a.transition(s))
		if a.action == model.ActionAuthorizeKey {
			nk := a.value("New key")
			if nk == "" {
				nk = s.Muted.Render("(generated on write)")
			}
			row("new key", nk+"  → "+s.State(model.StateAuthorized).Render("authorized"))
		}
		row("evidence", a.value("Evidence"))
		row("reason", a.value("Reason"))
		row("operator", oneLine(e.operator))
		if a.finding != nil && !(compact && a.against()) { // the warning names it
			row("check", localTimes(oneLine(a.finding.Detail), e))
		}
		gap(b)
		switch {
		case a.stage == stageRunning:
			b.WriteString(s.Muted.Render("writing…"))
		case a.needsOverride():
			// The second confirmation names the finding it overrides,
			// and the grace it decides within.
			if a.against() {
				b.writeWhy(whyAt(func(a actionModel) string { return a.againstWarning(e, inner, true, compact) }))
			}
			if a.inGrace() && !a.against() {
				// Against a "has it" the grace is moot (the effect is
				// there): the override confirms both, as the write needs.
				b.WriteString(a.graceWarning(e, inner, compact) + "\n")
			}
			gap(b)
			if a.tinyWords {
				b.WriteString(s.Bold.Render("Type "+overrideWord+" + enter to write it") + "\n")
			} else {
				b.WriteString(s.Bold.Render("Type "+overrideWord+" and press enter to write it anyway") + "\n")
			}
			in := a.override
			in.Width = inner - 3
			b.WriteString(in.View())
			if a.overrideErr != "" {
				b.WriteString("\n" + s.InputErr.Render("  ✗ "+a.overrideErr))
			}
			if !compact {
				b.WriteString("\n" + s.Key.Render("esc") + s.Muted.Render(" back to the form"))
			}
		default:
			if w := a.cannotTellWarning(e, inner, compact); w != "" {
				b.writeWhy(whyAt(func(a actionModel) string { return a.cannotTellWarning(e, inner, compact) }))
				gap(b)
			}
			b.WriteString(s.Key.Render("y") + s.Muted.Render(" write it     ") +
				s.Key.Render("esc") + s.Muted.Render(" back to the form"))
		}
	}
	return b
}

// fieldHead is a form field's label and hint: a hint too long for the
// label's line goes under it, indented, rather than wrapping back to the
// box's edge.
func fieldHead(s *Styles, label string, f formField, inner int) string {
	if ansi.StringWidth(f.label)+4+ansi.StringWidth(f.hint) <= inner {
		return label + s.Muted.Render("  "+f.hint) + "\n"
	}
	out := label + "\n"
	for _, l := range strings.Split(wrap(f.hint, inner-4, " "), "\n") {
		out += s.Muted.Render("    "+l) + "\n"
	}
	return out
}

// againstRisk says what a decision against the finding risks.
func againstRisk(a model.Action) string {
	switch a {
	case model.ActionMarkNotApplied:
		return "If the provider is right, the next call sends it a second time."
	case model.ActionAuthorizeKey:
		return "If the provider is right, the effect happened: the new key's first call makes it a second time."
	}
	return "If the provider is right, nothing was sent and retries will replay a receipt for an effect that never happened."
}

// consequence says, in one line, what the decision means for the caller.
func consequence(a model.Action) string {
	switch a {
	case model.ActionMarkApplied:
		return "Retries of this key will replay a receipt; no second effect."
	case model.ActionMarkNotApplied:
		return "The next call with this key claims it and tries again."
	case model.ActionAuthorizeKey:
		return "Retries of this key are told the new key; its first call applies it."
	}
	return ""
}

// changedBy says who moved op on from the version seen: the operator of
// the decision that did, else the worker (or sweep) that did, with when,
// in the detail's time format.
func changedBy(op model.Operation, last *model.Decision, seen int64, e env) string {
	if d := last; d != nil && d.FromVersion >= seen {
		return fmt.Sprintf("%s chose to %s at %s", d.Operator, d.Action.Verb(), clockTime(d.At, e))
	}
	who := "a worker or a sweep"
	if op.LeaseOwner != "" {
		who = "worker " + op.LeaseOwner
	}
	return fmt.Sprintf("%s moved it on at %s (no decision)", who, clockTime(op.UpdatedAt, e))
}

// inGrace reports whether the write would be refused within the grace
// after the operation's latest request (one operation's decision).
func (a actionModel) inGrace() bool { return a.grace != nil && len(a.bulk) == 0 }

// needsOverride reports whether the review writes only on the typed
// override: against the last finding, or within the grace.
func (a actionModel) needsOverride() bool { return a.against() || a.inGrace() }

// graceAt works out the grace from the operation's attempts, once read,
// at e.now (reconcile.GraceCheck, the write's own rule): the review asks
// for the override within it. Before they are read it keeps what it has
// (nothing, or the write's own refusal).
func (a actionModel) graceAt(e env) actionModel {
	if !a.attemptsRead || e.svc == nil || len(a.bulk) > 0 {
		return a
	}
	a.grace = nil
	var gr *reconcile.GraceRefusal
	if errors.As(e.svc.GraceCheck(a.action, a.op, a.attempts, e.now), &gr) {
		a.grace = gr
	}
	return a
}

// attemptsIn takes the operation's attempts from a fresh read of it (the
// read requestAction starts, a refresh), and works out the grace again.
func (a actionModel) attemptsIn(msg actionOpMsg, e env) actionModel {
	if msg.Seq != a.seq || msg.Err != nil || msg.Op == nil || msg.Op.ID != a.op.ID || len(a.bulk) > 0 {
		return a
	}
	if msg.Op.State == model.StateAuthorized && msg.Op.SupersedesID != 0 {
		return a // its attempts are the replaced key's (loadActionOp)
	}
	a.attempts, a.attemptsRead = msg.Attempts, true
	if a.stage == stageConfirm {
		was := a.needsOverride()
		a = a.graceAt(e)
		if a.needsOverride() && !was {
			a.override.SetValue("")
			a.override.Focus()
		}
	}
	return a
}

// graceRefused takes the write's refusal within the grace: the review
// stays, now saying when the request was sent and when to decide, and
// asks for the typed override.
func (a actionModel) graceRefused(gr *reconcile.GraceRefusal) actionModel {
	a.grace = gr
	a.stage = stageConfirm
	a.problem = ""
	a.override.SetValue("")
	a.overrideErr = ""
	a.override.Focus()
	return a
}

// graceWarning is the review's warning within the grace: when the latest
// request was sent, what a decision now risks, and when to decide.
func (a actionModel) graceWarning(e env, inner int, compact bool) string {
	g := a.grace
	risk := "if it lands, the next call sends it a second time."
	if a.action == model.ActionAuthorizeKey {
		risk = "if it lands, the new key's first call makes it a second time."
	}
	text := fmt.Sprintf("! Within the grace: its request was sent at %s and the provider may still apply it — %s Decide after %s.",
		clockTime(g.Sent, e), risk, clockTime(g.Until, e))
	if compact {
		// The times of day: the box is small, the day is today's.
		text = fmt.Sprintf("! Sent at %s, the provider may still apply it: decide after %s.",
			g.Sent.In(e.loc).Format("15:04:05"), g.Until.In(e.loc).Format("15:04:05"))
	}
	return e.styles.BannerErr.Render(wrap(text, inner, " "))
}
