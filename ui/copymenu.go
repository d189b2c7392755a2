package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

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
func copyMenuItems(d *model.Detail, db string) []copyItem {
	op := d.Operation
	flags := fmt.Sprintf("--db %s --tenant %s --key %s", shellQuote(db), shellQuote(op.Tenant), shellQuote(op.Key))
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
	var b strings.Builder
	b.WriteString(s.Title.Render("Copy to the clipboard") + "\n\n")
	for i, it := range c.items {
		mark := "  "
		if i == c.cursor {
			mark = "› "
		}
		head := mark + s.Key.Render(strconv.Itoa(i+1)) + " " + s.Label.Render(it.Label)
		if i == c.cursor {
			head = s.Selected.Render(mark + strconv.Itoa(i+1) + " " + it.Label)
		}
		b.WriteString(head + "\n")
		// The text whole, wrapped: what is copied is what is shown.
		for _, line := range strings.Split(wrap(it.Text, max(boxW-10, 10), " /"), "\n") {
			b.WriteString("     " + line + "\n")
		}
	}
	b.WriteString("\n" + s.Muted.Render("enter or a number copies (OSC 52) · esc closes"))
	return "\n" + lipgloss.PlaceHorizontal(c.width, lipgloss.Center, s.Box.Width(boxW).Render(b.String()))
}

func (c copyMenuModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	c.width, c.height = w, h
	return c, nil
}

func (c copyMenuModel) Keys(e env) keyMap {
	short := []key.Binding{copyKeyMove, copyKeyCopy, copyKeyCancel}
	return keyMap{short: short, full: [][]key.Binding{short}}
}
