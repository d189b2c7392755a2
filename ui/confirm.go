package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/reconcile"
)

// confirmModel asks one yes/no question before a write that is not a
// decision (a sweep): y runs it, esc or n cancels. Like the decision
// review, enter is not its key.
type confirmModel struct {
	title string
	lines []string
	// short: the lines in fewer words, for a terminal too short for
	// lines (40×10): what y does and what it covers.
	short  []string
	run    tea.Cmd
	closed bool
	// notice: a box that only tells (a sweep's result): enter, esc or q
	// closes it, ↑↓ scroll what does not fit, and nothing runs.
	notice bool
	scroll int

	width, height int
}

func (c confirmModel) Update(msg tea.Msg, e env) (component, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || k.Paste {
		return c, nil
	}
	if c.notice {
		switch k.String() {
		case "enter", "esc", "q":
			c.closed = true
		case "down", "j":
			c.scroll++
		case "up", "k":
			c.scroll--
		case "pgdown", " ":
			c.scroll += max(c.height-4, 1)
		case "pgup":
			c.scroll -= max(c.height-4, 1)
		case "home", "g":
			c.scroll = 0
		case "end", "G":
			c.scroll = 1 << 30
		}
		all, room, _ := c.noticeLayout(e)
		c.scroll = max(min(c.scroll, len(all)-room), 0)
		return c, nil
	}
	switch k.String() {
	case "y":
		c.closed = true
		return c, c.run
	case "esc", "n", "q":
		c.closed = true
	}
	return c, nil
}

func (c confirmModel) boxWidth() int { return min(max(c.width-6, 30), 76) }

// layout wraps each of text's paragraphs to the box: the lines of each,
// and how many in all.
func (c confirmModel) layout(text []string) ([][]string, int) {
	paras := make([][]string, len(text))
	lines := 0
	for i, l := range text {
		paras[i] = strings.Split(wrap(l, c.boxWidth()-4, " "), "\n")
		lines += len(paras[i])
	}
	return paras, lines
}

func (c confirmModel) View(e env) string {
	s := e.styles
	boxW := c.boxWidth()
	layout := c.layout
	if c.notice {
		return c.noticeView(e)
	}
	paras, lines := layout(c.lines)
	if c.short != nil && c.height > 0 && 2+1+lines+1 > c.height {
		paras, lines = layout(c.short)
	}
	keys := s.Key.Render("y") + s.Muted.Render(" yes     ") + s.Key.Render("esc") + s.Muted.Render(" cancel")
	// Whole: a line above the box, the borders, the title, two blank
	// lines, the keys. On a short terminal (40×10, 60×15) the blank lines
	// go, then the longest paragraph loses its last lines (ending "…"),
	// one line at a time, so that the title, each paragraph's start — the
	// scope a sweep or the lab covers — and the keys stay on screen: y is
	// never asked for under a question cut off.
	compact := c.height > 0 && 1+2+1+2+lines+1 > c.height
	if compact {
		for 2+1+lines+1 > c.height {
			longest := -1
			for i, p := range paras {
				if len(p) > 1 && (longest < 0 || len(p) > len(paras[longest])) {
					longest = i
				}
			}
			if longest < 0 {
				break
			}
			p := paras[longest][:len(paras[longest])-1]
			p[len(p)-1] = ansi.Truncate(p[len(p)-1], boxW-5, "") + "…"
			paras[longest] = p
			lines--
		}
	}
	var b strings.Builder
	b.WriteString(s.Title.Render(c.title) + "\n")
	if !compact {
		b.WriteString("\n")
	}
	for _, p := range paras {
		b.WriteString(strings.Join(p, "\n") + "\n")
	}
	if !compact {
		b.WriteString("\n")
	}
	b.WriteString(keys)
	box := lipgloss.PlaceHorizontal(c.width, lipgloss.Center, s.BoxDanger.Width(boxW).Render(b.String()))
	if compact {
		return box
	}
	return "\n" + box
}

