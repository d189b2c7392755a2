// Package ui is retrysafe's operations console: a Bubble Tea program over
// the ledger that shows operations by state (unknown first), lets an
// on-call engineer read an operation's whole history and settle unknown
// outcomes through reconcile's decision functions — the same transactional
// store code the tool path uses — and refreshes live when other processes
// write.
//
// Structure: Model (this file) only routes — keys to the screen that owns
// them, loaded data to the screen that asked for it — and draws the chrome
// (header, state tabs, banner, help line). Each screen lives in its own
// file: list.go, detail.go, action.go (forms and confirmations), tenants.go
// (the tenant picker), labscreen.go. All store I/O is in data.go, inside
// tea.Cmds.
package ui

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// LabRunner runs one lab scenario against an open ledger; *lab.Runner is
// the real one.
type LabRunner interface {
	RunIn(ctx context.Context, ledgerPath, tenant, scenarioID string, progress func(lab.Step)) (lab.Row, error)
}

// Config is what the console needs from its caller.
type Config struct {
	Store   store.Ledger
	Service *reconcile.Service // decisions and provider checks

	// Lab runs scenarios from the Lab screen (L); nil hides it.
	Lab          LabRunner
	LabScenarios []lab.Scenario
	LabTenant    string // tenant the Lab screen writes under; default "lab"

	Ledger string // ledger as the header shows it; default Store.Path()
	// CommandFlags follow --db in the commands the console copies (y, Y,
	// the copy menu): the --provider-db and --config it was opened with,
	// shell-quoted, each with a leading space. Without them a pasted ops
	// check asks no provider, or the wrong file.
	CommandFlags string
	Tenant       string // initial tenant scope; "" = all tenants
	Operator     string // recorded on every decision
	// ExportDir is where e/E write the current view; default ".".
	ExportDir string
	// Pager reads an operation in full (o in the detail); default "less".
	Pager string
	// Clipboard is the terminal y and Y copy to (OSC 52); nil turns
	// copying off.
	Clipboard io.Writer
	ReadOnly  bool // no decisions, no lab runs, no provider checks

	// Renderer decides the colour profile (NO_COLOR, a pinned profile in
	// tests); default lipgloss.DefaultRenderer().
	Renderer *lipgloss.Renderer
	Theme    *Theme

	Now      func() time.Time // default the Store's clock (time.Now without one)
	Location *time.Location   // times are shown in it; default time.Local
	Refresh  time.Duration    // how often to ask whether the ledger changed; default 1s
	// NoTimers turns off every timer (refresh heartbeat, spinner, search
	// debounce): Update-level tests deliver tickMsg by hand instead.
	NoTimers bool

	Log     *log.Logger     // never the terminal; default discards
	Context context.Context // cancels in-flight work at quit; default Background
}

type screenID int

const (
	screenList screenID = iota
	screenDetail
	screenLab
	screenAudit
)

type overlayID int

const (
	overlayNone overlayID = iota
	overlayHelp
	overlayPicker
	overlayAction
	overlayConfirm
	overlayCommand // the ":" command line on the bottom line
	overlayReview  // the review by finding
	overlayCopy    // the copy menu (y in the detail)
)

// Model is the console's root model.
type Model struct {
	// leaseAlarm is when the armed lease timer fires (zero: none is).
	leaseAlarm time.Time

	cfg    Config
	styles *Styles
	keys   globalKeys
	ctx    context.Context
	cancel context.CancelFunc
	log    *log.Logger

	width, height int

	screen screenID
	// back is the way back from screen (nav.go): the screens last shown
	// before it, each once, the latest last; esc ends at the list.
	back    []screenID
	overlay overlayID

	list     listModel
	detail   detailModel
	lab      labModel
	audit    auditModel
	picker   pickerModel
	action   actionModel
	helpOv   helpModel // the help screen
	confirm  confirmModel
	command  commandModel
	review   reviewModel
	copyMenu copyMenuModel
	help     help.Model

	// triage is the background triage run (T), if one was started.
	triage triageRun

	spin     spinner.Model
	spinning bool

	banner banner

	scope       string
	counts      store.Counts
	countsOK    bool
	allUnknown  int // unknown in every tenant, whatever the scope
	countsSeq   int
	refreshedAt time.Time
	loadErr     error
	// frozen: the store reads a snapshot of the ledger file as opened
	// (store.FrozenReporter): nothing on screen is ever "refreshed".
	frozen bool
	// guard: a decision's review takes y only once it was on screen
	// (reviewarm.go).
	guard reviewGuard
	// quitArmed: ctrl+c was pressed once in a form with text typed; a
	// second one, next, quits (typedInForm).
	quitArmed bool
	// quitAfterLab: q was pressed during a lab run; the console quits
	// when the run ends (quitAsked).
	quitAfterLab bool

	watcher     store.Watcher
	watchErr    error
	watchAsked  bool // the watcher was asked for (once, after the first page)
	polling     bool
	tickRunning bool
}

