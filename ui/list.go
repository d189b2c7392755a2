package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/store"
)

// The operations list: state tabs, a search, and one page of the ledger at
// a time, newest first. The page is as long as the screen and is read by
// keyset (row id), so moving through a million operations costs the same
// as moving through ten, and memory holds one screenful.

type intentKind int

const (
	intentIndex intentKind = iota // put the cursor on row index
	intentKeep                    // stay on operation id (else on row index)
	intentBelow                   // the row after id in the list's order
	intentAbove                   // the row before id in the list's order
	intentLast                    // the last row
)

// cursorIntent says where the cursor goes when the page it asked for
// arrives.
type cursorIntent struct {
	kind  intentKind
	id    int64
	index int
	// firstPage keeps intentKeep to the page asked for: the cursor stays
	// on id if that page holds it, and no other page is read to find it.
	firstPage bool
}

// searchDebounce is how long typing pauses before the search runs.
const searchDebounce = 250 * time.Millisecond

// searchTickMsg fires when typing has paused.
type searchTickMsg struct{ Seq int }

type listModel struct {
	keys  listKeys
	input textinput.Model
	// typing: the search field has the keyboard.
	typing   bool
	query    string
	tool     string    // :tool filter ("" = every tool)
	provider string    // :provider filter ("" = any provider)
	age      ageFilter // :age filter (zero = any age)
	// sort is the order the store reads the rows in (s cycles it,
	// :sort sets it); reverse turns it round.
	sort       model.SortColumn
	reverse    bool
	contraOnly bool
	// finding filters by the latest provider finding.
	finding model.FindingFilter
	tab     int
	started bool
	// autoTab: the first tab is chosen from the counts (unknown if any
	// operation is unknown, else all) until the user picks one.
	autoTab bool

	rows []model.Operation
	// attempts are the rows' attempts the grace is read from
	// (pageMsg.Attempts), by operation id.
	attempts map[int64][]model.Attempt
	cursor   int
	anchor   anchor
	offset   int
	// newest is the id of the list's first row when last known
	// (pageMsg.Newest): a refresh deep in a long list moves the offset by
	// the rows that came in above it.
	newest int64
	limit  int
	width  int
	// viewHeight is the area the list draws in (the page is limit rows).
	viewHeight int

	// marked are the rows marked for a bulk decision.
	marked  marks
	markSeq int

	seq       int
	loading   bool
	slow      bool // a search: may scan; worth a spinner
	intent    cursorIntent
	err       error
	searchSeq int
	// cancel stops the page load in flight when a newer one replaces it:
	// a search that scans a million rows should not keep a reader
	// connection busy for an answer nobody will see.
	cancel context.CancelFunc
}

func newList(r *lipgloss.Renderer) listModel {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "key or subject (contains), trace id (starts with)"
	in.CharLimit = 200
	in.PromptStyle = r.NewStyle().Bold(true)
	in.TextStyle = r.NewStyle()
	in.PlaceholderStyle = r.NewStyle().Faint(true)
	in.Cursor.Style = r.NewStyle().Reverse(true)
	in.Cursor.TextStyle = r.NewStyle()
	// A steady cursor: no blink timer redrawing the screen twice a second.
	in.Cursor.SetMode(cursor.CursorStatic)
	return listModel{keys: newListKeys(), input: in, autoTab: true, tab: 0, limit: 10, marked: marks{ops: map[int64]model.Operation{}}}
}

func (l listModel) selected() (model.Operation, bool) {
	if l.cursor < 0 || l.cursor >= len(l.rows) {
		return model.Operation{}, false
	}
	return l.rows[l.cursor], true
}

func (l listModel) state() model.State { return tabStates[l.tab] }

func (l listModel) query_(e env) store.ListQuery {
	q := store.ListQuery{Tenant: e.scope, State: l.state(), Search: l.query, Tool: l.tool, Contradicted: l.contraOnly, Finding: l.finding,
		Sort: l.sort, Reverse: l.reverse, Provider: l.provider}
	q.CreatedBefore, q.CreatedAfter = l.age.bounds(e.now)
	return q
}

// total is how many operations match the filters, when the counts say so
// (a search does not have a count: that would mean scanning for it).
func (l listModel) total(e env) int {
	if !e.countsOK || l.query != "" || l.tool != "" || l.provider != "" || l.age.d != 0 || l.finding != model.FilterAnyFinding {
		return -1
	}
	if l.contraOnly {
		if l.state() == "" {
			return e.counts.Contradicted
		}
		return -1
	}
	if l.state() == "" {
		return e.counts.Total
	}
	return e.counts.ByState[l.state()]
}