// noticeView is a notice box: its title, its lines — the short ones when
// the whole would not fit — and, when even those do not fit (40×10), a
// window of them that ↑↓ move, with where it is beside the key that
// closes it. Nothing is cut off for good.
func (c confirmModel) noticeView(e env) string {
	s := e.styles
	all, room, compact := c.noticeLayout(e)
	top := min(c.scroll, max(len(all)-room, 0))
	shown := all[top:min(top+room, len(all))]
	keys := s.Key.Render("enter") + s.Muted.Render(" close")
	if len(shown) < len(all) {
		keys += s.Muted.Render(fmt.Sprintf("  ↑↓ %d–%d of %d", top+1, top+len(shown), len(all)))
	}
	var b strings.Builder
	b.WriteString(s.Title.Render(c.title) + "\n")
	if !compact {
		b.WriteString("\n")
	}
	b.WriteString(strings.Join(shown, "\n") + "\n")
	if !compact {
		b.WriteString("\n")
	}
	b.WriteString(keys)
	box := lipgloss.PlaceHorizontal(c.width, lipgloss.Center, s.Box.Width(c.boxWidth()).Render(b.String()))
	if compact {
		return box
	}
	return "\n" + box
}

// noticeLayout is a notice's lines as wrapped, how many the box has room
// for, and whether it goes without its blank lines (compact).
func (c confirmModel) noticeLayout(e env) (all []string, room int, compact bool) {
	paras, lines := c.layout(c.lines)
	if c.short != nil && c.height > 0 && 2+1+lines+1 > c.height {
		paras, lines = c.layout(c.short)
	}
	for _, p := range paras {
		all = append(all, p...)
	}
	compact = c.height > 0 && 1+2+1+2+lines+1 > c.height
	room = len(all)
	if compact {
		room = max(c.height-4, 1) // the borders, the title, the keys
	}
	return all, room, compact
}

func (c confirmModel) SetSize(e env, w, h int) (component, tea.Cmd) {
	c.width, c.height = w, h
	return c, nil
}

func (c confirmModel) Keys(e env) keyMap {
	if c.notice {
		short := []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "close"))}
		if all, room, _ := c.noticeLayout(e); len(all) > room {
			short = append(short, key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "scroll")))
		}
		return keyMap{short: short, full: [][]key.Binding{short}}
	}
	short := []key.Binding{
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

// sweepMsg is what a sweep did.
type sweepMsg struct {
	Report reconcile.SweepReport
	Err    error
}

func sweep(ctx context.Context, svc *reconcile.Service) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 6*ioTimeout)
		defer cancel()
		rep, err := svc.Sweep(ctx)
		return sweepMsg{Report: rep, Err: err}
	}
}

// requestSweep asks before sweeping: it changes the ledger.
func (m Model) requestSweep(e env) (Model, tea.Cmd) {
	if m.cfg.ReadOnly || m.cfg.Service == nil {
		m.banner = banner{kind: bannerErr, text: "Read-only console: a sweep writes to the ledger. Use `retrysafe sweep` or reopen without --read-only.", at: e.now}
		return m, nil
	}
	n := m.counts.ExpiredLeases
	lines := []string{
		fmt.Sprintf("%s in progress %s a lease that ended with no result: %s worker is gone.",
			plural(n, "operation", "operations"), map[bool]string{true: "has", false: "have"}[n == 1], map[bool]string{true: "its", false: "their"}[n == 1]),
		"A sweep makes each unknown (with a lease_expired attempt) — or re-sends it under the same downstream key where the provider honours keys, both in this config and in the one that made the claim — and compacts receipts past the replay window. Nothing leaves unknown by itself.",
		"A claim whose own record does not say its provider honoured keys is not re-sent, whatever this config says: it becomes unknown, and the result says how many and why.",
		"Nor is one whose latest lookup found a different request under its key (the provider would answer with that request's result): it becomes unknown.",
	}
	// its: its or their, as n is one or more.
	its := func(n int) string { return map[bool]string{true: "its", false: "their"}[n == 1] }
	short := []string{fmt.Sprintf("%s ended → unknown, or re-sent if %s claim recorded keys honoured.", plural(n, "lease", "leases"), its(n))}
	if r := m.counts.ReleasedClaims; r > 0 {
		// Released claims are counted with them, but no worker died
		// holding them: said so, not "their worker is gone".
		lines[0] = fmt.Sprintf("%s in progress nobody holds: %s ended with no result (the worker is gone), %s released to be sent again under %s key.",
			plural(n, "operation", "operations"), plural(n-r, "lease", "leases"), plural(r, "claim", "claims"), its(r))
		if h := m.counts.HeldClaims; h > 0 {
			// Held by their busy provider's Retry-After, as the header
			// counts them: nothing sends them before then, this sweep
			// included (it may still make one unknown where it would
			// not be sent again at all).
			lines[0] = fmt.Sprintf("%s in progress nobody holds: %s ended with no result (the worker is gone), %s released to be sent again under %s key, %s by %s provider's Retry-After (nothing is sent before then).",
				plural(n, "operation", "operations"), plural(n-r, "lease", "leases"), plural(r-h, "claim", "claims"), its(r-h), plural(h, "claim held", "claims held"), its(h))
		}
		short[0] = fmt.Sprintf("%s nobody holds → unknown, or re-sent if %s claim recorded keys honoured.", plural(n, "claim", "claims"), its(n))
		if h := m.counts.HeldClaims; h > 0 {
			// Not sent before their provider's Retry-After, as the
			// long form says: not "re-sent" now.
			short[0] = fmt.Sprintf("%s → unknown or re-sent; %s held by Retry-After, not sent yet.",
				plural(n-h, "claim", "claims"), count(h))
		}
	}
	if m.scope != "" {
		lines = append(lines, "The sweep covers every tenant, not only "+m.scope+".")
		short = append(short, "Every tenant, not only "+m.scope+".")
	}
	m.confirm = confirmModel{title: "Sweep expired leases?", lines: lines, short: short, run: sweep(m.ctx, m.cfg.Service), width: m.width, height: m.bodyHeight()}
	m.overlay = overlayConfirm
	return m, nil
}

