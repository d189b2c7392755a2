package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
)

// The command line, as in k9s: ":" opens it on the bottom line; enter runs
// one of commandNames, esc leaves it.

// commandList is every command, for the prompt and the error on a typo.
const commandList = "tenant [NAME|all], state STATE|all, tool [NAME], provider [NAME], age >10m|<2h|all, sort COLUMN [reverse], audit, sweep, lab, help, q"

// commandMsg is a parsed command for the root to carry out.
type commandMsg struct {
	Name string
	Arg  string
}

// parseCommand reads "tenant acme", "state unknown", "q".
func parseCommand(text string) (commandMsg, error) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return commandMsg{}, fmt.Errorf("empty command")
	}
	c := commandMsg{Name: strings.ToLower(f[0]), Arg: strings.Join(f[1:], " ")}
	switch c.Name {
	case "q", "quit", "q!":
		c.Name = "q"
	case "tenant", "t":
		c.Name = "tenant"
		if c.Arg == "all" || c.Arg == "*" {
			c.Arg = ""
		}
		if c.Arg != "" {
			if err := model.ValidateIdentity(c.Arg, "k"); err != nil {
				return c, fmt.Errorf("tenant: %v", err)
			}
		}
	case "state", "s":
		c.Name = "state"
		if c.Arg != "all" && c.Arg != "" {
			st, err := model.ParseState(c.Arg)
			if err != nil {
				return c, err
			}
			c.Arg = string(st)
		}
		if c.Arg == "" {
			c.Arg = "all"
		}
	case "tool":
		if c.Arg == "all" {
			c.Arg = ""
		}
		// The tool is checked against the registry when the command runs.
	case "provider", "p":
		c.Name = "provider"
		if c.Arg == "all" || c.Arg == "*" {
			c.Arg = ""
		}
		if strings.ContainsFunc(c.Arg, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
			return c, fmt.Errorf("provider: one name, printable, without spaces")
		}
	case "age":
		if c.Arg == "all" || c.Arg == "" {
			c.Arg = ""
			break
		}
		f, err := parseAgeFilter(c.Arg)
		if err != nil {
			return c, err
		}
		c.Arg = f.String()
	case "sort":
		// sort COLUMN [reverse]; "sort" alone is the default order.
		words := strings.Fields(strings.ToLower(c.Arg))
		rev := len(words) > 0 && (words[len(words)-1] == "reverse" || words[len(words)-1] == "rev" || words[len(words)-1] == "desc")
		if rev {
			words = words[:len(words)-1]
		}
		if len(words) > 1 {
			return c, fmt.Errorf("sort: one column, then optionally reverse (sort key reverse)")
		}
		col, err := model.ParseSortColumn(strings.Join(words, ""))
		if err != nil {
			return c, err
		}
		c.Arg = string(col)
		if rev {
			c.Arg += " reverse"
		}
	case "audit", "decisions", "d":
		c.Name = "audit"
	case "sweep", "lab", "help":
	default:
		return c, fmt.Errorf("unknown command %q: try %s", f[0], commandList)
	}
	return c, nil
}

type commandModel struct {
	input  textinput.Model
	closed bool
	width  int
}

func newCommand(s *Styles) commandModel {
	in := newInput(s)
	in.Prompt = ":"
	in.CharLimit = 200
	in.Placeholder = commandList
	return commandModel{input: in}
}

func (c commandModel) open() (commandModel, tea.Cmd) {
	c.closed = false
	c.input.SetValue("")
	return c, c.input.Focus()
}

func (c commandModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch k.String() {
		case "esc":
			c.closed = true
			c.input.Blur()
			return c, nil
		case "enter":
			c.closed = true
			c.input.Blur()
			cmd, err := parseCommand(c.input.Value())
			if err != nil {
				return c, emit(bannerMsg{kind: bannerErr, text: ":" + c.input.Value() + " — " + err.Error()})
			}
			return c, emit(cmd)
		}
	}
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	return c, cmd
}

// View is the bottom line while the command line is open.
func (c commandModel) View(e env) string {
	in := c.input
	in.Width = max(c.width-3, 10)
	return " " + in.View()
}

func (c commandModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	c.width = w
	return c, nil
}