// New builds the console's root model.
func New(cfg Config) Model {
	if cfg.Now == nil {
		// The ledger's clock (on PostgreSQL the database server's): the
		// keys a row offers must agree with what the write will allow.
		cfg.Now = time.Now
		if cfg.Store != nil {
			cfg.Now = cfg.Store.Now
		}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = time.Second
	}
	if cfg.Renderer == nil {
		cfg.Renderer = lipgloss.DefaultRenderer()
	}
	if cfg.Theme == nil {
		t := DefaultTheme()
		cfg.Theme = &t
	}
	if cfg.Ledger == "" && cfg.Store != nil {
		cfg.Ledger = cfg.Store.Path()
	}
	if cfg.Pager == "" {
		cfg.Pager = "less"
	}
	if cfg.ExportDir == "" {
		cfg.ExportDir = "."
	}
	if cfg.LabTenant == "" {
		cfg.LabTenant = "lab"
	}
	if cfg.Operator == "" {
		cfg.Operator = "operator"
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	ctx, cancel := context.WithCancel(cfg.Context)
	styles := NewStyles(cfg.Renderer, *cfg.Theme)
	h := help.New()
	h.Styles = styles.Help
	sp := spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(styles.Spinner))
	var frozen bool
	var news banner
	if f, ok := cfg.Store.(store.FrozenReporter); ok && f.Frozen() {
		frozen = true
		news = banner{kind: bannerInfo, text: frozenNews, at: cfg.Now()}
	}
	return Model{
		frozen: frozen, banner: news,
		cfg: cfg, styles: &styles, keys: newGlobalKeys(), ctx: ctx, cancel: cancel, log: cfg.Log,
		scope:   cfg.Tenant,
		list:    newList(cfg.Renderer),
		detail:  newDetail(),
		lab:     newLab(cfg.Lab, cfg.LabScenarios, cfg.LabTenant),
		picker:  newPicker(),
		audit:   newAudit(&styles),
		command: newCommand(&styles),
		action:  actionModel{keys: newFormKeys()},
		help:    h,
		spin:    sp,
	}
}

// Close releases what the console holds open (the pinned watch
// connection) and cancels its in-flight work. Call it on the model
// tea.Program.Run returns.
func (m Model) Close() {
	m.cancel()
	if m.watcher != nil {
		m.watcher.Close()
	}
}

// Init loads the counts (which pick the first tab; the first page follows
// them, startList); the watcher is pinned once the first page is in
// (watchOnce), so opening its connection does not compete with the first
// frame's two queries.
func (m Model) Init() tea.Cmd {
	m.log.Printf("console open: ledger=%s tenant=%q operator=%q read-only=%v", m.cfg.Ledger, m.scope, m.cfg.Operator, m.cfg.ReadOnly)
	return loadCounts(m.ctx, m.cfg.Store, m.countsSeq, m.scope)
}

// watchOnce asks for the watcher the first time it is called: when the
// first page arrives, or when the counts arrive and no page is loading (the
// window's size not known yet, or the counts failed).
func (m *Model) watchOnce() tea.Cmd {
	if m.watchAsked {
		return nil
	}
	m.watchAsked = true
	return openWatcher(m.ctx, m.cfg.Store)
}

// env is what a screen may read of the session while it updates or draws.
type env struct {
	ctx      context.Context
	st       store.Ledger
	svc      *reconcile.Service
	styles   *Styles
	now      time.Time
	loc      *time.Location
	scope    string
	counts   store.Counts
	countsOK bool
	readOnly bool
	canCheck bool
	operator string
	ledger   string
	cmdFlags string // Config.CommandFlags
	export   string // ExportDir
	timers   bool
	spin     string // the spinner's frame, for screens that show progress
	// readBanner: the banner says the ledger cannot be read or watched.
	readBanner bool
}

func (m Model) env() env {
	return env{
		ctx: m.ctx, st: m.cfg.Store, svc: m.cfg.Service, styles: m.styles, now: m.cfg.Now(), loc: m.cfg.Location,
		scope: m.scope, counts: m.counts, countsOK: m.countsOK, readOnly: m.cfg.ReadOnly,
		canCheck: !m.cfg.ReadOnly && m.cfg.Service != nil && len(m.cfg.Service.Providers) > 0,
		operator: m.cfg.Operator, ledger: m.cfg.Ledger, cmdFlags: m.cfg.CommandFlags, export: m.cfg.ExportDir, timers: !m.cfg.NoTimers, spin: m.spin.View(),
		readBanner: m.banner.read && m.banner.text != "",
	}
}

