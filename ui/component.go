package ui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/model"
)

// component is one screen or overlay of the console, as soft-serve's
// Component: it takes the messages routed to it, draws itself at the size
// it was given, and names its keys for the help line and the help screen.
// The root model (ui.go) holds one of each and only routes: the keyboard
// to whichever has the focus, a loaded answer to whichever asked for it.
type component interface {
	Update(msg tea.Msg, e env) (component, tea.Cmd)
	View(e env) string
	SetSize(e env, w, h int) (component, tea.Cmd)
	Keys(e env) keyMap
}

var (
	_ component = listModel{}
	_ component = detailModel{}
	_ component = labModel{}
	_ component = pickerModel{}
	_ component = actionModel{}
	_ component = helpModel{}
	_ component = auditModel{}
	_ component = reviewModel{}
	_ component = confirmModel{}
	_ component = commandModel{}
)

// The list: keys, the mouse wheel, its pages and its search timer.
func (l listModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return l.key(msg, e)
	case tea.MouseMsg:
		return l.mouse(msg, e)
	case pageMsg:
		return l.loaded(msg, e)
	}
	return l.update(msg, e)
}

func (l listModel) View(e env) string { return l.view(e, l.width, l.viewHeight) }

// SetSize sets the area the list draws in. The page length is set apart
// (setPageLen): it must not change when a banner comes and goes.
func (l listModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	l.width, l.viewHeight = w, h
	return l, nil
}

func (l listModel) Keys(e env) keyMap { return l.keyMap(e) }

// The detail: keys, the mouse wheel, the operation and provider checks.
func (d detailModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return d.key(msg, e)
	case tea.MouseMsg:
		return d.mouse(msg), nil
	}
	return d.update(msg, e)
}

func (d detailModel) View(e env) string { return d.view(e, d.width, d.height) }

func (d detailModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	if w == d.width && h == d.height {
		return d, nil
	}
	return d.resize(e, w, h), nil
}

func (d detailModel) Keys(e env) keyMap {
	km := d.keyMap(e)
	km.narrow, km.narrowIfCut = actKeysTogether(km.short), true
	if len(km.narrow) > 0 && !e.readOnly {
		// The keys named together still say which need the typed
		// override, where the line has room for it (else they are named
		// bare, as elsewhere: the detail says it too) — until when, if
		// each of them needs it only within the grace, to the same end.
		var which, words []string
		for _, k := range []struct {
			key    string
			action model.Action
		}{{"a", model.ActionMarkApplied}, {"n", model.ActionMarkNotApplied}, {"s", model.ActionAuthorizeKey}} {
			if w := needsWords(d.offer(e, k.action), e); w != "" && strings.Contains(km.narrow[0].Help().Key, k.key) {
				which, words = append(which, k.key), append(words, w)
			}
		}
		if len(which) > 0 {
			w := ": override"
			if slices.Equal(words, slices.Repeat(words[:1], len(words))) {
				w = words[0]
			}
			desc := "(" + strings.Join(which, "/") + w + ")"
			const rest = " • esc back • ? help • q quit"
			if 1+ansi.StringWidth(km.narrow[0].Help().Key+" "+desc+rest) <= d.width {
				km.narrow[0] = relabel(km.narrow[0], desc)
			}
		}
	}
	return km
}

// actKeysTogether is a screen's narrow help line: its enabled one-letter
// action keys (c, a, n, s) named together ("c/a/n/s"), then the rest as
// they were. At 40 columns "c check • a applied • …" kept only c, and a
// key that works but is never named is not found.
func actKeysTogether(short []key.Binding) []key.Binding {
	var acts []string
	var rest []key.Binding
	for _, b := range short {
		switch k := b.Help().Key; {
		case len(k) == 1 && strings.Contains("cans", k):
			if b.Enabled() {
				acts = append(acts, k)
			}
		default:
			rest = append(rest, b)
		}
	}
	if len(acts) < 2 {
		return nil
	}
	together := key.NewBinding(key.WithKeys(acts...), key.WithHelp(strings.Join(acts, "/"), ""))
	return append([]key.Binding{together}, rest...)
}

// The lab: keys and the run's messages.
func (l labModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		return l.key(k, e)
	}
	return l.update(msg, e)
}

func (l labModel) View(e env) string { return l.view(e, l.width, l.height) }

func (l labModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	l.width, l.height = w, h
	return l, nil
}

func (l labModel) Keys(e env) keyMap { return l.keyMap(e) }

// The tenant picker: keys and the tenant list.
func (p pickerModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return p.update(msg, e)
	case tenantsMsg:
		return p.loaded(msg), nil
	}
	return p, nil
}

func (p pickerModel) View(e env) string { return p.view(e, p.width, p.height) }

func (p pickerModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	p.width, p.height = w, h
	return p, nil
}

func (p pickerModel) Keys(e env) keyMap {
	k := p.keys
	short := []key.Binding{k.Up, k.Down, k.Choose, k.Cancel}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// The decision form and its review.
func (a actionModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case actionOpMsg:
		if msg.Err == nil && msg.Seq == a.seq {
			a = a.noticed(*msg.Op, msg.Last)
		}
		return a.historyIn(msg).attemptsIn(msg, e), nil
	}
	return a.update(msg, e)
}

func (a actionModel) View(e env) string { return a.view(e, a.width, a.height) }

func (a actionModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	a.width, a.height = w, h
	return a, nil
}

func (a actionModel) Keys(e env) keyMap { return a.keyMap() }
