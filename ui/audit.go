package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The audit log: every operator decision, newest first, filtered by
// operator, tenant and action (typed as "operator:bob tenant:acme
// action:not-applied"); enter opens the decision's operation.

// auditPage is how many decisions one read brings; moving past the last
// row reads the next (keyset on the decision id).
const auditPage = 200

// auditMsg is one page of decisions.
type auditMsg struct {
	Seq    int
	Append bool
	Rows   []model.AuditEntry
	Err    error
}

func loadAudit(ctx context.Context, st store.Ledger, seq int, q store.DecisionQuery, appendRows bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		q.Limit = auditPage
		rows, err := st.Decisions(ctx, q)
		for i := range rows {
			rows[i] = rows[i].Visible() // the one sanitizer
		}
		return auditMsg{Seq: seq, Append: appendRows, Rows: rows, Err: err}
	}
}

// leaveAuditMsg leaves the audit log.
type leaveAuditMsg struct{}

type auditKeys struct {
	Up, Down, Top, Open, Filter, Back key.Binding
}

func newAuditKeys() auditKeys {
	return auditKeys{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:    key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "newest")),
		Open:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open operation")),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter operator: tenant: action:")),
		Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

type auditModel struct {
	keys    auditKeys
	input   textinput.Model
	typing  bool
	filter  string
	query   store.DecisionQuery
	rows    []model.AuditEntry
	cursor  int
	more    bool // the last page was full: there may be older decisions
	seq     int
	loading bool
	err     error

	width, height int
}

func newAudit(s *Styles) auditModel {
	in := newInput(s)
	in.Prompt = "/ "
	in.Placeholder = "operator:NAME tenant:T action:applied|not-applied|new-key"
	in.CharLimit = 200
	return auditModel{keys: newAuditKeys(), input: in}
}

// parseAuditFilter reads "operator:bob tenant:acme action:applied"; a bare
// word is an operator.
func parseAuditFilter(text string) (store.DecisionQuery, error) {
	var q store.DecisionQuery
	for _, w := range strings.Fields(text) {
		k, v, ok := strings.Cut(w, ":")
		if !ok {
			k, v = "operator", w
		}
		switch k {
		case "operator", "op", "by":
			q.Operator = v
		case "tenant":
			q.Tenant = v
		case "action":
			a, err := model.ParseAction(v)
			if err != nil {
				return q, err
			}
			q.Action = a
		default:
			return q, fmt.Errorf("unknown filter %q: use operator:, tenant: or action:", k+":")
		}
	}
	return q, nil
}

// open shows the newest decisions under the current filter.
func (a auditModel) open(e env) (auditModel, tea.Cmd) {
	a.seq++
	a.loading = true
	q := a.query
	if q.Tenant == "" {
		q.Tenant = e.scope
	}
	return a, loadAudit(e.ctx, e.st, a.seq, q, false)
}

func (a auditModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case auditMsg:
		if msg.Seq != a.seq {
			return a, nil
		}
		a.loading = false
		if msg.Err != nil {
			a.err = msg.Err
			return a, nil
		}
		a.err = nil
		if msg.Append {
			a.rows = append(a.rows, msg.Rows...)
		} else {
			keep := int64(0)
			if a.cursor < len(a.rows) {
				keep = a.rows[a.cursor].ID
			}
			a.rows, a.cursor = msg.Rows, 0
			for i, r := range a.rows {
				if r.ID == keep {
					a.cursor = i
				}
			}
		}
		a.more = len(msg.Rows) == auditPage
		return a, nil
	case tea.KeyMsg:
		if a.typing {
			return a.typingKey(msg, e)
		}
		k := a.keys
		switch {
		case key.Matches(msg, k.Back):
			if a.filter != "" {
				a.filter, a.query = "", store.DecisionQuery{}
				a.input.SetValue("")
				return a.open(e)
			}
			return a, emit(leaveAuditMsg{})
		case key.Matches(msg, k.Up):
			a.cursor = max(a.cursor-1, 0)
		case key.Matches(msg, k.Down):
			if a.cursor < len(a.rows)-1 {
				a.cursor++
			} else if a.more && !a.loading && len(a.rows) > 0 {
				a.seq++
				a.loading = true
				q := a.query
				if q.Tenant == "" {
					q.Tenant = e.scope
				}
				q.BeforeID = a.rows[len(a.rows)-1].ID
				return a, loadAudit(e.ctx, e.st, a.seq, q, true)
			}
		case key.Matches(msg, k.Top):
			a.cursor = 0
		case key.Matches(msg, k.Filter):
			a.typing = true
			a.input.SetValue(a.filter)
			a.input.CursorEnd()
			return a, a.input.Focus()
		case key.Matches(msg, k.Open):
			if a.cursor < len(a.rows) {
				r := a.rows[a.cursor]
				return a, emit(openDetailMsg{Target: detailTarget{Tenant: r.Tenant, Key: r.Key}})
			}
		}
		return a, nil
	}
	if a.typing {
		var c tea.Cmd
		a.input, c = a.input.Update(msg)
		return a, c
	}
	return a, nil
}