func (c commandModel) Keys(e env) keyMap {
	short := []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// runCommand carries out a command.
func (m Model) runCommand(c commandMsg, e env) (Model, tea.Cmd) {
	switch c.Name {
	case "q":
		return m.quitAsked(e)
	case "tenant":
		return m.update(scopeMsg{Tenant: c.Arg})
	case "state":
		m.toList()
		m.overlay = overlayNone
		tab := len(tabStates) - 1
		for i, st := range tabStates {
			if string(st) == c.Arg {
				tab = i
			}
		}
		var cmd tea.Cmd
		m.list, cmd = m.list.setTab(e, tab)
		return m, cmd
	case "tool":
		if c.Arg != "" && e.svc != nil && e.svc.Tools != nil {
			if _, err := e.svc.Tools.Lookup(c.Arg); err != nil {
				m.banner = banner{kind: bannerErr, text: oneLine(err.Error()), at: e.now}
				return m, nil
			}
		}
		m.toList()
		m.overlay = overlayNone
		var cmd tea.Cmd
		m.list, cmd = m.list.setTool(e, c.Arg)
		return m, cmd
	case "provider":
		m.toList()
		m.overlay = overlayNone
		var cmd tea.Cmd
		m.list, cmd = m.list.setProvider(e, c.Arg)
		return m, cmd
	case "age":
		f, _ := parseAgeFilter(c.Arg) // parsed once already; "" clears
		m.toList()
		m.overlay = overlayNone
		var cmd tea.Cmd
		m.list, cmd = m.list.setAge(e, f)
		return m, cmd
	case "sort":
		col, rev, _ := strings.Cut(c.Arg, " ")
		m.toList()
		m.overlay = overlayNone
		var cmd tea.Cmd
		m.list, cmd = m.list.setSort(e, model.SortColumn(col), rev == "reverse")
		return m, cmd
	case "audit":
		if m.screen == screenAudit {
			return m, nil
		}
		m.goTo(screenAudit)
		var cmd tea.Cmd
		m.audit, cmd = m.audit.open(e)
		return m, cmd
	case "sweep":
		return m.requestSweep(e)
	case "lab":
		if m.cfg.Lab == nil {
			m.banner = banner{kind: bannerErr, text: "No lab in this console.", at: e.now}
			return m, nil
		}
		m.goTo(screenLab)
		return m, nil
	case "help":
		m.helpOv = helpModel{keys: m.screenKeys(e), width: m.width, height: m.bodyHeight()}
		m.overlay = overlayHelp
		return m, nil
	}
	return m, nil
}

// ageFilter keeps operations older (>) or younger (<) than an age; the
// zero value keeps every operation.
type ageFilter struct {
	older bool
	d     time.Duration
}

func (f ageFilter) String() string {
	if f.d == 0 {
		return ""
	}
	op := "<"
	if f.older {
		op = ">"
	}
	return op + shortDuration(f.d)
}

// bounds are the creation times the store filters on, at now.
func (f ageFilter) bounds(now time.Time) (before, after time.Time) {
	if f.d == 0 {
		return
	}
	if f.older {
		return now.Add(-f.d), time.Time{}
	}
	return time.Time{}, now.Add(-f.d)
}

// parseAgeFilter reads ">10m" (older than ten minutes), "<2h" (younger
// than two hours), "> 3d"; "" and "all" clear it.
func parseAgeFilter(s string) (ageFilter, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return ageFilter{}, nil
	}
	var f ageFilter
	switch s[0] {
	case '>':
		f.older = true
	case '<':
	default:
		return f, fmt.Errorf("age: >DURATION (older than) or <DURATION (younger than), as >10m, <2h, >3d, or all")
	}
	num := strings.TrimSpace(s[1:])
	const longest = 100 * 365 * 24 * time.Hour
	var err error
	tooLong := false
	if days, ok := strings.CutSuffix(num, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		// Compared before the multiplication, which would overflow.
		tooLong = n > 100*365
		f.d = time.Duration(min(n, 100*365)) * 24 * time.Hour
	} else {
		f.d, err = time.ParseDuration(num)
	}
	switch {
	case err != nil:
		return ageFilter{}, fmt.Errorf("age: %q is not a duration (10m, 2h, 3d)", num)
	case tooLong || f.d > longest:
		return ageFilter{}, fmt.Errorf("age: %q is longer than 100 years", num)
	case f.d <= 0:
		return ageFilter{}, fmt.Errorf("age: %q — the age must be more than zero (10m, 2h, 3d)", num)
	}
	return f, nil
}

// shortDuration writes d as the filter was typed: 3d, 2h, 10m, 45s, or Go's
// form for anything else.
func shortDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d%time.Second == 0:
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return d.String()
}