// start loads the first page, once.
func (l listModel) start(e env) (listModel, tea.Cmd) {
	if l.started {
		return l, nil
	}
	l.started = true
	if l.autoTab {
		l.tab = len(tabStates) - 1
		if e.counts.ByState[model.StateUnknown] > 0 {
			l.tab = 0
		}
	}
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

// rescope forgets the page for a new tenant scope; start reloads it.
func (l listModel) rescope() listModel {
	l.started, l.rows, l.cursor, l.anchor, l.offset = false, nil, 0, anchor{}, 0
	l.marked = marks{ops: map[int64]model.Operation{}}
	return l
}

func (l listModel) load(e env, a anchor, offset int, in cursorIntent) (listModel, tea.Cmd) {
	if l.cancel != nil {
		l.cancel()
	}
	ctx, cancel := context.WithCancel(e.ctx)
	l.cancel = cancel
	l.seq++
	l.loading, l.slow, l.intent = true, l.query != "", in
	req := pageReq{Seq: l.seq, Query: l.query_(e), Anchor: a, Limit: l.limit, Offset: offset, Total: l.total(e)}
	if in.kind == intentKeep && !in.firstPage {
		req.KeepID, req.KeepPos, req.Newest = in.id, l.offset+l.cursor, l.newest
		if len(l.rows) > 0 {
			req.OldTopID = l.rows[0].ID
		}
	}
	return l, loadPage(ctx, e.st, req)
}

// reload re-reads the page on screen, keeping the cursor on its operation.
func (l listModel) reload(e env) (listModel, tea.Cmd) {
	if !l.started {
		return l, nil
	}
	in := cursorIntent{kind: intentIndex, index: l.cursor}
	if op, ok := l.selected(); ok {
		in = cursorIntent{kind: intentKeep, id: op.ID, index: l.cursor}
	}
	return l.load(e, l.anchor, l.offset, in)
}

// setPageLen sets the page length to what fits and reloads if it changed.
func (l listModel) setPageLen(e env, h int) (listModel, tea.Cmd) {
	if h == l.limit {
		return l, nil
	}
	l.limit = h
	if !l.started {
		return l, nil
	}
	return l.reload(e)
}

// loaded takes a page that arrived.
func (l listModel) loaded(msg pageMsg, e env) (listModel, tea.Cmd) {
	if msg.Seq != l.seq {
		return l, nil // an answer for filters or a page the screen has left
	}
	l.loading, l.slow = false, false
	if l.cancel != nil {
		l.cancel()
		l.cancel = nil
	}
	if msg.Err != nil {
		l.err = msg.Err
		return l, nil
	}
	l.err = nil
	l.rows, l.anchor, l.offset, l.attempts = msg.Rows, msg.Anchor, msg.Offset, msg.Attempts
	if msg.Newest != 0 || msg.Anchor.kind == anchorTop {
		l.newest = msg.Newest // every new query starts at the top
	}
	l.cursor = l.place(l.intent, msg.Near)
	return l, nil
}

// place puts the cursor where in says; near is the page's row next to the
// anchor (pageMsg.Near), for an anchor row no longer on it.
func (l listModel) place(in cursorIntent, near int64) int {
	n := len(l.rows)
	if n == 0 {
		return 0
	}
	clamp := func(i int) int { return max(0, min(i, n-1)) }
	switch in.kind {
	case intentKeep:
		for i, r := range l.rows {
			if r.ID == in.id {
				return i
			}
		}
		return clamp(in.index)
	case intentBelow:
		// The row after id in the list's order: the page was read after it,
		// or (the last page) holds it.
		for i, r := range l.rows {
			if r.ID == in.id {
				return clamp(i + 1)
			}
		}
		for i, r := range l.rows {
			if near != 0 && r.ID == near {
				return i // the row after it, on the last page
			}
		}
		if near == 0 && l.anchor.kind == anchorBottom {
			return n - 1 // nothing after it: the end, not back up the page
		}
		return 0
	case intentAbove:
		for i, r := range l.rows {
			if r.ID == in.id {
				return clamp(i - 1)
			}
		}
		for i, r := range l.rows {
			if near != 0 && r.ID == near {
				return i // the row before it, on the first page
			}
		}
		if near == 0 && l.anchor.kind == anchorTop {
			return 0 // nothing before it: the top, not back down the page
		}
		return n - 1
	case intentLast:
		return n - 1
	}
	return clamp(in.index)
}

// atTop: no row is newer than the page's first. Pages anchored elsewhere
// ask the ledger (a page above that comes back short falls back to the top).
func (l listModel) atTop() bool {
	return l.anchor.kind == anchorTop || l.anchor.kind == anchorBottom && l.offset == 0
}

// full: the page is as long as it may be, so older rows may follow.
func (l listModel) full() bool { return len(l.rows) >= l.limit && l.anchor.kind != anchorBottom }

func (l listModel) up(e env) (listModel, tea.Cmd) {
	if l.cursor > 0 {
		l.cursor--
		return l, nil
	}
	if l.atTop() || len(l.rows) == 0 || l.loading {
		return l, nil
	}
	first := l.rows[0].ID
	return l.load(e, rowAnchor(anchorAfter, l.rows[0]), max(0, l.offset-l.limit), cursorIntent{kind: intentAbove, id: first})
}

func (l listModel) down(e env) (listModel, tea.Cmd) {
	if l.cursor < len(l.rows)-1 {
		l.cursor++
		return l, nil
	}
	if !l.full() || l.loading {
		return l, nil
	}
	last := l.rows[len(l.rows)-1].ID
	return l.load(e, rowAnchor(anchorBefore, l.rows[len(l.rows)-1]), l.offset+len(l.rows), cursorIntent{kind: intentBelow, id: last})
}

func (l listModel) pageDown(e env) (listModel, tea.Cmd) {
	if !l.full() || l.loading {
		l.cursor = max(len(l.rows)-1, 0)
		return l, nil
	}
	return l.load(e, rowAnchor(anchorBefore, l.rows[len(l.rows)-1]), l.offset+len(l.rows), cursorIntent{kind: intentIndex, index: l.cursor})
}

func (l listModel) pageUp(e env) (listModel, tea.Cmd) {
	if l.atTop() || len(l.rows) == 0 || l.loading {
		l.cursor = 0
		return l, nil
	}
	return l.load(e, rowAnchor(anchorAfter, l.rows[0]), max(0, l.offset-l.limit), cursorIntent{kind: intentIndex, index: l.cursor})
}

// setTool filters by tool ("" = every tool) and reads the newest page.
func (l listModel) setTool(e env, tool string) (listModel, tea.Cmd) {
	l.tool = tool
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

// follow puts the cursor on op, on the tab of its state when the tab shown
// no longer holds it (it moved on under a decision).
func (l listModel) follow(e env, op model.Operation) (listModel, tea.Cmd) {
	if st := l.state(); st != "" && st != op.State {
		for i, s := range tabStates {
			if s == op.State {
				l.tab, l.autoTab, l.contraOnly = i, false, false
			}
		}
	}
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentKeep, id: op.ID})
}