// Navigation and session messages screens send the root.
type (
	openDetailMsg struct {
		Target detailTarget
		Check  bool // run a provider check as soon as it opens
	}
	backMsg          struct{} // leave the detail
	leaveLabMsg      struct{} // leave the lab
	actionRequestMsg struct {
		Action model.Action
		Op     model.Operation // as the screen showed it: its state and version are what the decision expects
	}
	scopeMsg  struct{ Tenant string }
	bannerMsg banner
)

// Update routes a message to whoever owns it.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := m.update(msg)
	m, arm := m.guardReview()
	cmd = tea.Batch(cmd, arm)
	if m.width > 0 {
		// Every screen draws in what the banner leaves (the detail's
		// viewport grows and shrinks with it).
		m = m.sized()
	}
	spin := m.keepSpinning()
	return m, tea.Batch(cmd, spin)
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	e := m.env()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		var c tea.Cmd
		m.list, c = m.list.setPageLen(e, m.listHeight())
		m = m.sized()
		start := m.startList(e)
		return m, tea.Batch(c, start)

	case reviewArmedMsg:
		if msg.Seq == m.guard.seq && m.guard.open != "" {
			m.guard.armed = true
		}
		return m, nil

	case tea.KeyMsg:
		if mm, ahead := m.typedAhead(msg, e); ahead {
			return mm, nil
		}
		if msg.Type == tea.KeyRunes {
			// A text field shows what is typed or pasted as it is:
			// bubbles drops C0 and C1 controls, not bidirectional
			// overrides or zero-width characters (a key pasted from a
			// ticket that reads backwards). No field may hold one — a
			// reason or evidence with one is refused, keys and tenants
			// cannot contain one — so none gets in to be shown.
			msg.Runes = safeRunes(msg.Runes)
			if len(msg.Runes) == 0 {
				return m, nil
			}
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && m.overlay == overlayAction && m.action.stage == stageConfirm {
			// A decision's review takes no burst, as it takes no paste:
			// "override\n" pasted without bracketed paste arrives as one
			// burst and an enter, and must not write against a finding.
			if m.action.against() || m.action.overriding {
				m.action.overrideErr = fmt.Sprintf("pasted text is not taken: type %q, or esc", overrideWord)
			}
			return m, nil
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			// Keys typed faster than the terminal is read arrive as one
			// message ("8/" then "task"): press them one at a time, so "/"
			// opens the search before "task" is typed into it. A key that
			// opens a decision's review ends the batch: the rest were typed
			// before the review was on screen, and must not answer it.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				var c tea.Cmd
				before := m.action.stage
				m, c = m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}, m.env())
				cmds = append(cmds, c)
				if m.overlay == overlayAction && before != m.action.stage && (m.action.stage == stageConfirm || m.action.stage == stageChecking) {
					break
				}
			}
			return m, tea.Batch(cmds...)
		}
		return m.handleKey(msg, e)

	case tea.MouseMsg:
		if m.overlay != overlayNone {
			return m, nil
		}
		if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft && msg.Y == 1 && m.screen == screenList && !m.empty() {
			// A click on the tabs line picks that state.
			if i := m.tabAt(msg.X); i >= 0 {
				var c tea.Cmd
				m.list, c = m.list.setTab(e, i)
				return m, c
			}
			return m, nil
		}
		// The screen sees the pointer relative to its own top line.
		msg.Y -= m.chromeHeight() - 1
		return m.route(m.focus(), msg, e)

	case countsMsg:
		if msg.Seq != m.countsSeq {
			return m, nil
		}
		if msg.Err != nil {
			m.loadErr = msg.Err
			m.log.Printf("counts: %v", msg.Err)
			if !m.banner.read || m.banner.text == "" {
				// Said in the banner (the watcher's words if it knows
				// why), not only as the driver's error in a status line.
				m.banner = banner{kind: bannerErr, read: true, text: "Cannot read the ledger: " + oneLine(errText(msg.Err)), at: e.now}
			}
			return m, m.watchOnce()
		}
		if m.banner.read && m.watchErr == nil {
			m.banner = banner{}
		}
		m.counts, m.countsOK, m.loadErr = msg.Counts, true, nil
		m.allUnknown = msg.AllUnknown
		if !m.frozen {
			m.refreshedAt = e.now
		}
		c := m.startList(m.env())
		var w tea.Cmd
		if !m.list.started {
			w = m.watchOnce()
		}
		// A lease ending, or a hold ending (held becomes released), moves
		// the header's counts with no write: recount at the earlier.
		next := msg.Counts.NextLeaseEnd
		if h := msg.Counts.NextHoldEnd; !h.IsZero() && (next.IsZero() || h.Before(next)) {
			next = h
		}
		return m, tea.Batch(c, w, m.armLeaseAlarm(next))

	case leaseAlarmMsg:
		// A lease ended with no write (its worker is gone): nothing moved
		// data_version, so the count is read again now.
		if !msg.At.Equal(m.leaseAlarm) {
			return m, nil // a later count armed another
		}
		m.leaseAlarm = time.Time{}
		m.countsSeq++
		if m.screen == screenDetail && m.detail.d != nil {
			// An open detail of a claim says the lease ended, as the
			// header and the list do, not "a worker holds the claim".
			m.detail = m.detail.render(e)
		}
		return m, loadCounts(m.ctx, m.cfg.Store, m.countsSeq, m.scope)

	case pageMsg:
		if msg.Err == nil && msg.Seq == m.list.seq && !m.frozen {
			m.refreshedAt = e.now
		} else if msg.Err != nil && msg.Seq == m.list.seq {
			m.log.Printf("list: %v", msg.Err)
		}
		w := m.watchOnce()
		var c tea.Cmd
		m, c = m.route(m.list, msg, e)
		return m, tea.Batch(c, w)

	case detailMsg:
		if msg.Err == nil && m.fileReplaced() {
			// The list is the old file's (its connections hold it); a
			// detail read now may be the new file's — another operation
			// under the row's id, or "no operation" for a row on screen.
			msg.Detail, msg.Replaced = nil, nil
			msg.Err = model.Errorf(model.CodeUnavailable, "Not shown: the ledger file was replaced; the list is the old file, a read may be the new. Restart retrysafe.")
		} else if msg.Err != nil && m.fileReplaced() {
			msg.Err = model.Wrap(model.CodeOf(msg.Err), msg.Err, "Ledger file replaced — the list shows the old file; restart retrysafe. (%s)", oneLine(msg.Err.Error()))
		}
		var c tea.Cmd
		m, c = m.route(m.detail, msg, e)
		return m, tea.Batch(c, m.holdEndAlarm(e))

	case holdEndedMsg:
		// The open detail said "held … in N s": its words change when the
		// wait passes (S sweeps now), with nothing written to the ledger.
		if m.screen == screenDetail && m.detail.d != nil && m.detail.d.Operation.RetryNotBefore.Equal(msg.At) {
			m.detail = m.detail.render(e)
		}
		return m, nil

	case checkMsg:
		return m.route(m.detail, msg, e)

	case actionOpMsg:
		if m.overlay != overlayAction {
			return m, nil
		}
		var c1, c2 tea.Cmd
		m, c1 = m.route(m.action, msg, e)
		m, c2 = m.staleNoticed(msg, e)
		return m, tea.Batch(c1, c2)

	case tenantsMsg:
		return m.route(m.picker, msg, e)

	case labLedgerMsg:
		return m.askLab(msg, e)

	case labStartedMsg, labStepMsg, labDoneMsg, labGoMsg:
		var c tea.Cmd
		m, c = m.route(m.lab, msg, e)
		if done, ok := msg.(labDoneMsg); ok && done.Seq == m.lab.seq {
			m.log.Printf("lab: %s done: ok=%v err=%v", done.Row.Scenario, done.Row.OK, done.Err)
			if m.quitAfterLab {
				return m.quit()
			}
			reload := m.reloadAll()
			return m, tea.Batch(c, reload)
		}
		return m, c

	case decisionMsg:
		return m.decided(msg)

	case bulkDecisionMsg:
		return m.bulkDecided(msg)

	case bulkCheckedMsg:
		return m.bulkChecked(msg)

	case bulkRereadMsg:
		return m.bulkReread(msg)

	case bulkGraceMsg:
		return m.bulkGraced(msg)

	case sweepMsg:
		return m.swept(msg)

	case commandMsg:
		return m.runCommand(msg, e)

	case copyRequestMsg:
		return m, m.copyOp(msg)

	case copyMenuMsg:
		m.copyMenu = newCopyMenu(msg.Items)
		c, _ := m.copyMenu.SetSize(e, m.width, m.bodyHeight())
		m.copyMenu, m.overlay = c.(copyMenuModel), overlayCopy
		return m, nil

	case copyTextMsg:
		return m, copyText(m.cfg.Clipboard, msg.What, msg.Text)

	case copiedMsg:
		if msg.Err != nil {
			m.banner = banner{kind: bannerErr, text: "Cannot copy " + msg.What + ": " + oneLine(msg.Err.Error()), at: e.now}
		} else {
			m.banner = banner{kind: bannerOK, text: "Copied " + msg.What + " to the clipboard (OSC 52).", at: e.now}
		}
		return m, nil

	case pagerFileMsg:
		if msg.Err != nil {
			m.banner = banner{kind: bannerErr, text: "Cannot open the pager: " + oneLine(msg.Err.Error()), at: e.now}
			return m, nil
		}
		return m, page(m.cfg.Pager, msg.Path)

	case pagerDoneMsg:
		if msg.Err != nil {
			m.banner = banner{kind: bannerErr, text: fmt.Sprintf("The pager (%s) failed: %s", m.cfg.Pager, oneLine(msg.Err.Error())), at: e.now}
		}
		return m, nil

	case exportMsg:
		if msg.Err != nil {
			m.banner = banner{kind: bannerErr, text: "Export failed: " + oneLine(msg.Err.Error()), at: e.now}
			return m, nil
		}
		m.log.Printf("export: %d operations to %s", msg.Rows, msg.Path)
		m.banner = banner{kind: bannerOK, text: fmt.Sprintf("Exported %s to %s", plural(msg.Rows, "operation", "operations"), msg.Path), at: e.now}
		return m, nil

	case bulkRequestMsg:
		return m.requestBulk(msg, e)

	case markAllMsg:
		return m.route(m.list, msg, e)

	case triageRequestMsg:
		return m.toggleTriage(e)

	case triageEventMsg:
		return m.triageEvent(msg, e)

	case triageDoneMsg:
		return m.triageDone(msg, e)

	case reviewRequestMsg:
		return m.requestReview(msg, e)

	case reviewOpsMsg:
		return m.reviewLoaded(msg, e)

	case reviewDoneMsg:
		return m.reviewWritten(msg, e)

	case watchMsg:
		m.watcher, m.watchErr = msg.Watcher, msg.Err
		if msg.Err != nil {
			m.log.Printf("watch: %v", msg.Err)
		}
		c := m.startTicking()
		return m, c

	case tickMsg:
		m.tickRunning = false
		// The configured clock, as the banner was stamped with: a tick's
		// wall time against a test's played clock expired every banner
		// at the next tick, before it could be drawn.
		m = m.expireBanner(e.now)
		if m.watcher == nil {
			// The watch connection could not be pinned: try again, and
			// meanwhile reload on every tick so the screen is not stale.
			reload := m.reloadAll()
			return m, tea.Batch(openWatcher(m.ctx, m.cfg.Store), reload)
		}
		if m.polling {
			c := m.startTicking()
			return m, c
		}
		m.polling = true
		return m, pollChanged(m.ctx, m.watcher)

	case changedMsg:
		m.polling = false
		var cmds []tea.Cmd
		if msg.Err != nil {
			if m.frozen && (m.watchErr == nil || m.watchErr.Error() != msg.Err.Error()) {
				// Not a failing refresh: a snapshot whose file moved on.
				m.banner = banner{kind: bannerErr, read: true, text: oneLine(errText(msg.Err)), at: e.now}
			} else if m.watchErr == nil || m.watchErr.Error() != msg.Err.Error() {
				// Said once, in words: the header's "live refresh
				// failing" does not say whether to wait or restart (the
				// ledger file replaced under the console: restart).
				m.banner = banner{kind: bannerErr, read: true, text: "Live refresh failing: " + oneLine(errText(msg.Err)), at: e.now}
			}
			m.watchErr = msg.Err
			m.log.Printf("watch: %v", msg.Err)
		} else {
			// An unchanged data_version means what is on screen is current
			// as of now.
			if m.watchErr != nil && m.banner.read && m.loadErr == nil {
				// Recovered (an outage ended): the banner that said it
				// was failing would contradict "refreshed" in the header.
				m.banner = banner{kind: bannerOK, text: "Live refresh recovered.", at: e.now}
			}
			m.watchErr = nil
			if !m.frozen {
				m.refreshedAt = m.cfg.Now()
			}
			if msg.Changed {
				m.log.Printf("ledger changed: reloading")
				cmds = append(cmds, m.reloadAll())
			}
		}
		cmds = append(cmds, m.startTicking())
		return m, tea.Batch(cmds...)

	case spinner.TickMsg:
		if !m.busy() {
			m.spinning = false
			return m, nil
		}
		var c tea.Cmd
		m.spin, c = m.spin.Update(msg)
		if m.cfg.NoTimers {
			c = nil
		}
		return m, c

	case openDetailMsg:
		m.goTo(screenDetail)
		m.overlay = overlayNone
		var c tea.Cmd
		m.detail, c = m.detail.open(msg.Target, msg.Check, e)
		return m, c

	case backMsg:
		m.goBack()
		return m, nil

	case auditMsg:
		return m.route(m.audit, msg, e)

	case leaveAuditMsg, leaveLabMsg:
		m.goBack()
		return m, nil

	case actionRequestMsg:
		return m.requestAction(msg, e)

	case scopeMsg:
		m.overlay = overlayNone
		if msg.Tenant == m.scope {
			return m, nil
		}
		m.scope = msg.Tenant
		m.toList()
		m.countsOK = false
		m.countsSeq++
		m.list = m.list.rescope()
		m.log.Printf("tenant scope: %q", m.scope)
		return m, loadCounts(m.ctx, m.cfg.Store, m.countsSeq, m.scope)

	case bannerMsg:
		m.banner = banner(msg)
		m.banner.at = e.now
		return m, nil
	}
	// Anything else (textinput's internal messages, the search timer)
	// belongs to whatever has the focus.
	return m.route(m.focus(), msg, e)
}