func (m Model) swept(msg sweepMsg) (Model, tea.Cmd) {
	e := m.env()
	if msg.Err != nil {
		m.banner = banner{kind: bannerErr, text: "Sweep failed: " + oneLine(writeErrText(msg.Err)), at: e.now}
		return m, m.reloadAll()
	}
	r := msg.Report
	m.log.Printf("sweep by %s: %+v", m.cfg.Operator, r)
	held, unsent := "", ""
	if r.NotResent > 0 {
		held = fmt.Sprintf(" (%s not re-sent: the claim's record does not say its provider honoured keys)", count(r.NotResent))
	}
	if r.OtherRequest > 0 {
		held += fmt.Sprintf(" (%s not re-sent: the latest lookup found a different request under %s key — authorize a new key to send %s)", count(r.OtherRequest), map[bool]string{true: "its", false: "their"}[r.OtherRequest == 1], map[bool]string{true: "it", false: "them"}[r.OtherRequest == 1])
	}
	if r.NotSent > 0 {
		unsent = fmt.Sprintf(", %s not sent (left in progress: this process cannot send them)", count(r.NotSent))
	}
	waiting := ""
	if r.Waiting > 0 {
		waiting = fmt.Sprintf(", %s waiting for their provider's Retry-After (a later sweep or call sends them)", count(r.Waiting))
	}
	// Unknown counts every claim nobody held, released ones too: not all
	// of them are leases that ended with their worker gone.
	m.banner = banner{kind: bannerOK, text: fmt.Sprintf("Swept: %s nobody held → unknown%s, %s re-sent under the same key%s%s, %s compacted.",
		plural(r.Unknown, "claim", "claims"), held, count(r.Redispatched), unsent, waiting, plural(r.Compacted, "receipt", "receipts")), at: e.now}
	if (r.NotResent > 0 || r.NotSent > 0) && m.overlay == overlayNone {
		// Why is longer than a banner: said in a box, unless the
		// operator is in another one (a form being typed) by now.
		m.overlay = overlayConfirm
		m.confirm = sweptNotice(r, m.width, m.bodyHeight())
	}
	return m, m.reloadAll()
}

// reasons are a report's "; "-joined reasons, each as a bullet.
func reasons(joined string) []string {
	var why []string
	for _, w := range strings.Split(joined, "; ") {
		if w = oneLine(w); w != "" {
			why = append(why, "• "+w+".")
		}
	}
	return why
}

