package ui

import "github.com/charmbracelet/bubbles/key"

// globalKeys work on every screen (unless a text field has the focus, where
// q and ? are text).
type globalKeys struct {
	Quit    key.Binding
	ForceQ  key.Binding
	Help    key.Binding
	Lab     key.Binding
	Tenant  key.Binding
	Refresh key.Binding
	Audit   key.Binding
	Sweep   key.Binding
	Command key.Binding
}

func newGlobalKeys() globalKeys {
	return globalKeys{
		Quit:    key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQ:  key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit (in a form with text typed: asks first)")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Lab:     key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "lab")),
		Tenant:  key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tenant")),
		Refresh: key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "refresh now")),
		Audit:   key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "audit log (decisions)")),
		Sweep:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "sweep expired leases")),
		Command: key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command (:tenant X, :state S, :audit, :sweep, :q)")),
	}
}

// listKeys are the operations list's.
type listKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextTab, PrevTab, Tab                   key.Binding
	Open, Search, Clear, Contradicted       key.Binding
	Apply, NotApply, Check                  key.Binding
	Mark, MarkRange, MarkAll                key.Binding
	Export, ExportJSON                      key.Binding
	Finding, Triage, Review                 key.Binding
	Copy, CopyCmd                           key.Binding
	Sort                                    key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/ctrl+u", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d"), key.WithHelp("pgdn/ctrl+d", "page down")),
		Top:          key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "newest")),
		Bottom:       key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "oldest")),
		NextTab:      key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("→/tab", "next state")),
		PrevTab:      key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("←", "previous state")),
		Tab:          key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8"), key.WithHelp("1-8", "state tab")),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Search:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Clear:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear search")),
		Contradicted: key.NewBinding(key.WithKeys("!"), key.WithHelp("!", "contradicted only")),
		Apply:        key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark applied")),
		NotApply:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "mark not applied")),
		Check:        key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "check provider")),
		Mark:         key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark row")),
		MarkRange:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "mark range")),
		MarkAll:      key.NewBinding(key.WithKeys("*"), key.WithHelp("*", "mark all in view")),
		Export:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export view to CSV")),
		ExportJSON:   key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "export view to JSON Lines")),
		Finding:      key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter by finding")),
		Triage:       key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "triage: ask the providers about every unknown")),
		Review:       key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "review by finding (marked rows, else the view)")),
		Copy:         key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy key")),
		CopyCmd:      key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy ops command")),
		Sort:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort: age → key → state → tenant → tool → changed")),
	}
}

// detailKeys are the detail view's. j/k scroll as everywhere else; a new
// key is s ("supersede", as `ops supersede`), a key no movement uses.
type detailKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Back, Newer, Older                      key.Binding
	Apply, NotApply, NewKey, Check          key.Binding
	Page, Copy, CopyCmd                     key.Binding
}

func newDetailKeys() detailKeys {
	return detailKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/ctrl+u", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d", " "), key.WithHelp("pgdn/ctrl+d", "page down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		Newer:    key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "open superseding op")),
		Older:    key.NewBinding(key.WithKeys("<"), key.WithHelp("<", "open superseded op")),
		Apply:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark applied")),
		NotApply: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "mark not applied")),
		NewKey:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "supersede: authorize new key")),
		Check:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "check provider")),
		Page:     key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open in $PAGER")),
		Copy:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy: key, command, trace ids")),
		CopyCmd:  key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy ops command")),
	}
}

// formKeys drive an action's form and its confirmation.
type formKeys struct {
	Next, Prev, Submit, Confirm, Cancel key.Binding
}

func newFormKeys() formKeys {
	return formKeys{
		Next:    key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next field")),
		Prev:    key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous field")),
		Submit:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "review")),
		Confirm: key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "write it")),
		Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// pickerKeys drive the tenant picker.
type pickerKeys struct {
	Up, Down, Choose, Cancel key.Binding
}

func newPickerKeys() pickerKeys {
	return pickerKeys{
		// Letters are the type-ahead here: the arrows move.
		Up:     key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓", "down")),
		Choose: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear / cancel")),
	}
}

// labKeys are the Lab screen's.
type labKeys struct {
	Up, Down, Run, Step, Open, Back key.Binding
}

func newLabKeys() labKeys {
	return labKeys{
		Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Run:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run scenario")),
		Step: key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "run step by step")),
		Open: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "open created op")),
		Back: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// Display-only bindings: the short help line names a pair of keys once.
var (
	helpMove  = key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "move"))
	helpTabs  = key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←→", "state"))
	helpPage  = key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/dn", "scroll"))
	helpNewer = key.NewBinding(key.WithKeys("<", ">"), key.WithHelp("< >", "follow link"))
)

// keyMap adapts a screen's bindings to bubbles/help.
type keyMap struct {
	short []key.Binding
	full  [][]key.Binding
	// narrow, when set, is the help line where short does not fit: the
	// same keys in fewer words, so that a narrow terminal's help line
	// keeps the keys that act (y, o, the override), not only esc.
	narrow []key.Binding
	// narrowIfCut: narrow only where short's keys up to esc do not fit
	// (those after esc — scrolling, links — go first, in their words).
	narrowIfCut bool
}

func (k keyMap) ShortHelp() []key.Binding  { return k.short }
func (k keyMap) FullHelp() [][]key.Binding { return k.full }

// relabel is b with a shorter description, for the one-line help.
func relabel(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// enabled returns b enabled or disabled: help hides disabled bindings, so a
// read-only console never advertises a decision it would refuse.
func enabled(b key.Binding, on bool) key.Binding {
	b.SetEnabled(on)
	return b
}
