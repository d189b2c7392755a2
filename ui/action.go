package ui

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
)

// An operator decision: a form (evidence, reason, new key), validated as
// it is submitted; then a confirmation that shows the exact transition —
// from → to, tenant, key — and only then the write, through reconcile's
// decision functions with the state and version the screen showed.

func allowed(op model.Operation, a model.Action) bool { return reconcile.AllowedFor(op, a) }

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
	hint  string
	input textinput.Model
	check func(string) error
	err   string
}

type actionModel struct {
	keys   formKeys
	action model.Action
	op     model.Operation // as shown when the action was asked for
	fields []formField
	focus  int
	stage  actionStage
	seq    int
	closed bool
	// changed is the operation as a refresh found it after the form was
	// opened, when it is no longer what the decision expects: the write
	// would be refused, and the box says so before anyone presses y.
	changed *model.Operation
}

// noticed keeps a refreshed copy of the operation the form is about, if it
// moved on from the state and version the decision carries.
func (a actionModel) noticed(op model.Operation) actionModel {
	if op.Tenant != a.op.Tenant || op.Key != a.op.Key {
		return a
	}
	if op.Version != a.op.Version || op.State != a.op.State {
		a.changed = &op
	} else {
		a.changed = nil
	}
	return a
}

// staleWarning is the box's line about a change under it, or "".
func (a actionModel) staleWarning(s *Styles, width int) string {
	if a.changed == nil {
		return ""
	}
	return s.BannerErr.Render(wrap(fmt.Sprintf("Changed since you opened this: it is now %s (version %d). Writing will be refused — esc and look again.",
		a.changed.State, a.changed.Version), width, ""))
}

func openAction(a model.Action, op model.Operation, evidence string, s *Styles, seq int) actionModel {
	m := actionModel{keys: newFormKeys(), action: a, op: op, seq: seq}
	required := func(what string) func(string) error {
		return func(v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("%s is required", what)
			}
			return printable(v)
		}
	}
	evidenceField := func(hint string) formField {
		f := formField{label: "Evidence", hint: hint, input: newInput(s), check: required("evidence")}
		f.input.SetValue(evidence)
		return f
	}
	reasonField := formField{label: "Reason", hint: "why — for the next person who reads this", input: newInput(s), check: required("a reason")}
	switch a {
	case model.ActionMarkApplied:
		m.fields = []formField{evidenceField("a provider reference (e.g. sbx_12), or where you saw it applied"), reasonField}
	case model.ActionMarkNotApplied:
		m.fields = []formField{reasonField, evidenceField("e.g. the provider lookup that found nothing; a timeout is not evidence")}
	case model.ActionAuthorizeKey:
		newKey := formField{label: "New key", hint: "optional: leave empty and one is generated", input: newInput(s),
			check: func(v string) error {
				v = strings.TrimSpace(v)
				if v == "" {
					return nil
				}
				if v == op.Key {
					return fmt.Errorf("the new key must differ from %q", op.Key)
				}
				return model.ValidateIdentity(op.Tenant, v)
			}}
		newKey.input.CharLimit = model.MaxKeyLen
		m.fields = []formField{reasonField, newKey}
	}
	m.fields[0].input.Focus()
	return m
}

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

// validate checks every field and focuses the first one that fails.
func (a actionModel) validate() (actionModel, bool) {
	ok := true
	first := -1
	for i := range a.fields {
		a.fields[i].err = ""
		if err := a.fields[i].check(a.fields[i].input.Value()); err != nil {
			a.fields[i].err = err.Error()
			ok = false
			if first < 0 {
				first = i
			}
		}
	}
	if !ok {
		a = a.setFocus(first)
	}
	return a, ok
}

func (a actionModel) decision(e env) reconcile.Decision {
	return reconcile.Decision{
		Tenant: a.op.Tenant, Key: a.op.Key, Operator: e.operator,
		Reason: a.value("Reason"), Evidence: a.value("Evidence"), NewKey: a.value("New key"),
		ExpectState: a.op.State, ExpectVersion: a.op.Version,
	}
}