// focus is the screen or overlay that has the keyboard.
func (m Model) focus() component {
	switch m.overlay {
	case overlayHelp:
		return m.helpOv
	case overlayPicker:
		return m.picker
	case overlayAction:
		return m.action
	case overlayConfirm:
		return m.confirm
	case overlayCommand:
		return m.command
	case overlayReview:
		return m.review
	case overlayCopy:
		return m.copyMenu
	}
	switch m.screen {
	case screenDetail:
		return m.detail
	case screenLab:
		return m.lab
	case screenAudit:
		return m.audit
	}
	return m.list
}

// route hands msg to c and keeps what it returns.
func (m Model) route(c component, msg tea.Msg, e env) (Model, tea.Cmd) {
	c, cmd := c.Update(msg, e)
	m = m.keep(c)
	return m, cmd
}

// closeOverlay gives the keyboard back to the screen when the overlay o
// closed itself.
func (m *Model) closeOverlay(closed bool, o overlayID) {
	if closed && m.overlay == o {
		m.overlay = overlayNone
	}
}

// keep stores a component back in its place; an overlay that closed
// itself gives the keyboard back to the screen.
func (m Model) keep(c component) Model {
	switch c := c.(type) {
	case listModel:
		m.list = c
	case detailModel:
		m.detail = c
	case labModel:
		m.lab = c
	case auditModel:
		m.audit = c
	case pickerModel:
		m.picker = c
		m.closeOverlay(c.closed, overlayPicker)
	case actionModel:
		m.action = c
		m.closeOverlay(c.closed, overlayAction)
	case commandModel:
		m.command = c
		m.closeOverlay(c.closed, overlayCommand)
	case reviewModel:
		m.review = c
		m.closeOverlay(c.closed, overlayReview)
	case confirmModel:
		m.confirm = c
		m.closeOverlay(c.closed, overlayConfirm)
	case helpModel:
		m.helpOv = c
		m.closeOverlay(c.closed, overlayHelp)
	case copyMenuModel:
		m.copyMenu = c
		m.closeOverlay(c.closed, overlayCopy)
	}
	return m
}

