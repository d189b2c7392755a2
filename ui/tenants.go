package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// The tenant picker: the tenants present in the ledger (from the counts
// table, so it is cheap at any size), and "all tenants".

type pickerModel struct {
	keys    pickerKeys
	tenants []string // "" first: all tenants
	cursor  int
	current string
	seq     int
	loading bool
	err     error
	closed  bool

	width, height int
}

func newPicker() pickerModel { return pickerModel{keys: newPickerKeys()} }

func (p pickerModel) open(current string, e env) (pickerModel, tea.Cmd) {
	p.seq++
	p.loading, p.err, p.closed, p.current = true, nil, false, current
	p.tenants = []string{""}
	p.cursor = 0
	return p, loadTenants(e.ctx, e.st, p.seq)
}

func (p pickerModel) loaded(msg tenantsMsg) pickerModel {
	if msg.Seq != p.seq {
		return p
	}
	p.loading = false
	if msg.Err != nil {
		p.err = msg.Err
		return p
	}
	p.tenants = append([]string{""}, msg.Tenants...)
	p.cursor = 0
	for i, t := range p.tenants {
		if t == p.current {
			p.cursor = i
		}
	}
	return p
}

func (p pickerModel) update(msg tea.KeyMsg, e env) (pickerModel, tea.Cmd) {
	switch {
	case key.Matches(msg, p.keys.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(msg, p.keys.Down):
		p.cursor = min(p.cursor+1, len(p.tenants)-1)
	case key.Matches(msg, p.keys.Choose):
		p.closed = true
		return p, emit(scopeMsg{Tenant: p.tenants[p.cursor]})
	case key.Matches(msg, p.keys.Cancel):
		p.closed = true
	}
	return p, nil
}

func (p pickerModel) view(e env, w, h int) string {
	s := e.styles
	var b strings.Builder
	b.WriteString(s.Title.Render("Tenant scope") + "\n")
	b.WriteString(s.Muted.Render("which tenant's operations to show") + "\n\n")
	rows := max(h-8, 3)
	start := 0
	if p.cursor >= rows {
		start = p.cursor - rows + 1
	}
	for i := start; i < len(p.tenants) && i < start+rows; i++ {
		name := p.tenants[i]
		if name == "" {
			name = "all tenants"
		}
		mark := "  "
		if name == p.current || (p.tenants[i] == "" && p.current == "") {
			mark = "• "
		}
		line := fit(mark+name, 36)
		if i == p.cursor {
			line = s.Selected.Render("› " + line)
		} else {
			line = "  " + line
		}
		b.WriteString(line + "\n")
	}
	switch {
	case p.loading:
		b.WriteString(s.Muted.Render("  reading tenants…") + "\n")
	case p.err != nil:
		b.WriteString(s.BannerErr.Render("  "+oneLine(p.err.Error())) + "\n")
	}
	if len(p.tenants) > rows {
		b.WriteString(s.Muted.Render(strings.Repeat(" ", 2)+"↑/↓ for more") + "\n")
	}
	b.WriteString("\n" + s.Muted.Render("enter choose · esc cancel"))
	return "\n" + lipgloss.PlaceHorizontal(w, lipgloss.Center, s.Box.Render(b.String()))
}
