package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// The help: the one-line key help at the bottom of every screen, and the
// help screen (?) with every key of the screen it was opened over.

// screenKeys is the help of the screen or overlay under the help screen:
// its own keys, then the global ones that work there.
func (m Model) screenKeys(e env) keyMap {
	g := m.keys
	km := m.focus().Keys(e)
	switch {
	case m.overlay != overlayNone:
	case m.screen == screenLab:
		km.full = append(km.full, []key.Binding{g.Refresh, g.Help, g.Quit, g.ForceQ})
	default:
		km.full = append(km.full, []key.Binding{g.Command, g.Tenant, g.Refresh, g.Audit, enabled(g.Sweep, !m.cfg.ReadOnly), enabled(g.Lab, m.cfg.Lab != nil), g.Help, g.Quit, g.ForceQ})
	}
	return km
}

func (m Model) helpLine() string {
	if m.overlay == overlayHelp {
		if m.helpOv.overflows(m.env()) {
			return truncate(m.styles.Muted.Render(" esc/?/q close help · ↑↓ pgup/pgdn scroll"), m.width)
		}
		return truncate(m.styles.Muted.Render(" esc/?/q close help"), m.width)
	}
	if m.overlay == overlayCommand {
		return truncate(m.command.View(m.env()), m.width)
	}
	if m.screen == screenList && m.list.typing && m.overlay == overlayNone {
		return truncate(m.styles.Muted.Render(" type to search: key or subject contains it, or a trace id starts with it · enter apply · esc clear"), m.width)
	}
	h := m.help
	km := m.screenKeys(m.env())
	short := km.short
	if m.empty() {
		short = nil
	}
	enabledOf := func(bs []key.Binding) []key.Binding {
		var shown []key.Binding
		for _, b := range bs {
			if b.Enabled() {
				shown = append(shown, b)
			}
		}
		return shown
	}
	shown := enabledOf(short)
	// The screen's keys are in priority order: drop from their end until
	// the line fits, and always keep help and quit, and the way back (esc):
	// an operator who cannot see how to leave a screen is stuck in it.
	global := []key.Binding{m.keys.Help, m.keys.Quit}
	if m.overlay != overlayNone {
		global = nil // a form or the picker has the keyboard: q is text there
	}
	fits := func(bs []key.Binding) bool {
		return ansi.StringWidth(" "+h.ShortHelpView(append(append([]key.Binding{}, bs...), global...))) <= m.width
	}
	upToEsc := shown
	for i, b := range shown {
		if isEsc(b) {
			upToEsc = shown[:i+1]
			break
		}
	}
	if km.narrow != nil && len(short) > 0 && !fits(shown) && !(km.narrowIfCut && fits(upToEsc)) {
		// Too wide in its words: the same keys in fewer.
		shown = enabledOf(km.narrow)
	}
	for {
		line := " " + h.ShortHelpView(append(append([]key.Binding{}, shown...), global...))
		if ansi.StringWidth(line) <= m.width {
			return line
		}
		drop := -1
		for i := len(shown) - 1; i >= 0; i-- {
			if !isEsc(shown[i]) {
				drop = i
				break
			}
		}
		if drop < 0 {
			return truncate(line, m.width)
		}
		shown = append(shown[:drop:drop], shown[drop+1:]...)
	}
}

// isEsc reports whether b is a screen's way back or out (esc).
func isEsc(b key.Binding) bool { return strings.HasPrefix(b.Help().Key, "esc") }

// helpModel is the help screen: every key of the screen it was opened
// over, in columns, and what the states mean. esc, ? and q close it — q
// never quits from here.
type helpModel struct {
	keys          keyMap // of the screen underneath
	closed        bool
	width, height int
	// offset is the first line shown: a screen's keys are more lines than
	// a small terminal has (at 80×24 the global keys — r, D, S, L — were
	// cut off), so the help scrolls.
	offset int
}