// sized gives every component the body's size.
func (m Model) sized() Model {
	e := m.env()
	w, h := m.width, m.bodyHeight()
	for _, c := range []component{m.list, m.detail, m.lab, m.audit, m.picker, m.action, m.helpOv, m.confirm, m.command, m.review, m.copyMenu} {
		c, _ = c.SetSize(e, w, h)
		m = m.keep(c)
	}
	return m
}

// handleKey gives a key to the overlay that has it, else to the global
// bindings, else to the screen.
func (m Model) handleKey(msg tea.KeyMsg, e env) (Model, tea.Cmd) {
	if key.Matches(msg, m.keys.ForceQ) {
		if !m.quitArmed && m.typedInForm() {
			// What was typed is a decision in the making: ctrl+c asks
			// first (the form stays, with it), a second one quits.
			m.quitArmed = true
			m.banner = banner{kind: bannerInfo, text: "ctrl+c again quits and drops what you typed in the form; esc closes the form.", at: e.now}
			return m, nil
		}
		return m.quit()
	}
	if m.quitArmed {
		m.quitArmed = false
		if strings.HasPrefix(m.banner.text, "ctrl+c again quits") {
			m.banner = banner{}
		}
	}
	if m.overlay != overlayNone {
		return m.route(m.focus(), msg, e)
	}
	typing := (m.screen == screenList && m.list.typing) || (m.screen == screenAudit && m.audit.typing)
	if !typing {
		switch {
		case key.Matches(msg, m.keys.Quit):
			return m.quitAsked(e)
		case key.Matches(msg, m.keys.Help):
			m.helpOv = helpModel{keys: m.screenKeys(e), width: m.width, height: m.bodyHeight()}
			m.overlay = overlayHelp
			return m, nil
		case key.Matches(msg, m.keys.Tenant) && m.screen != screenLab:
			m.overlay = overlayPicker
			var c tea.Cmd
			m.picker, c = m.picker.open(m.scope, e)
			return m, c
		case key.Matches(msg, m.keys.Command):
			m.overlay = overlayCommand
			var c tea.Cmd
			m.command, c = m.command.open()
			return m, c
		case key.Matches(msg, m.keys.Sweep) && m.screen != screenLab:
			return m.requestSweep(e)
		case key.Matches(msg, m.keys.Audit) && m.screen != screenAudit:
			m.goTo(screenAudit)
			var c tea.Cmd
			m.audit, c = m.audit.open(e)
			return m, c
		case key.Matches(msg, m.keys.Lab) && m.cfg.Lab != nil && m.screen != screenLab:
			m.goTo(screenLab)
			return m, nil
		case key.Matches(msg, m.keys.Refresh) && m.frozen:
			// Reading again reads the same snapshot (or, once the file
			// moved on, old pages beside new ones): say what would.
			m.banner = banner{kind: bannerInfo, text: frozenNews, at: e.now}
			if m.watchErr != nil { // the file moved on: that, again
				m.banner = banner{kind: bannerErr, read: true, text: oneLine(errText(m.watchErr)), at: e.now}
			}
			return m, nil
		case key.Matches(msg, m.keys.Refresh):
			c := m.reloadAll()
			return m, c
		case msg.String() == "esc" && m.banner.text != "":
			m.banner = banner{}
			return m, nil
		}
	}
	return m.route(m.focus(), msg, e)
}