func (a auditModel) typingKey(msg tea.KeyMsg, e env) (component, tea.Cmd) {
	switch msg.String() {
	case "enter":
		q, err := parseAuditFilter(a.input.Value())
		if err != nil {
			return a, emit(bannerMsg{kind: bannerErr, text: "Audit filter: " + err.Error()})
		}
		a.typing = false
		a.input.Blur()
		a.filter, a.query = strings.TrimSpace(a.input.Value()), q
		return a.open(e)
	case "esc":
		a.typing = false
		a.input.Blur()
		return a, nil
	}
	var c tea.Cmd
	a.input, c = a.input.Update(msg)
	return a, c
}

func (a auditModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	a.width, a.height = w, h
	return a, nil
}

func (a auditModel) Keys(e env) keyMap {
	k := a.keys
	// esc second: a narrow help line keeps the way back.
	short := []key.Binding{k.Open, k.Back, relabel(k.Filter, "filter"), helpMove}
	return keyMap{short: short, full: [][]key.Binding{{k.Up, k.Down, k.Top}, {k.Open, k.Filter, k.Back}}}
}

func (a auditModel) View(e env) string {
	s := e.styles
	w, h := a.width, a.height
	var b strings.Builder
	title := " " + s.Title.Render("Audit log") + s.Muted.Render(" · every operator decision, newest first")
	if e.scope != "" && a.query.Tenant == "" {
		title += s.Muted.Render(" · tenant " + e.scope)
	}
	b.WriteString(title + "\n")
	// Columns: the change (from → to) is dropped below 110 columns (the
	// action says where it went); the evidence and reason take the rest.
	atW, opW, actW, chW := 19, 10, 19, 24
	timeFormat := "2006-01-02 15:04:05"
	narrow := w < 100
	if w < 110 {
		chW = 0
	}
	if narrow {
		// The action as where it went; the time to the minute.
		atW, actW, timeFormat = 16, 13, "2006-01-02 15:04"
	}
	keyW := max(min(36, w/4), 14)
	if narrow {
		keyW = 18
	}
	if w < 72 {
		// 60 columns: the year and the operator's length give way, and
		// the evidence goes, so the action — where the operation went —
		// is never cut.
		atW, opW, timeFormat = 11, 8, "01-02 15:04"
		keyW = max(w-1-atW-opW-actW-5, 10)
	}
	restW := max(w-1-atW-opW-keyW-actW-chW-5, 0)
	cells := func(at, op, key, act, ch, rest string) string {
		line := fit(at, atW) + " " + fit(op, opW) + " " + fit(key, keyW) + " " + fit(act, actW) + " "
		if chW > 0 {
			line += fit(ch, chW) + " "
		}
		return line + fit(rest, restW)
	}
	b.WriteString(s.TableHead.Render(truncate(" "+cells("AT", "OPERATOR", "OPERATION", "ACTION", "CHANGE", "EVIDENCE · REASON"), w)) + "\n")
	visible := max(h-3, 1)
	switch {
	case a.err != nil:
		b.WriteString(s.BannerErr.Render("  Cannot read the decisions: "+oneLine(a.err.Error())) + "\n")
		visible--
	case len(a.rows) == 0 && a.loading:
		b.WriteString(s.Muted.Render("  loading…") + "\n")
		visible--
	case len(a.rows) == 0:
		b.WriteString(s.Muted.Render("  No decisions match.") + "\n")
		visible--
	}
	start := 0
	if a.cursor >= visible {
		start = a.cursor - visible + 1
	}
	end := min(len(a.rows), start+visible)
	for i := start; i < end; i++ {
		r := a.rows[i]
		change := fmt.Sprintf("%s v%d → %s", r.FromState, r.FromVersion, r.ToState)
		rest := r.Reason
		if r.Evidence != "" {
			rest = r.Evidence + " · " + r.Reason
		}
		mark := " "
		if i == a.cursor {
			mark = "›"
		}
		act := r.Action.Verb()
		if narrow {
			act = "→ " + string(r.ToState)
		}
		line := mark + cells(r.At.In(e.loc).Format(timeFormat), r.Operator, clipMiddle(r.Tenant+"/"+r.Key, keyW), act, change, rest)
		if i == a.cursor {
			line = s.Selected.Render(truncate(line, w))
		}
		b.WriteString(line + "\n")
	}
	for i := max(end-start, 0); i < visible; i++ {
		b.WriteByte('\n')
	}
	if a.typing {
		in := a.input
		in.Width = max(w-4, 10)
		b.WriteString(" " + in.View())
	} else {
		status := plural(len(a.rows), "decision", "decisions")
		if a.more {
			status += ", more below"
		}
		if a.filter != "" {
			status += fmt.Sprintf(" · filter %q (esc clears)", a.filter)
		}
		b.WriteString(" " + s.Muted.Render(status))
	}
	return b.String()
}