func (h helpModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		page := max(h.height-2, 1)
		switch k.String() {
		case "esc", "?", "q":
			h.closed = true
		case "down", "j":
			h.offset++
		case "up", "k":
			h.offset--
		case "pgdown", "ctrl+d", " ":
			h.offset += page
		case "pgup", "ctrl+u":
			h.offset -= page
		case "g", "home":
			h.offset = 0
		case "G", "end":
			h.offset = len(h.lines(e))
		}
		h.offset = h.clamp(e, h.offset)
	}
	return h, nil
}

// clamp keeps offset within the lines there are to scroll.
func (h helpModel) clamp(e env, offset int) int {
	return max(min(offset, len(h.lines(e))-max(h.height-1, 1)), 0)
}

// overflows reports whether the help is longer than the screen.
func (h helpModel) overflows(e env) bool { return len(h.lines(e)) > h.height }

func (h helpModel) SetSize(e env, w, hgt int) (component, tea.Cmd) {
	h.width, h.height = w, hgt
	return h, nil
}

func (h helpModel) Keys(e env) keyMap {
	b := key.NewBinding(key.WithKeys("esc", "?", "q"), key.WithHelp("esc/?/q", "close help"))
	return keyMap{short: []key.Binding{b}, full: [][]key.Binding{{b}}}
}

func (h helpModel) View(e env) string {
	lines := h.lines(e)
	if len(lines) <= h.height || h.height < 2 {
		return strings.Join(lines, "\n")
	}
	// The last line says there is more, and how to get to it.
	off := h.clamp(e, h.offset)
	shown := lines[off : off+h.height-1]
	more := "↓ more"
	switch {
	case off+h.height-1 >= len(lines):
		more = "↑ more above"
	case off > 0:
		more = "↑↓ more"
	}
	more += " — ↑↓/jk pgup/pgdn scroll"
	return strings.Join(shown, "\n") + "\n" + e.styles.Muted.Render(" "+more)
}

// lines is the whole help, a line per screen line.
func (h helpModel) lines(e env) []string {
	s := e.styles
	var b strings.Builder
	b.WriteString(" " + s.Title.Render("Keys") + "\n\n")
	b.WriteString(helpColumns(s, h.keys.full, h.width-2))
	b.WriteString("\n")
	text := "States, most urgent first: unknown (a person must decide) · in_progress · not_applied · failed · applied · " +
		"superseded · authorized. ? marks an unknown operation; ! marks a contradicted one: a provider result arrived " +
		"after a decision and disagrees with it."
	for _, l := range strings.Split(wrap(text, max(h.width-3, 20), " "), "\n") {
		b.WriteString(" " + s.Muted.Render(l) + "\n")
	}
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

// helpColumns lays the key groups out side by side, starting a new band of
// columns when the next would not fit the width (bubbles/help would cut it).
func helpColumns(s *Styles, groups [][]key.Binding, width int) string {
	type column struct {
		lines []string
		w     int
	}
	var cols []column
	for _, g := range groups {
		keyW := 0
		for _, b := range g {
			if b.Enabled() {
				keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			}
		}
		var c column
		for _, b := range g {
			if !b.Enabled() {
				continue
			}
			l := s.Help.FullKey.Render(fit(b.Help().Key, keyW)) + " " + s.Help.FullDesc.Render(b.Help().Desc)
			c.lines = append(c.lines, l)
			c.w = max(c.w, ansi.StringWidth(l))
		}
		if len(c.lines) > 0 {
			cols = append(cols, c)
		}
	}
	var out strings.Builder
	for len(cols) > 0 {
		n, used := 0, 0
		for n < len(cols) && (n == 0 || used+3+cols[n].w <= width) {
			if n > 0 {
				used += 3
			}
			used += cols[n].w
			n++
		}
		band := cols[:n]
		cols = cols[n:]
		rows := 0
		for _, c := range band {
			rows = max(rows, len(c.lines))
		}
		for r := 0; r < rows; r++ {
			var line strings.Builder
			line.WriteString(" ")
			for i, c := range band {
				cell := ""
				if r < len(c.lines) {
					cell = c.lines[r]
				}
				if i < len(band)-1 {
					cell = padRight(cell, c.w) + "   "
				}
				line.WriteString(cell)
			}
			out.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
		out.WriteString("\n")
	}
	return out.String()
}