// fileReplaced: the watcher said the ledger file (or its log) was removed
// or replaced under the console (store/sqlite's nameMoved, walMoved): reads
// on the store's pooled connections may come from the old file or the new.
func (m Model) fileReplaced() bool {
	return m.watchErr != nil && strings.Contains(m.watchErr.Error(), "was removed or replaced while this process had")
}

// frozenNews is what a console on a snapshot says at the start and on r.
const frozenNews = "SNAPSHOT — the ledger's directory is not writable here, so this shows the file as it was when opened; changes by others are not seen. Quit and reopen to reload."

// quitAsked is q (and :q). A lab run in progress finishes first: quitting
// cancels it mid-scenario and leaves its claim in the ledger (in_progress,
// then unknown, in the alarm, a lab key for a person to settle), so its
// held steps are let go, as leaving the screen does, and the console quits
// when the run is done. ctrl+c quits at once.
func (m Model) quitAsked(e env) (Model, tea.Cmd) {
	if !m.lab.running {
		return m.quit()
	}
	m.lab = m.lab.leave()
	m.quitAfterLab = true
	m.banner = banner{kind: bannerErr, text: "Quitting when the lab run ends (stopping it now would leave its claim in the ledger) — ctrl+c quits at once.", at: e.now}
	m.log.Printf("quit asked: waiting for the lab run to end")
	return m, nil
}

