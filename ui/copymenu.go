package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// The copy menu (y in the detail): what an on-call engineer pastes into a
// ticket or a shell — the operation key, a ready `retrysafe ops` command,
// each attempt's whole trace id (never cut) — copied with OSC 52 by the
// root (copyTextMsg). ↑↓ and enter, or an item's number; esc closes.

// copyItem is one thing the menu copies.
type copyItem struct {
	Label string // what it is, on the menu
	What  string // what the banner says was copied
	Text  string // what goes on the clipboard, whole
}

// copyMenuMsg asks the root to open the menu on items.
type copyMenuMsg struct{ Items []copyItem }

// copyTextMsg asks the root to copy one item.
type copyTextMsg struct{ What, Text string }

// copyMenuItems are an operation's: its key, commands, its trace ids.
func copyMenuItems(d *model.Detail, db, cmdFlags string) []copyItem {
	op := d.Operation
	flags := fmt.Sprintf("--db %s%s --tenant %s --key %s", textsafe.ShellWord(db), cmdFlags, textsafe.ShellWord(op.Tenant), textsafe.ShellWord(op.Key))
	items := []copyItem{
		{Label: "operation key", What: "the key " + op.Tenant + "/" + op.Key, Text: op.Key},
		{Label: "show it", What: "the `retrysafe ops show` command", Text: "retrysafe ops show " + flags},
	}
	if op.State == model.StateUnknown || op.State == model.StateNotApplied {
		items = append(items, copyItem{Label: "check the provider", What: "the `retrysafe ops check` command", Text: "retrysafe ops check " + flags})
	}
	seen := map[string]bool{}
	for _, a := range d.Attempts {
		if a.TraceID == "" || seen[a.TraceID] {
			continue
		}
		seen[a.TraceID] = true
		items = append(items, copyItem{Label: fmt.Sprintf("trace id, attempt %d", a.Seq), What: "the trace id " + a.TraceID, Text: a.TraceID})
	}
	return items
}

type copyMenuModel struct {
	items  []copyItem
	cursor int
	closed bool

	width, height int
}

var _ component = copyMenuModel{}

func newCopyMenu(items []copyItem) copyMenuModel { return copyMenuModel{items: items} }

var (
	copyKeyMove   = key.NewBinding(key.WithKeys("up", "down", "j", "k"), key.WithHelp("↑↓", "choose"))
	copyKeyCopy   = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter/1-9", "copy"))
	copyKeyCancel = key.NewBinding(key.WithKeys("esc", "q", "y"), key.WithHelp("esc", "close"))
)

func (c copyMenuModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || k.Paste {
		return c, nil
	}
	pick := func(i int) (component, tea.Cmd) {
		c.closed = true
		it := c.items[i]
		return c, emit(copyTextMsg{What: it.What, Text: it.Text})
	}
	switch s := k.String(); s {
	case "up", "k":
		c.cursor = max(c.cursor-1, 0)
	case "down", "j":
		c.cursor = min(c.cursor+1, len(c.items)-1)
	case "enter":
		if len(c.items) > 0 {
			return pick(c.cursor)
		}
	case "esc", "q", "y":
		c.closed = true
	default:
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(c.items) {
			return pick(n - 1)
		}
	}
	return c, nil
}

func (c copyMenuModel) View(e env) string {
	s := e.styles
	boxW := min(max(c.width-6, 30), 100)
	// Each item: its label line, then its text whole, wrapped — what is
	// copied is what is shown.
	build := func(textW int, indent string) ([][]string, int) {
		blocks, total := make([][]string, len(c.items)), 0
		for i, it := range c.items {
			mark := "  "
			if i == c.cursor {
				mark = "› "
			}
			head := mark + s.Key.Render(strconv.Itoa(i+1)) + " " + s.Label.Render(it.Label)
			if i == c.cursor {
				head = s.Selected.Render(mark + strconv.Itoa(i+1) + " " + it.Label)
			}
			lines := []string{head}
			for _, line := range strings.Split(wrap(textsafe.Visible(it.Text), textW, " /"), "\n") { // copied whole, drawn inert
				lines = append(lines, indent+line)
			}
			blocks[i], total = lines, total+len(lines)
		}
		return blocks, total
	}
	indent := "     "
	blocks, total := build(max(boxW-10, 10), indent)
	// A screen too short for it all drops the blank lines and the box's
	// own hint (the key help under it says the same), and the indent, so
	// the items get the room; then shows the items that fit.
	compact := c.height > 0 && total+2+1+1+1+2 > c.height
	if compact {
		boxW, indent = max(c.width-2, 20), "  "
		blocks, _ = build(max(boxW-6, 10), indent)
	}
	// The items that fit, the one under the cursor always among them (a
	// long one cut, and saying so, only if it alone is taller than the
	// screen).
	chrome := 2 + 1 // the box's borders, the title
	if !compact {
		chrome += 1 + 1 + 2 // the leading line, the blank after the title, the hint
	}
	room := len(c.items) * 100
	if c.height > 0 {
		room = max(c.height-chrome, 2)
	}
	lo, hi := c.window(blocks, room)
	var b strings.Builder
	b.WriteString(s.Title.Render("Copy to the clipboard") + "\n")
	if !compact {
		b.WriteString("\n")
	}
	if lo > 0 {
		b.WriteString(s.Muted.Render(fmt.Sprintf("  ↑ %d more", lo)) + "\n")
	}
	for i := lo; i < hi; i++ {
		lines := blocks[i]
		if avail := room - btoi(lo > 0) - btoi(hi < len(c.items)); len(lines) > avail {
			lines = append(lines[:max(avail-1, 1)], indent+s.Muted.Render(fmt.Sprintf("… +%d lines (taller screen)", len(blocks[i])-max(avail-1, 1))))
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	if hi < len(c.items) {
		b.WriteString(s.Muted.Render(fmt.Sprintf("  ↓ %d more", len(c.items)-hi)) + "\n")
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if !compact {
		out = b.String() + "\n" + s.Muted.Render("enter or a number copies (OSC 52) · esc closes")
	}
	box := lipgloss.PlaceHorizontal(c.width, lipgloss.Center, s.Box.Width(boxW).Render(out))
	if compact {
		return box
	}
	return "\n" + box
}

// window is the range of items [lo, hi) shown in room lines: the cursor's
// item, then as many after it and before it as fit, a line kept for each
// "more" marker.
func (c copyMenuModel) window(blocks [][]string, room int) (lo, hi int) {
	if len(blocks) == 0 {
		return 0, 0
	}
	cur := min(max(c.cursor, 0), len(blocks)-1)
	lo, hi = cur, cur+1
	used := len(blocks[cur])
	fits := func(lo, hi, used int) bool {
		return used+btoi(lo > 0)+btoi(hi < len(blocks)) <= room
	}
	// Items above first, so moving down keeps the earlier ones in view
	// while they fit; then below.
	for lo > 0 && fits(lo-1, hi, used+len(blocks[lo-1])) {
		lo--
		used += len(blocks[lo])
	}
	for hi < len(blocks) && fits(lo, hi+1, used+len(blocks[hi])) {
		used += len(blocks[hi])
		hi++
	}
	return lo, hi
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c copyMenuModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	c.width, c.height = w, h
	return c, nil
}

func (c copyMenuModel) Keys(e env) keyMap {
	short := []key.Binding{copyKeyMove, copyKeyCopy, copyKeyCancel}
	return keyMap{short: short, full: [][]key.Binding{short}}
}