// sweptNotice is the result of a sweep that held claims back from being
// sent again (reconcile.SweepReport.NotResent), or left them in progress
// because this process could not send them (NotSent): how many, and why,
// each reason once — for NotResent the words of each one's lease_expired
// attempt.
func sweptNotice(r reconcile.SweepReport, width, height int) confirmModel {
	lines := []string{
		fmt.Sprintf("%s nobody held → unknown, %s re-sent under the same downstream key, %s compacted, %s forgotten.",
			plural(r.Unknown, "claim", "claims"), count(r.Redispatched), plural(r.Compacted, "receipt", "receipts"), plural(r.Forgotten, "tombstone", "tombstones")),
	}
	var short, titles []string
	// left adds one kind of claim the sweep did not send: its count and
	// reasons, in the long and the short form, and its title.
	left := func(n int, whys, head, tail, shortHead, title string) {
		if n == 0 {
			return
		}
		why := reasons(whys)
		lines = append(lines, fmt.Sprintf(head, count(n)))
		lines = append(lines, why...)
		lines = append(lines, tail)
		short = append(short, fmt.Sprintf(shortHead, count(n)))
		short = append(short, why...)
		titles = append(titles, count(n)+" "+title)
	}
	left(r.NotResent, r.NotResentWhy,
		"Not re-sent: %s of those, made unknown instead. This config says their provider honours downstream keys; the claim's own record does not:",
		"A person must reconcile them: they are on the unknown tab, each with this reason in its lease_expired attempt.",
		"%s not re-sent, made unknown: the claim's record does not say its provider honoured keys:", "not re-sent")
	left(r.NotSent, r.NotSentWhy,
		"Not sent: %s, not counted above, left in progress: this process could not send them (nothing left it):",
		"They are on the in_progress tab; a sweep from a process that can send them (fix the reason first) re-sends them under the same key.",
		"%s not sent, left in progress: this process could not send them:", "not sent")
	if r.NotResent > 0 {
		short = append(short, fmt.Sprintf("Claims nobody held: %s → unknown, %s re-sent. Reconcile them on the unknown tab.", count(r.Unknown), count(r.Redispatched)))
	} else {
		short = append(short, fmt.Sprintf("Claims nobody held: %s → unknown, %s re-sent. Sweep again once it can send.", count(r.Unknown), count(r.Redispatched)))
	}
	return confirmModel{title: "Swept: " + strings.Join(titles, ", "), lines: lines, short: short, notice: true, width: width, height: height}
}

// askLab asks before the lab writes into a ledger that holds other
// tenants' operations (a real one, or a demo shown to an audience): its
// scenarios create operations, effects and decisions under the lab tenant.
func (m Model) askLab(msg labLedgerMsg, e env) (Model, tea.Cmd) {
	if msg.Err != nil {
		m.banner = banner{kind: bannerErr, text: "Lab: cannot read the ledger's tenants: " + oneLine(msg.Err.Error()), at: e.now}
		return m, nil
	}
	if len(msg.Others) == 0 {
		return m.route(m.lab, labGoMsg{Scenario: msg.Scenario, Step: msg.Step}, e)
	}
	shown := msg.Others
	if len(shown) > 5 {
		shown = append(append([]string{}, shown[:5]...), fmt.Sprintf("and %d more", len(msg.Others)-5))
	}
	m.confirm = confirmModel{
		title: "Run the lab in this ledger?",
		lines: []string{
			fmt.Sprintf("%s is not a lab ledger: it holds operations of %s (%s).", textsafe.Visible(m.cfg.Ledger),
				plural(len(msg.Others), "other tenant", "other tenants"), strings.Join(shown, ", ")),
			fmt.Sprintf("A scenario writes real operations, attempts, effects and decisions into it, under tenant %q, with worker processes that die on purpose. They stay in this ledger (and its audit log); no other operation is touched (its sweep settles only the scenario's own keys).", m.lab.tenant),
			"`retrysafe lab` runs the same scenarios in throw-away ledgers instead.",
		},
		short: []string{
			fmt.Sprintf("Holds %s: the lab writes real operations beside theirs, as tenant %q.", plural(len(msg.Others), "other tenant", "other tenants"), m.lab.tenant),
		},
		run:   emit(labGoMsg{Scenario: msg.Scenario, Step: msg.Step}),
		width: m.width, height: m.bodyHeight(),
	}
	m.overlay = overlayConfirm
	return m, nil
}