// typedInForm reports whether a decision's form (or its review) is open
// with text typed in it: ctrl+c there asks before it quits.
func (m Model) typedInForm() bool {
	a := m.action
	if m.overlay != overlayAction || (a.stage != stageForm && a.stage != stageConfirm && a.stage != stageChecking) {
		return false
	}
	if a.override.Value() != "" {
		return true
	}
	for _, f := range a.fields {
		if f.input.Value() != "" {
			return true
		}
	}
	return false
}

func (m Model) quit() (Model, tea.Cmd) {
	m.log.Printf("console quit")
	m.cancel()
	return m, tea.Quit
}

// startList loads the first page once the counts (which choose the first
// tab) and the window size (which sets the page length) are both known.
// startList starts the list's first page once the counts (they pick the
// tab) and the window's size are known. Reading it beside the counts was
// measured slower on PostgreSQL (README): it needs a second, cold backend,
// where after the counts it runs on theirs, warm.
func (m *Model) startList(e env) tea.Cmd {
	if !m.countsOK || m.width == 0 {
		return nil
	}
	var c tea.Cmd
	m.list, c = m.list.start(e)
	return c
}

// reloadAll refreshes everything on screen: counts, the list page (keeping
// the cursor on the same operation) and the open detail.
func (m *Model) reloadAll() tea.Cmd {
	e := m.env()
	m.countsSeq++
	cmds := []tea.Cmd{loadCounts(m.ctx, m.cfg.Store, m.countsSeq, m.scope)}
	var c tea.Cmd
	m.list, c = m.list.reload(e)
	cmds = append(cmds, c)
	if m.screen == screenDetail || m.behind(screenDetail) {
		m.detail, c = m.detail.reload(e)
		cmds = append(cmds, c)
	}
	if m.screen == screenAudit || m.behind(screenAudit) {
		m.audit, c = m.audit.open(e)
		cmds = append(cmds, c)
	}
	if m.overlay == overlayAction {
		// The operation may have left the page being shown (another tab):
		// read it by key so the open decision can warn it moved on.
		cmds = append(cmds, loadActionOp(m.ctx, m.cfg.Store, m.action.seq, m.action.op.Tenant, m.action.op.Key))
	}
	if m.overlay == overlayReview && (m.review.stage == reviewForm || m.review.stage == reviewConfirm) {
		cmds = append(cmds, reloadReviewOps(m.ctx, m.cfg.Store, m.review.seq, m.review.src))
	}
	return tea.Batch(cmds...)
}

