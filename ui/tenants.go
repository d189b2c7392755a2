package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The tenant picker: the tenants present in the ledger, each with its
// unknown and total counts (from the counts table, so it is cheap at any
// size), and "all tenants". Typing narrows the list (type-ahead: the
// tenants whose name contains what was typed); the arrows move.

// tenantCount is one tenant's line.
type tenantCount struct {
	Tenant  string // as stored (drawn through oneLine): the scope it picks
	Unknown int
	Total   int
}

// tenantsMsg lists the tenants present with their counts.
type tenantsMsg struct {
	Seq     int
	Tenants []tenantCount
	Err     error
}

func loadTenants(ctx context.Context, st store.Ledger, seq int) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		ts, err := st.Tenants(ctx)
		if err != nil {
			return tenantsMsg{Seq: seq, Err: err}
		}
		out := make([]tenantCount, 0, len(ts))
		for _, t := range ts {
			c, err := st.Counts(ctx, t)
			if err != nil {
				return tenantsMsg{Seq: seq, Err: err}
			}
			out = append(out, tenantCount{Tenant: t, Unknown: c.ByState[model.StateUnknown], Total: c.Total})
		}
		return tenantsMsg{Seq: seq, Tenants: out}
	}
}

type pickerModel struct {
	keys    pickerKeys
	tenants []tenantCount // every tenant present
	typed   string        // type-ahead
	cursor  int           // in shown()
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
	p.loading, p.err, p.closed, p.current, p.typed = true, nil, false, current, ""
	p.tenants = nil
	p.cursor = 0
	return p, loadTenants(e.ctx, e.st, p.seq)
}

// shown is "all tenants" (as "") and the tenants matching the type-ahead.
func (p pickerModel) shown() []tenantCount {
	var out []tenantCount
	if p.typed == "" {
		out = append(out, tenantCount{Tenant: ""})
	}
	for _, t := range p.tenants {
		if typed := strings.ToLower(p.typed); strings.Contains(strings.ToLower(t.Tenant), typed) || strings.Contains(strings.ToLower(oneLine(t.Tenant)), typed) {
			out = append(out, t)
		}
	}
	return out
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
	p.tenants = msg.Tenants
	p.cursor = 0
	for i, t := range p.shown() {
		if t.Tenant == p.current {
			p.cursor = i
		}
	}
	return p
}

func (p pickerModel) update(msg tea.KeyMsg, e env) (pickerModel, tea.Cmd) {
	shown := p.shown()
	switch {
	case key.Matches(msg, p.keys.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(msg, p.keys.Down):
		p.cursor = min(p.cursor+1, len(shown)-1)
	case key.Matches(msg, p.keys.Choose):
		if p.cursor >= len(shown) {
			return p, nil
		}
		p.closed = true
		return p, emit(scopeMsg{Tenant: shown[p.cursor].Tenant})
	case key.Matches(msg, p.keys.Cancel):
		if p.typed != "" {
			p.typed, p.cursor = "", 0
			return p, nil
		}
		p.closed = true
	case msg.Type == tea.KeyBackspace:
		if r := []rune(p.typed); len(r) > 0 {
			p.typed, p.cursor = string(r[:len(r)-1]), 0
		}
	case msg.Type == tea.KeyRunes && !msg.Alt:
		p.typed += string(msg.Runes)
		p.cursor = 0
	}
	return p, nil
}

func (p pickerModel) view(e env, w, h int) string {
	s := e.styles
	// compact: a short terminal (40×10) — no blank lines, no hint, no
	// line above the box — so that the row under the cursor is always
	// on screen: enter never chooses a tenant nobody can see.
	compact := h < 14
	var b strings.Builder
	b.WriteString(s.Title.Render("Tenant scope") + "\n")
	fixed := 2 + 1 + 1 // the borders, the title, the keys
	if p.typed != "" {
		b.WriteString(truncate(s.Bold.Render("▸ "+p.typed)+s.Muted.Render("  (backspace edits, esc clears)"), max(w-4, 8)) + "\n")
		fixed++
	} else if !compact {
		b.WriteString(s.Muted.Render("type to narrow · which tenant's operations to show") + "\n")
		fixed++
	}
	if !compact {
		b.WriteString("\n")
		fixed += 1 + 1 + 1 // the blank lines above and below the rows, the line above the box
	}
	shown := p.shown()
	rows := max(h-fixed, 1)
	if len(shown) > rows {
		rows = max(rows-1, 1) // "↑/↓ for more"
	}
	if !compact {
		rows = max(rows, 3)
	}
	start := 0
	if p.cursor >= rows {
		start = p.cursor - rows + 1
	}
	// The names give way on a narrow terminal (60 columns), so the box
	// and the counts on its right fit the screen; countsW is the widest
	// counts cell ("  12,345 total  12 unknown"). Narrower still (40
	// columns) the counts lose the word "total", never the unknown count.
	countsW, narrow := 26, w < 52
	if narrow {
		countsW = 17 // "12345  12 unknown"
	}
	nameW := min(max(w-6-2-1-countsW, 10), 28)
	for i := start; i < len(shown) && i < start+rows; i++ {
		t := shown[i]
		name := t.Tenant
		if name == "" {
			name = "all tenants"
		}
		mark := "  "
		if t.Tenant == p.current {
			mark = "• "
		}
		counts := ""
		if t.Tenant != "" {
			counts = fmt.Sprintf("%8s %s", count(t.Total), "total")
			if narrow {
				counts = fmt.Sprintf("%5s", count(t.Total))
			}
			if t.Unknown > 0 {
				counts = fmt.Sprintf("%s  %s", counts, plural(t.Unknown, "unknown", "unknown"))
			}
		}
		// Tenants differ at either end: a long name is clipped in its
		// middle.
		line := fit(mark+clipMiddle(name, nameW-2), nameW) + " " + counts
		if i == p.cursor {
			line = s.Selected.Render("› " + fit(line, nameW+1+countsW))
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
	case len(shown) == 0:
		b.WriteString(truncate(s.Muted.Render(fmt.Sprintf("  no tenant contains %q", p.typed)), max(w-4, 8)) + "\n")
	}
	if len(shown) > rows {
		b.WriteString(s.Muted.Render("  ↑/↓ for more") + "\n")
	}
	if !compact {
		b.WriteString("\n")
	}
	b.WriteString(s.Key.Render("enter") + s.Muted.Render(" choose · ") + s.Key.Render("esc") + s.Muted.Render(" cancel"))
	box := lipgloss.PlaceHorizontal(w, lipgloss.Center, s.Box.Render(b.String()))
	if compact {
		return box
	}
	return "\n" + box
}