func (a actionModel) update(msg tea.Msg, e env) (actionModel, tea.Cmd) {
	km, isKey := msg.(tea.KeyMsg)
	switch a.stage {
	case stageRunning:
		return a, nil
	case stageConfirm:
		if !isKey {
			return a, nil
		}
		switch {
		case key.Matches(km, a.keys.Confirm):
			a.stage = stageRunning
			return a, decide(e.ctx, e.svc, a.seq, a.action, a.decision(e))
		case key.Matches(km, a.keys.Cancel), km.String() == "n":
			a.stage = stageForm
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
			var ok bool
			if a, ok = a.validate(); ok {
				a.stage = stageConfirm
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

func (a actionModel) keyMap() keyMap {
	k := a.keys
	if a.stage == stageConfirm {
		short := []key.Binding{k.Confirm, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the form"))}
		return keyMap{short: short, full: [][]key.Binding{short}}
	}
	short := []key.Binding{k.Submit, k.Next, k.Prev, k.Cancel}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// transition is the exact change a decision asks for.
func (a actionModel) transition(s *Styles) string {
	from := s.State(a.op.State).Render(string(a.op.State)) + fmt.Sprintf(" (version %d)", a.op.Version)
	to := s.State(actionTarget(a.action)).Render(string(actionTarget(a.action)))
	return from + "  →  " + to
}

func (a actionModel) view(e env, w, h int) string {
	s := e.styles
	boxW := min(max(w-6, 30), 76)
	inner := boxW - 4
	title := s.Title.Render(strings.ToUpper(actionVerb(a.action)[:1])+actionVerb(a.action)[1:]) + s.Muted.Render(" — ") + s.Bold.Render(a.op.Tenant+" / "+a.op.Key)
	var b strings.Builder
	b.WriteString(title + "\n")
	if w := a.staleWarning(s, inner); w != "" {
		b.WriteString(w + "\n")
	}
	switch a.stage {
	case stageForm:
		b.WriteString(a.transition(s) + "\n")
		b.WriteString(s.Muted.Render(consequence(a.action)) + "\n")
		for i, f := range a.fields {
			b.WriteString("\n")
			label := s.Label.Render(f.label)
			if i == a.focus {
				label = s.Bold.Render(f.label)
			}
			b.WriteString(label + s.Muted.Render("  "+f.hint) + "\n")
			in := f.input
			in.Width = inner - 3
			b.WriteString(in.View() + "\n")
			if f.err != "" {
				b.WriteString(s.InputErr.Render("  ✗ "+f.err) + "\n")
			}
		}
		b.WriteString("\n" + s.Muted.Render("enter next / review · tab switch field · esc cancel"))
	case stageConfirm, stageRunning:
		b.WriteString("\n" + s.Bold.Render("Write this decision to the ledger?") + "\n\n")
		row := func(label, value string) {
			if value == "" {
				return
			}
			b.WriteString("  " + s.Label.Render(fit(label, 10)) + " " + truncate(value, inner-13) + "\n")
		}
		row("tenant", a.op.Tenant)
		row("key", a.op.Key)
		row("change", a.transition(s))
		if a.action == model.ActionAuthorizeKey {
			nk := a.value("New key")
			if nk == "" {
				nk = s.Muted.Render("(generated when written)")
			}
			row("new key", nk+"  → "+s.State(model.StateAuthorized).Render("authorized"))
		}
		row("evidence", a.value("Evidence"))
		row("reason", a.value("Reason"))
		row("operator", e.operator)
		b.WriteString("\n")
		if a.stage == stageRunning {
			b.WriteString(s.Muted.Render("writing…"))
		} else {
			b.WriteString(s.Key.Render("y") + s.Muted.Render(" / ") + s.Key.Render("enter") + s.Muted.Render(" write it     ") +
				s.Key.Render("esc") + s.Muted.Render(" back to the form"))
		}
	}
	box := s.Box
	if a.stage != stageForm {
		box = s.BoxDanger
	}
	return "\n" + lipgloss.PlaceHorizontal(w, lipgloss.Center, box.Width(boxW).Render(b.String()))
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