// holdEndedMsg says the busy provider's wait (RetryNotBefore) of the
// operation whose detail was open has passed, at At.
type holdEndedMsg struct{ At time.Time }

// holdEndAlarm arms a timer at the end of the open detail's hold, if its
// operation is held (reconcile.HeldFor); nil otherwise.
func (m Model) holdEndAlarm(e env) tea.Cmd {
	if m.cfg.NoTimers || m.detail.d == nil {
		return nil
	}
	op := m.detail.d.Operation
	if reconcile.HeldFor(op, e.now) <= 0 {
		return nil
	}
	at := op.RetryNotBefore
	return tea.Tick(max(at.Sub(m.cfg.Now())+20*time.Millisecond, 0), func(time.Time) tea.Msg { return holdEndedMsg{At: at} })
}

// leaseAlarmMsg says the lease that ended first, at At, has ended.
type leaseAlarmMsg struct{ At time.Time }

// armLeaseAlarm arms one timer at the next running lease's end (next,
// from the counts; zero: none runs), unless one is armed for it already:
// the "leases ended" count is read again then, without polling.
func (m *Model) armLeaseAlarm(next time.Time) tea.Cmd {
	if next.Equal(m.leaseAlarm) {
		return nil
	}
	m.leaseAlarm = next
	if next.IsZero() || m.cfg.NoTimers {
		return nil
	}
	// A lease counts as ended once its end is past (lease_until < now):
	// a few milliseconds after it.
	d := next.Sub(m.cfg.Now()) + 20*time.Millisecond
	return tea.Tick(max(d, 0), func(time.Time) tea.Msg { return leaseAlarmMsg{At: next} })
}

func (m *Model) startTicking() tea.Cmd {
	if m.cfg.NoTimers || m.tickRunning {
		return nil
	}
	m.tickRunning = true
	return tick(m.cfg.Refresh)
}

func (m Model) busy() bool {
	return m.lab.running || m.detail.checking || m.action.stage == stageRunning || m.action.stage == stageChecking || m.review.stage == reviewRunning ||
		(m.list.loading && m.list.slow) || m.detail.loading
}

func (m *Model) keepSpinning() tea.Cmd {
	if m.cfg.NoTimers || m.spinning || !m.busy() {
		return nil
	}
	m.spinning = true
	return m.spin.Tick
}

// bannerLife is how long a success or info banner stays; errors stay until
// dismissed (esc) or replaced.
const bannerLife = 10 * time.Second

func (m Model) expireBanner(now time.Time) Model {
	if m.banner.text != "" && m.banner.kind != bannerErr && now.Sub(m.banner.at) > bannerLife {
		m.banner = banner{}
	}
	return m
}

// Layout: header, tabs, optional banner, body, help line.
func (m Model) chromeHeight() int { return 3 + len(m.bannerLines()) }

func (m Model) bodyHeight() int {
	if h := m.height - m.chromeHeight(); h > 1 {
		return h
	}
	return 1
}

// listHeight is the body less the table's heading and status lines. It
// does not depend on the banner, so a banner coming and going never
// changes the page length (and never reloads the page).
func (m Model) listHeight() int {
	if h := m.height - 3 - 2; h > 1 {
		return h
	}
	return 1
}

// View draws the screen.
func (m Model) View() string {
	if m.width == 0 {
		return ""
	}
	e := m.env()
	var b strings.Builder
	b.WriteString(m.headerLine(e))
	b.WriteByte('\n')
	if !m.empty() {
		b.WriteString(m.tabsLine(e))
	}
	b.WriteByte('\n')
	for _, l := range m.bannerLines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	body := m.bodyHeight()
	under := m
	if m.overlay == overlayCommand {
		// The command line takes the bottom line; the screen stays.
		under.overlay = overlayNone
	}
	content := under.focus().View(e)
	if m.empty() {
		content = m.emptyView(e, body)
	}
	b.WriteString(fitBlock(content, m.width, body))
	b.WriteByte('\n')
	b.WriteString(m.helpLine())
	return b.String()
}

// empty: the ledger holds no operation at all (not merely none in a tab or
// a tenant): the list gives way to how to get data.
func (m Model) empty() bool {
	return m.countsOK && m.counts.Total == 0 && m.scope == "" && m.screen == screenList && m.overlay == overlayNone
}

// fitBlock makes s exactly h lines of at most w cells, so the frame never
// scrolls or leaves a stale line behind.
func fitBlock(s string, w, h int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = truncate(l, w)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