// setProvider filters by provider ("" = any) and reads the first page.
func (l listModel) setProvider(e env, provider string) (listModel, tea.Cmd) {
	l.provider = provider
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

// setAge filters by age (the zero filter: any age) and reads the first
// page; the bounds move with the clock at every load.
func (l listModel) setAge(e env, f ageFilter) (listModel, tea.Cmd) {
	l.age = f
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

// setSort orders the list by col (reverse turns it round) and reads its
// first page; the cursor stays on its operation when that page holds it.
func (l listModel) setSort(e env, col model.SortColumn, reverse bool) (listModel, tea.Cmd) {
	if col == "" {
		col = model.SortAge
	}
	l.sort, l.reverse = col, reverse
	in := cursorIntent{kind: intentIndex}
	if op, ok := l.selected(); ok {
		// Only if the new order's first page holds it: a page found for it
		// elsewhere would be at a position nobody counted.
		in = cursorIntent{kind: intentKeep, id: op.ID, firstPage: true}
	}
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, in)
}

// order is the list's sort column (the default: age, newest first).
func (l listModel) order() model.SortColumn {
	if l.sort == "" {
		return model.SortAge
	}
	return l.sort
}

// sortWords is the order for the status line, "" for the default.
func (l listModel) sortWords() string {
	if (l.sort == "" || l.sort == model.SortAge) && !l.reverse {
		return ""
	}
	return "sorted " + l.sort.Words(l.reverse)
}

// setTab switches the state filter and reads its newest page.
func (l listModel) setTab(e env, tab int) (listModel, tea.Cmd) {
	l.tab = (tab + len(tabStates)) % len(tabStates)
	l.autoTab = false
	// The contradicted filter belongs to the tab it was set on: carried
	// over, it would hide most of the next tab without saying so.
	l.contraOnly = false
	l.rows, l.cursor = nil, 0
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

func (l listModel) key(msg tea.KeyMsg, e env) (listModel, tea.Cmd) {
	if l.typing {
		return l.typingKey(msg, e)
	}
	k := l.keys
	if key.Matches(msg, k.Clear) && l.marked.len() > 0 {
		l.marked = marks{ops: map[int64]model.Operation{}}
		return l, nil
	}
	if l, c, ok := l.markKey(msg.String(), e); ok {
		return l, c
	}
	switch {
	case key.Matches(msg, k.Export):
		return l, exportView(e.ctx, e.st, l.query_(e), e.export, "csv", e.now)
	case key.Matches(msg, k.ExportJSON):
		return l, exportView(e.ctx, e.st, l.query_(e), e.export, "jsonl", e.now)
	}
	if l.marked.len() > 0 && (key.Matches(msg, k.Apply) || key.Matches(msg, k.NotApply)) {
		ops := l.marked.list()
		off := 0
		for _, op := range ops {
			if st := l.state(); st != "" && op.State != st {
				off++
			}
		}
		action := model.ActionMarkApplied
		if key.Matches(msg, k.NotApply) {
			action = model.ActionMarkNotApplied
		}
		return l, emit(bulkRequestMsg{Action: action, Ops: ops, OffTab: off})
	}
	switch {
	case key.Matches(msg, k.Up):
		return l.up(e)
	case key.Matches(msg, k.Down):
		return l.down(e)
	case key.Matches(msg, k.PageDown):
		return l.pageDown(e)
	case key.Matches(msg, k.PageUp):
		return l.pageUp(e)
	case key.Matches(msg, k.Top):
		return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
	case key.Matches(msg, k.Bottom):
		return l.load(e, anchor{kind: anchorBottom}, l.offset, cursorIntent{kind: intentLast})
	case key.Matches(msg, k.NextTab):
		return l.setTab(e, l.tab+1)
	case key.Matches(msg, k.PrevTab):
		return l.setTab(e, l.tab-1)
	case key.Matches(msg, k.Tab):
		n, _ := strconv.Atoi(msg.String())
		return l.setTab(e, n-1)
	case key.Matches(msg, k.Search):
		l.typing = true
		l.input.SetValue(l.query)
		l.input.CursorEnd()
		return l, l.input.Focus()
	case key.Matches(msg, k.Clear):
		if l.query == "" && !l.contraOnly && l.finding == model.FilterAnyFinding {
			return l, nil
		}
		l.query, l.contraOnly, l.finding = "", false, model.FilterAnyFinding
		l.input.SetValue("")
		return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
	case key.Matches(msg, k.Contradicted):
		l.contraOnly = !l.contraOnly
		return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
	case key.Matches(msg, k.Finding):
		l.finding = nextFindingFilter(l.finding)
		return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
	case key.Matches(msg, k.Sort):
		return l.setSort(e, l.order().Next(), false)
	case key.Matches(msg, k.Triage):
		return l, emit(triageRequestMsg{})
	case key.Matches(msg, k.Review):
		if l.marked.len() > 0 {
			return l, emit(reviewRequestMsg{Ops: l.marked.list()})
		}
		return l, emit(reviewRequestMsg{Query: l.query_(e)})
	}
	op, ok := l.selected()
	if !ok {
		return l, nil
	}
	switch {
	case key.Matches(msg, k.Open):
		return l, emit(openDetailMsg{Target: detailTarget{Tenant: op.Tenant, Key: op.Key}})
	case key.Matches(msg, k.Apply):
		return l, emit(actionRequestMsg{Action: model.ActionMarkApplied, Op: op})
	case key.Matches(msg, k.NotApply):
		return l, emit(actionRequestMsg{Action: model.ActionMarkNotApplied, Op: op})
	case key.Matches(msg, k.Check):
		return l, emit(openDetailMsg{Target: detailTarget{Tenant: op.Tenant, Key: op.Key}, Check: true})
	case key.Matches(msg, k.Copy):
		return l, emit(copyRequestMsg{Tenant: op.Tenant, Key: op.Key})
	case key.Matches(msg, k.CopyCmd):
		return l, emit(copyRequestMsg{Tenant: op.Tenant, Key: op.Key, Command: true, Unknown: op.State == model.StateUnknown})
	}
	return l, nil
}

// typingKey edits the search. The search runs when typing pauses (or on
// enter); esc clears it.
func (l listModel) typingKey(msg tea.KeyMsg, e env) (listModel, tea.Cmd) {
	switch msg.String() {
	case "enter":
		l.typing = false
		l.input.Blur()
		return l.applySearch(e)
	case "esc":
		l.typing = false
		l.input.Blur()
		l.input.SetValue("")
		if l.query == "" {
			return l, nil
		}
		return l.applySearch(e)
	}
	before := l.input.Value()
	var c tea.Cmd
	l.input, c = l.input.Update(msg)
	if l.input.Value() == before || !e.timers {
		return l, c
	}
	l.searchSeq++
	seq := l.searchSeq
	return l, tea.Batch(c, tea.Tick(searchDebounce, func(time.Time) tea.Msg { return searchTickMsg{Seq: seq} }))
}

func (l listModel) applySearch(e env) (listModel, tea.Cmd) {
	q := strings.TrimSpace(l.input.Value())
	if q == l.query && l.started {
		return l, nil
	}
	l.query = q
	return l.load(e, anchor{kind: anchorTop}, 0, cursorIntent{kind: intentIndex})
}

// update takes the list's non-key messages.
func (l listModel) update(msg tea.Msg, e env) (listModel, tea.Cmd) {
	switch msg := msg.(type) {
	case markAllMsg:
		return l.markedAll(msg)
	case searchTickMsg:
		if msg.Seq != l.searchSeq || !l.typing {
			return l, nil
		}
		return l.applySearch(e)
	}
	if l.typing {
		var c tea.Cmd
		l.input, c = l.input.Update(msg)
		return l, c
	}
	return l, nil
}

func (l listModel) mouse(msg tea.MouseMsg, e env) (listModel, tea.Cmd) {
	if msg.Action != tea.MouseActionPress {
		return l, nil
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		return l.up(e)
	case tea.MouseButtonWheelDown:
		return l.down(e)
	case tea.MouseButtonLeft:
		// A click puts the cursor on the row; a click on the row under the
		// cursor opens it.
		i, ok := l.rowAt(msg.Y)
		if !ok {
			return l, nil
		}
		if i == l.cursor {
			op := l.rows[i]
			return l, emit(openDetailMsg{Target: detailTarget{Tenant: op.Tenant, Key: op.Key}})
		}
		l.cursor = i
	}
	return l, nil
}

// rowAt is the row drawn on line y of the list (0 is the heading), as view
// draws them.
func (l listModel) rowAt(y int) (int, bool) {
	visible := max(l.viewHeight-2, 1)
	start := 0
	if l.cursor >= visible {
		start = l.cursor - visible + 1
	}
	i := start + y - 1
	if y < 1 || y > visible || i >= len(l.rows) {
		return 0, false
	}
	return i, true
}

func (l listModel) keyMap(e env) keyMap {
	k := l.keys
	op, ok := l.selected()
	can := func(a model.Action) bool { return ok && !e.readOnly && allowed(op, a, e.now) }
	apply := relabel(enabled(k.Apply, can(model.ActionMarkApplied)), "applied")
	notApply := relabel(enabled(k.NotApply, can(model.ActionMarkNotApplied)), "not applied")
	// In order of what a person needs first; the help line drops from the
	// end when the terminal is narrow.
	short := []key.Binding{k.Open, apply, notApply, helpTabs, k.Search,
		relabel(newGlobalKeys().Tenant, "tenant"), helpMove}
	if ok && !e.readOnly {
		// What the write asks for first — the typed override, within the
		// grace after its latest request (until when: the end the review
		// and the write name) or against the finding that binds it — is
		// said before the key is pressed (reconcile.OfferOf). Such a key
		// is then said first (n before a), the other action key next:
		// the line drops keys from its end where it is narrow, and enter
		// and the rest give way to them.
		var first, then []key.Binding
		for _, b := range []struct {
			key    key.Binding
			words  string
			action model.Action
		}{{notApply, "not applied", model.ActionMarkNotApplied}, {apply, "applied", model.ActionMarkApplied}} {
			if w := needsWords(e.svc.OfferOf(b.action, op, l.attempts[op.ID], e.now), e); w != "" {
				first = append(first, relabel(b.key, b.words+w))
			} else {
				then = append([]key.Binding{b.key}, then...) // a, then n, as without
			}
		}
		if len(first) > 0 {
			short = append(append(append(first, then...), k.Open), short[3:]...)
		}
	}
	full := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextTab, k.PrevTab, k.Tab, k.Search, k.Clear, k.Contradicted},
		{k.Open, enabled(k.Apply, !e.readOnly), enabled(k.NotApply, !e.readOnly), enabled(k.Check, e.canCheck)},
		{k.Mark, k.MarkRange, k.MarkAll, relabel(k.Clear, "clear marks / search")},
		{k.Export, k.ExportJSON, k.Copy, k.CopyCmd},
		{k.Finding, k.Sort, enabled(k.Triage, e.canCheck), enabled(k.Review, !e.readOnly)},
	}
	if n := l.marked.len(); n > 0 {
		// With marks, a and n decide on all of them.
		on := fmt.Sprintf(" %s marked", count(n))
		short = []key.Binding{relabel(enabled(k.Apply, !e.readOnly), "applied"+on), relabel(enabled(k.NotApply, !e.readOnly), "not applied"+on),
			k.Mark, relabel(k.Clear, "clear marks"), helpMove}
	}
	return keyMap{short: short, full: full}
}

// columns of the table at a width, fitted to the page's data.
type columns struct {
	// A width of 0 hides the column (a narrow terminal).
	tenant, key, tool, summary, att, ref, finding int
	fullTool                                      bool
	// stuck: a STUCK column beside AGE — how long an operation has waited
	// in unknown or in_progress since its last change (shown on tabs that
	// hold such operations).
	stuck bool
	// stuckWide gives STUCK one more column, for its sort mark.
	stuckWide bool
	// sort marks the heading of the column the list is ordered by.
	sort    model.SortColumn
	reverse bool
	// keyCut is the KEY cell of each key clipMiddle would cut like
	// another (clipKeys): both its ends and where it differs.
	keyCut map[string]string
}

const colStuck = 5

// summaryKept is the SUMMARY width a long key may not take (layout).
const summaryKept = 40

const (
	colMark  = 2 // cursor and flag
	colAge   = 4
	colState = 11
	colAtt   = 3
)

func layout(w int, rows []model.Operation, stuck bool) columns {
	widest := func(get func(model.Operation) string, floor, ceil int) int {
		n := floor
		for _, r := range rows {
			n = max(n, ansi.StringWidth(get(r)))
		}
		return min(n, ceil)
	}
	c := columns{
		tenant: widest(func(o model.Operation) string { return oneLine(o.Tenant) }, 6, 20),
		key:    widest(func(o model.Operation) string { return oneLine(o.Key) }, 10, 36),
		tool:   6,
		ref:    widest(func(o model.Operation) string { return o.ProviderRef }, 3, 12),
		// "not checked" is the narrowest a finding says anything in.
		finding: widest(func(o model.Operation) string { return findingCell(o.Shown(), time.Time{}) }, 11, 26),
	}
	// The finding's words are never cut: its floor is the widest of them.
	wordsW := widest(func(o model.Operation) string { return findingWords(o.Shown()) }, 11, 26)
	natural := c
	const seps = 9
	c.stuck = stuck
	fixed := func() int {
		n := colMark + colAge + c.tenant + c.key + c.tool + colState + colAtt + c.ref + c.finding + seps
		if c.stuck {
			n += colStuck + 1
		}
		return n
	}
	c.summary = w - fixed()
	// Give up space in the order people miss it least, until the summary
	// has a readable width: long tenant names first, then long provider
	// references, then the key (clipped in the middle, where keys differ
	// least), then the tenant again.
	for _, step := range []struct {
		col   *int
		floor int
	}{{&c.tenant, 10}, {&c.ref, 6}, {&c.finding, max(16, wordsW)}, {&c.key, 16}, {&c.key, 14}, {&c.tenant, 8}, {&c.ref, 3}, {&c.finding, wordsW}} {
		if c.summary >= 14 {
			break
		}
		if give := min(*step.col-step.floor, 14-c.summary); give > 0 {
			*step.col -= give
			c.summary += give
		}
	}
	if c.summary > 19+30 {
		c.fullTool, c.tool = true, 19
		c.summary -= 13
	}
	// A wide screen gives a long key what the summary does not need (it
	// keeps 40 cells): a 255-character key clipped to 36 while the
	// summary had 60 hid everything but its ends, and two keys that
	// differ in the middle looked the same.
	if keyW := widest(func(o model.Operation) string { return oneLine(o.Key) }, 10, 1<<20); keyW > c.key && c.summary > summaryKept {
		give := min(keyW-c.key, c.summary-summaryKept)
		c.key, c.summary = c.key+give, c.summary-give
	}
	c.att = colAtt
	if c.summary < 4 {
		// Too narrow for every column (60 columns): whole columns go, the
		// ones an operator deciding misses least first — summary, tool,
		// provider reference, attempts — so the state and the finding are
		// never cut off at the right edge.
		// The finding is read whole first ("has it · sbx_12 3m" names the
		// reference), then the columns go, then the finding and the key
		// narrow to their floors.
		c.summary, c.finding = 0, natural.finding
		for _, col := range []*int{&c.tool, &c.ref, &c.att} {
			if c.width() <= w-1 {
				break
			}
			*col = 0
		}
		for _, g := range []struct {
			col   *int
			floor int
		}{{&c.finding, wordsW}, {&c.key, 10}, {&c.tenant, 6}} {
			if over := c.width() - (w - 1); over > 0 {
				*g.col -= min(over, max(*g.col-g.floor, 0))
			}
		}
		// Still too narrow for the finding's words (40 columns): the key
		// and the tenant give up more, down to the finding's short form
		// (findingTiny: 6 cells), which is never cut.
		if over := c.width() - (w - 1); over > 0 {
			c.finding = max(c.finding-over, 6)
			for _, g := range []struct {
				col   *int
				floor int
			}{{&c.key, 8}, {&c.tenant, 4}} {
				if over := c.width() - (w - 1); over > 0 {
					*g.col -= min(over, max(*g.col-g.floor, 0))
				}
			}
		}
		// What is left goes back to the key, then the tenant.
		for _, g := range []struct{ col, want *int }{{&c.key, &natural.key}, {&c.tenant, &natural.tenant}} {
			if give := min(w-1-c.width(), *g.want-*g.col); give > 0 {
				*g.col += give
			}
		}
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	c.keyCut = clipKeys(keys, c.key)
	return c
}

// keyCell is op's KEY cell: clipped in the middle, or, where that reads
// like another key's, with where it differs too (keyCut).
func (c columns) keyCell(key string) string {
	if cut, ok := c.keyCut[key]; ok {
		return fit(cut, c.key)
	}
	return fit(clipMiddle(key, c.key), c.key)
}

// width is the table's width in cells, its hidden (zero) columns left out.
func (c columns) width() int {
	n := colMark + colAge
	if c.stuck {
		n += colStuck + 1
	}
	for _, v := range []int{c.tenant, c.key, c.tool, c.summary, colState, c.att, c.ref, c.finding} {
		if v > 0 {
			n += v + 1
		}
	}
	return n
}

// join joins the cells of the columns shown: a cell whose column is
// hidden (width 0) is left out with its separator.
func join(cells []string, widths []int) string {
	var out []string
	for i, c := range cells {
		if widths[i] > 0 {
			out = append(out, c)
		}
	}
	return strings.Join(out, " ")
}

func (c columns) header(s *Styles) string {
	h := func(name string, col model.SortColumn) string {
		if c.sort != col || col == model.SortAge && !c.reverse {
			return name // the default order goes unmarked
		}
		// ↓: the column read downwards in its natural order (newest, A→Z).
		if c.reverse {
			return name + "↑"
		}
		return name + "↓"
	}
	stuck := c.stuckCell("STUCK")
	if c.sort == model.SortChanged {
		stuck = c.stuckCell(h("STUCK", model.SortChanged))
	}
	cells := []string{
		fit("", colMark) + fitRight(h("AGE", model.SortAge), colAge) + stuck, fit(h("TENANT", model.SortTenant), c.tenant), fit(h("KEY", model.SortKey), c.key), fit(h("TOOL", model.SortTool), c.tool),
		fit("SUMMARY", c.summary), fit(h("STATE", model.SortState), colState), fitRight("ATT", c.att), fit("REF", c.ref), fit("FINDING", c.finding),
	}
	return s.TableHead.Render(join(cells, c.widths()))
}

// widths are the columns' widths in the order header and row lay them out.
func (c columns) widths() []int {
	return []int{1, c.tenant, c.key, c.tool, c.summary, colState, c.att, c.ref, c.finding}
}

// row renders one operation. The cursor row is one reverse-video style over
// plain text (inner styles would cancel it part-way); other rows colour the
// state, and contradicted rows are drawn in the warning colour throughout.
func (c columns) row(s *Styles, op model.Operation, now time.Time, selected, marked bool) string {
	mark := " "
	switch {
	case marked:
		mark = "✓"
	case selected:
		mark = "›"
	}
	flag := " "
	switch {
	case op.Contradicted:
		flag = "!"
	case op.State == model.StateUnknown:
		flag = "?"
	}
	tool := toolShort(op.Tool)
	if c.fullTool {
		tool = op.Tool
	}
	lead := mark + flag + fitRight(age(now, op.CreatedAt), colAge) + c.stuckCell(stuckFor(op, now))
	st := fit(string(op.State), colState)
	if w := unheldWord(op, now); w != "" {
		st = fit(w, colState)
	}
	// The calls of the key: a provider lookup (a check, a triage) asks
	// about the effect and is counted apart, in the detail.
	att := fitRight(strconv.Itoa(op.AttemptCount-op.LookupCount), c.att)
	finding := findingCellIn(op.Shown(), now, c.finding)
	if op.Finding == nil && op.Provider == "" {
		finding = fit("-", c.finding) // local: nothing to ask
	}
	cells := []string{lead, fit(op.Tenant, c.tenant), c.keyCell(op.Key), fit(tool, c.tool), fit(op.Summary, c.summary),
		st, att, fit(or(op.ProviderRef, "-"), c.ref), finding}
	if selected || op.Contradicted {
		line := join(cells, c.widths())
		if selected {
			return s.Selected.Render(line)
		}
		return s.Contra.Render(line)
	}
	flagStyled := flag
	if flag == "?" {
		flagStyled = s.State(model.StateUnknown).Render(flag)
	}
	cells[0] = mark + flagStyled + s.Muted.Render(fitRight(age(now, op.CreatedAt), colAge)) + s.Contra.Render(c.stuckCell(stuckFor(op, now)))
	cells[5], cells[6], cells[8] = s.State(op.State).Render(st), s.Muted.Render(att), findingStyle(s, op.Shown()).Render(finding)
	return join(cells, c.widths())
}

// view draws the table and its status line in h lines.
func (l listModel) view(e env, w, h int) string {
	s := e.styles
	st := l.state()
	// STUCK on the tabs of waiting operations; only where it costs no key
	// its ends (keys differ at their ends; at 80 columns they come first).
	cols := layout(w, l.rows, (w >= 90 && (st == model.StateUnknown || st == model.StateInProgress)) || (st == "" && w >= 100))
	cols.sort, cols.reverse = l.order(), l.reverse
	if cols.sort == model.SortTenant && cols.tenant < 7 && cols.summary > 4 {
		cols.tenant, cols.summary = cols.tenant+1, cols.summary-1 // room for TENANT↓
	}
	if cols.sort == model.SortChanged && cols.stuck && cols.summary > 4 {
		cols.stuckWide, cols.summary = true, cols.summary-1 // room for STUCK↓
	}
	var b strings.Builder
	b.WriteString(cols.header(s))
	b.WriteByte('\n')
	visible := max(h-2, 1)
	switch {
	case l.err != nil && len(l.rows) == 0:
		b.WriteString(s.BannerErr.Render("  Cannot read the ledger: "+oneLine(l.err.Error())) + "\n")
		b.WriteString(s.Muted.Render("  r retries") + "\n")
		visible -= 2
	case len(l.rows) == 0 && l.loading:
		b.WriteString(s.Muted.Render("  loading…") + "\n")
		visible--
	case len(l.rows) == 0:
		for _, line := range l.emptyText(e) {
			b.WriteString(line + "\n")
			visible--
		}
	}
	// The page is as long as the screen without a banner; with one, the
	// window scrolls inside the page to keep the cursor in view.
	start := 0
	if l.cursor >= visible {
		start = l.cursor - visible + 1
	}
	end := min(len(l.rows), start+visible)
	for i := start; i < end; i++ {
		b.WriteString(cols.row(s, l.rows[i], e.now, i == l.cursor, l.marked.has(l.rows[i].ID)))
		b.WriteByte('\n')
	}
	for i := max(end-start, 0); i < visible; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(l.statusLine(e, w))
	return b.String()
}

func (l listModel) emptyText(e env) []string {
	s := e.styles
	scope := ""
	if e.scope != "" {
		scope = " in tenant " + e.scope
	}
	switch {
	case l.query != "":
		return []string{"", s.Bold.Render(fmt.Sprintf("  No operation%s matches %q.", scope, l.query)), s.Muted.Render("  esc clears the search.")}
	case l.contraOnly:
		return []string{"", s.Bold.Render("  No contradicted operations" + scope + "."), s.Muted.Render("  ! shows everything again.")}
	case l.provider != "" || l.age.d != 0 || l.tool != "":
		var f []string
		if l.tool != "" {
			f = append(f, "tool "+l.tool)
		}
		if l.provider != "" {
			f = append(f, "provider "+l.provider)
		}
		if l.age.d != 0 {
			f = append(f, "age "+l.age.String())
		}
		return []string{"", s.Bold.Render(fmt.Sprintf("  No %soperations%s with %s.", stateWord(l.state()), scope, strings.Join(f, ", "))),
			s.Muted.Render("  :tool, :provider, :age all clear the filters.")}
	case l.finding != model.FilterAnyFinding:
		return []string{"", s.Bold.Render(fmt.Sprintf("  No operations%s whose finding is %q here.", scope, l.finding.Words())), s.Muted.Render("  f shows the next finding; esc clears the filter.")}
	case l.state() == model.StateUnknown:
		return []string{"", s.AllClear.Render("  ✓ Nothing is unknown" + scope + ": no operation is waiting for a person."),
			s.Muted.Render("  →/tab shows the other states.")}
	case l.state() == "":
		return []string{"", s.Bold.Render("  No operations" + scope + " yet."), s.Muted.Render("  t picks another tenant.")}
	}
	return []string{"", s.Muted.Render(fmt.Sprintf("  No %s operations%s.", l.state(), scope))}
}

func (l listModel) statusLine(e env, w int) string {
	s := e.styles
	if l.typing {
		in := l.input
		in.Width = max(w-4, 10)
		return " " + in.View()
	}
	// Each part in full, and short (without its "how to clear" hint) for
	// when the full line would not fit: every filter and the order stay
	// on screen at 80 columns and below, only the hints go.
	var left, short []string
	add := func(full, brief string) { left, short = append(left, full), append(short, brief) }
	if n := len(l.rows); n > 0 {
		pos := fmt.Sprintf("%s–%s", count(l.offset+1), count(l.offset+n))
		if t := l.total(e); t >= 0 {
			pos += " of " + count(max(t, l.offset+n))
		} else if l.full() {
			pos += ", more below"
		}
		what := "operations"
		if l.offset+n == 1 && l.total(e) == 1 {
			what = "operation"
		}
		if st := l.state(); st != "" {
			what = string(st)
		}
		add(pos+" "+what, pos)
	}
	if l.query != "" {
		q := fmt.Sprintf("search %q", l.query)
		add(q, q)
	}
	if l.contraOnly {
		add(s.Contra.Render("! contradicted only (! shows all)"), s.Contra.Render("! contradicted only"))
	}
	if l.finding != model.FilterAnyFinding {
		add(s.Bold.Render("finding: "+l.finding.Words()+" (f cycles, esc clears)"), s.Bold.Render("finding: "+l.finding.Words()))
	}
	if l.tool != "" {
		add(fmt.Sprintf("tool %s (:tool clears)", l.tool), "tool "+l.tool)
	}
	if l.provider != "" {
		add(fmt.Sprintf("provider %s (:provider clears)", l.provider), "provider "+l.provider)
	}
	if l.age.d != 0 {
		add(fmt.Sprintf("age %s (:age all clears)", l.age), "age "+l.age.String())
	}
	if w := l.sortWords(); w != "" {
		add(w+" (s cycles)", w)
	}
	if n := l.marked.len(); n > 0 {
		add(s.Bold.Render(count(n)+" marked"), s.Bold.Render(count(n)+" marked"))
	}
	if l.err != nil && len(l.rows) > 0 {
		failed := s.BannerErr.Render("refresh failed: " + oneLine(l.err.Error()))
		if e.readBanner {
			failed = s.BannerErr.Render("refresh failed (see above)")
		}
		add(failed, failed)
	}
	right := ""
	if op, ok := l.selected(); ok && op.Contradicted {
		right = s.Contra.Render("! a provider answer or lookup contradicts this one")
	}
	line := " " + s.Muted.Render(strings.Join(left, " · "))
	if ansi.StringWidth(line)+ansi.StringWidth(right)+2 > w {
		line = " " + s.Muted.Render(strings.Join(short, " · "))
	}
	return spread(line, right+" ", w)
}

func (c columns) stuckCell(v string) string {
	if !c.stuck {
		return ""
	}
	if c.stuckWide {
		return " " + fitRight(v, colStuck+1)
	}
	return " " + fitRight(v, colStuck)
}

// stuckFor is how long op has waited for a person (unknown) or a worker
// (in_progress) since it last changed; "" for any other state.
func stuckFor(op model.Operation, now time.Time) string {
	if (op.State != model.StateUnknown && op.State != model.StateInProgress) || op.UpdatedAt.IsZero() {
		return ""
	}
	return age(now, op.UpdatedAt)
}

// stateWord is "unknown " for a state tab, "" for all.
func stateWord(st model.State) string {
	if st == "" {
		return ""
	}
	return string(st) + " "
}
