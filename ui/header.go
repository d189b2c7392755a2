package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/internal/textsafe"
	"github.com/retrysafe/retrysafe/model"
)

// The chrome every screen shares: the header (which ledger, whose view,
// how fresh), the state tabs with live counts, and the banner.

type bannerKind int

const (
	bannerInfo bannerKind = iota
	bannerOK
	bannerErr
)

// banner is one line of news: a decision written, a decision refused and
// why, a failure to read the ledger.
type banner struct {
	kind bannerKind
	text string
	at   time.Time
	// read: it says the ledger cannot be read or watched (the screens'
	// status lines point at it instead of repeating the driver's words);
	// cleared once reads and the watcher recover.
	read bool
}

// tabStates is the tabs' order: the states that need a person first, then
// every operation ("" = all).
var tabStates = append(append([]model.State{}, model.AllStates...), "")

func (m Model) headerLine(e env) string {
	s := m.styles
	sep := s.Muted.Render(" │ ")
	// scopeIn is the tenant scope with the tenant's name clipped in its
	// middle to at most n cells (0: whole).
	scopeIn := func(n int) string {
		if m.scope == "" {
			return s.HeaderVal.Render("all tenants")
		}
		name := oneLine(m.scope)
		if n > 0 {
			name = clipMiddle(name, n)
		}
		return s.HeaderKey.Render("tenant ") + s.HeaderVal.Render(name)
	}
	scope := scopeIn(0)
	// The right-hand group is never cut: read-only, the unknown alarm and
	// freshness are what the screen must not hide. compact is the same
	// alarms in fewer cells, for a terminal too narrow for them whole.
	var right, compact []string
	both := func(full, short string) {
		right, compact = append(right, full), append(compact, short)
	}
	if m.busy() && !m.cfg.NoTimers {
		right = append(right, m.spin.View())
	}
	if m.cfg.ReadOnly {
		both(s.ReadOnly.Render(" READ-ONLY "), s.ReadOnly.Render("READ-ONLY"))
	}
	// A failed read keeps the last counts read: the alarms stay, beside
	// "cannot read ledger", and are never cut.
	if n := m.counts.ByState[model.StateUnknown]; m.countsOK {
		if n > 0 {
			both(s.Alarm.Render(fmt.Sprintf(" %s UNKNOWN ", count(n))), s.Alarm.Render(fmt.Sprintf("%s UNKNOWN", count(n))))
		}
		// Scoped to one tenant, the others' unknowns must not vanish.
		if other := m.allUnknown - n; m.scope != "" && other > 0 {
			if n > 0 {
				both(s.Contra.Render(fmt.Sprintf("+%s elsewhere", count(other))), s.Contra.Render(fmt.Sprintf("+%s elsewhere", count(other))))
			} else {
				both(s.Alarm.Render(fmt.Sprintf(" %s UNKNOWN in other tenants ", count(other))), s.Alarm.Render(fmt.Sprintf("%s UNKNOWN elsewhere", count(other))))
			}
		}
	}
	if n := m.counts.ExpiredLeases - m.counts.ReleasedClaims; n > 0 && m.countsOK {
		// Claims whose worker is gone: a sweep (S) makes them unknown.
		both(s.Contra.Render(plural(n, "lease ended", "leases ended")), s.Contra.Render(plural(n, "lease ended", "leases ended")))
	}
	if n := m.counts.ReleasedClaims - m.counts.HeldClaims; n > 0 && m.countsOK {
		// Claims released to be sent again under their key: nobody holds
		// them either, and a sweep (S) sends them again (or makes them
		// unknown) — but no worker died holding them.
		both(s.Contra.Render(count(n)+" released"), s.Contra.Render(count(n)+" released"))
	}
	if n := m.counts.HeldClaims; n > 0 && m.countsOK {
		// Released claims their busy provider's Retry-After still holds
		// (reconcile.HeldFor): nothing sends them before then, a sweep
		// included — held, as their rows say, not released.
		both(s.Muted.Render(count(n)+" held"), s.Muted.Render(count(n)+" held"))
	}
	status := func(mode int) string {
		switch {
		case m.loadErr != nil:
			return s.BannerErr.Render("⚠ cannot read ledger")
		case m.frozen && m.watchErr != nil && mode >= 3:
			return s.Contra.Render("⚠ old SNAPSHOT")
		case m.frozen && m.watchErr != nil:
			return s.Contra.Render("⚠ SNAPSHOT, file changed")
		case m.frozen && mode >= 2:
			return s.Contra.Render("SNAPSHOT")
		case m.frozen:
			return s.Contra.Render("SNAPSHOT, not live")
		case m.watchErr != nil && mode == 4:
			return s.Contra.Render("⚠ not live")
		case m.watchErr != nil && mode == 3:
			return s.Contra.Render("⚠ refresh failing")
		case m.watchErr != nil:
			return s.Contra.Render("⚠ live refresh failing")
		case m.refreshedAt.IsZero() || mode >= 2:
			return ""
		case mode == 0:
			return s.Muted.Render("refreshed " + m.refreshedAt.In(e.loc).Format("15:04:05"))
		}
		return s.Muted.Render(m.refreshedAt.In(e.loc).Format("15:04:05"))
	}
	left := func(ledger string, opLabel bool) string {
		// The one sanitizer: a name from a Go program that embeds the
		// console is not checked as the command line's --operator is.
		op := s.HeaderVal.Render(textsafe.Visible(m.cfg.Operator))
		if opLabel {
			op = s.HeaderKey.Render("operator ") + op
		}
		return " " + s.App.Render("retrysafe") + sep + s.HeaderVal.Render(ledger) + sep + scope + sep + op
	}
	join := func(parts []string, mode int) string {
		if st := status(mode); st != "" {
			parts = append(append([]string{}, parts...), st)
		}
		return strings.Join(parts, " ")
	}
	// From the most to the least said, until it fits: the time loses its
	// label, the ledger's path is shortened in the middle (to 12 cells),
	// then the tenant's name (to 16), the operator loses its label, the
	// time goes (never "⚠ live refresh failing"); then both names to 6,
	// the alarms in fewer words, and what is left of the left-hand side
	// is cut from its end. The alarms are never cut.
	// The path as given (--db): the one sanitizer, as for every other
	// name on screen (a file named with an escape retitles the terminal).
	shown := textsafe.Visible(m.cfg.Ledger)
	fitNames := func(r string, opLabel bool, minLedger, minScope int) (string, bool) {
		l := left(shown, opLabel)
		over := ansi.StringWidth(l) + ansi.StringWidth(r) + 1 - m.width
		if over <= 0 {
			return spread(l, r, m.width), true
		}
		ledger := shown
		if lw := ansi.StringWidth(ledger); lw > minLedger {
			cut := min(over, lw-minLedger)
			ledger, over = clipMiddle(ledger, lw-cut), over-cut
		}
		if over > 0 && m.scope != "" {
			if sw := ansi.StringWidth(oneLine(m.scope)); sw > minScope {
				cut := min(over, sw-minScope)
				scope, over = scopeIn(sw-cut), over-cut
			}
		}
		defer func() { scope = scopeIn(0) }()
		if over <= 0 {
			return spread(left(ledger, opLabel), r, m.width), true
		}
		return spread(left(ledger, opLabel), r, m.width), false
	}
	for _, v := range []struct {
		mode    int
		opLabel bool
	}{{0, true}, {1, true}, {1, false}, {2, false}} {
		if line, ok := fitNames(join(right, v.mode), v.opLabel, 12, 16); ok {
			return line
		}
	}
	if line, ok := fitNames(join(right, 2), false, 6, 6); ok {
		return line
	}
	// The most words of the alarms that fit; the left side is cut.
	for _, r := range []string{join(right, 2), join(compact, 3)} {
		if ansi.StringWidth(r)+1 <= m.width {
			line, _ := fitNames(r, false, 6, 6)
			return line
		}
	}
	line, _ := fitNames(join(compact, 4), false, 6, 6)
	return line
}

// spread puts left and right on one line of width w. right is never cut
// (the header's alarms): left gives way, from its end, first.
func spread(left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		if right == "" {
			return truncate(left, w)
		}
		if rw+2 > w {
			return truncate(right, w)
		}
		left = truncate(left, w-rw-1)
		lw = ansi.StringWidth(left)
	}
	return left + strings.Repeat(" ", max(w-lw-rw, 1)) + right
}

// tabsLine shows every state with its live count, unknown first. When
// operations are unknown that tab is drawn in the alarm colour wherever the
// cursor is. The active tab is bracketed (visible without colour, too). It
// tries shorter labels, numbers and gaps until the line fits.
func (m Model) tabsLine(e env) string {
	active := -1
	if m.screen == screenList {
		active = m.list.tab
	}
	// A wide gap reads better than a long label: shorten labels first. The
	// contradicted count goes only when nothing else makes room for it.
	line, _ := m.tabsLayout(active)
	return line
}

// tabsLayout is the tabs line and where each tab starts (its first cell),
// for mouse clicks. The unknown tab and the contradicted count are alarms:
// they are never dropped. Labels shorten first, then the empty tabs go,
// then the last tabs (least urgent) go one by one behind a "…", never the
// active one.
func (m Model) tabsLayout(active int) (string, []int) {
	tries := []struct {
		tier  int
		short bool
		gap   string
	}{{0, false, "  "}, {0, true, "  "}, {1, false, "  "}, {1, true, "  "}, {1, true, " "}, {2, true, " "}}
	for _, try := range tries {
		if line, at := m.renderTabs(active, try.tier, try.short, try.gap, nil); ansi.StringWidth(line) <= m.width {
			return line, at
		}
	}
	hidden := make([]bool, len(tabStates))
	for i, st := range tabStates {
		n := m.counts.Total
		if st != "" {
			n = m.counts.ByState[st]
		}
		hidden[i] = n == 0 && i != active && st != model.StateUnknown && m.countsOK
	}
	line, at := m.renderTabs(active, 2, true, " ", hidden)
	for i := len(tabStates) - 1; i >= 0 && ansi.StringWidth(line) > m.width; i-- {
		if hidden[i] || i == active || tabStates[i] == model.StateUnknown {
			continue
		}
		hidden[i] = true
		line, at = m.renderTabs(active, 2, true, " ", hidden)
	}
	return truncate(line, m.width), at
}

// tabAt is the tab under column x of the tabs line, or -1.
func (m Model) tabAt(x int) int {
	_, at := m.tabsLayout(m.list.tab)
	next := -1 // the start of the next tab shown
	for i := len(at) - 1; i >= 0; i-- {
		if at[i] < 0 {
			continue // hidden
		}
		if x >= at[i] {
			if next < 0 || x < next-1 {
				return i
			}
			return -1
		}
		next = at[i]
	}
	return -1
}

func (m Model) renderTabs(active, tier int, short bool, gap string, hidden []bool) (string, []int) {
	s := m.styles
	num := count
	if short {
		num = compact
	}
	unknown := m.counts.ByState[model.StateUnknown]
	var parts []string
	var at []int
	x := 1
	more := false // a tab with operations is not shown
	for i, st := range tabStates {
		label := "all"
		n := m.counts.Total
		if st != "" {
			label = stateLabel(st, tier)
			n = m.counts.ByState[st]
		}
		if hidden != nil && hidden[i] {
			at = append(at, -1)
			more = more || n > 0 || !m.countsOK
			continue
		}
		text := label + " " + num(n)
		if !m.countsOK {
			text = label + " ·"
		}
		hot := st == model.StateUnknown && unknown > 0
		style := s.Tab
		switch {
		case hot && i == active:
			style = s.TabHotAct
		case hot:
			style = s.TabHot
		case i == active:
			style = s.TabActive
		}
		if i == active {
			text = "[" + text + "]"
		}
		at = append(at, x)
		x += ansi.StringWidth(text) + len(gap)
		parts = append(parts, style.Render(text))
	}
	line := " " + strings.Join(parts, gap)
	if more {
		line += gap + s.Muted.Render("…")
	}
	if n := m.counts.Contradicted; n > 0 {
		label := fmt.Sprintf("! %s contradicted", num(n))
		if tier > 0 {
			label = "!" + num(n)
		}
		line += gap + s.Contra.Render(label)
	}
	return line, at
}

// bannerLines is the banner, wrapped: a refusal that says what changed is
// worth three lines more than it is worth being cut off.
func (m Model) bannerLines() []string {
	if m.banner.text == "" {
		return nil
	}
	s := m.styles
	style, mark := s.BannerInfo, "•"
	switch m.banner.kind {
	case bannerErr:
		style, mark = s.BannerErr, "✗"
	case bannerOK:
		style, mark = s.BannerOK, "✓"
	}
	text := localTimes(textsafe.Lines(m.banner.text), m.env()) // a stored key or tenant, drawn
	if m.banner.kind == bannerErr {
		text += "  (esc dismisses)"
	}
	// At most three lines, and no more than a short terminal leaves
	// beside the header, the tabs, one line of the screen and its help
	// line; each within the width (a narrow terminal's too).
	n := min(maxBannerLines, m.height-4)
	if m.overlay == overlayAction || m.overlay == overlayReview || m.overlay == overlayConfirm {
		// A box that asks for y or the typed override keeps the lines it
		// needs to name what it writes and for which key, with its
		// warning and prompt (minDecisionBox): on a short terminal the
		// banner gives way, not the box.
		n = min(n, m.height-3-minDecisionBox)
	}
	if n <= 0 {
		return nil
	}
	wrapped := strings.Split(wrap(text, max(m.width-4, 8), " "), "\n")
	if len(wrapped) > n {
		wrapped = wrapped[:n]
		wrapped[n-1] = truncate(wrapped[n-1]+"…", max(m.width-4, 1))
	}
	out := make([]string, len(wrapped))
	for i, l := range wrapped {
		lead := "   "
		if i == 0 {
			lead = " " + mark + " "
		}
		out[i] = style.Render(truncate(lead+l, max(m.width, 1)))
	}
	return out
}

const maxBannerLines = 3

// minDecisionBox is the body a decision's box needs at the least: its
// borders, the action, the key, the warning, the prompt and its field
// (the 40×10 console's whole body).
const minDecisionBox = 7

// emptyView is what an empty ledger shows instead of an empty table: how to
// get data into it, with commands that can be pasted as they are.
func (m Model) emptyView(e env, height int) string {
	s := m.styles
	db := e.ledger
	lines := []string{
		"",
		s.Title.Render("This ledger is empty.") + s.Muted.Render("  "+textsafe.Visible(db)),
		"",
		"Nothing has been recorded here yet. To see the console at work:",
		"",
		"  " + s.Key.Render("retrysafe demo"),
		s.Muted.Render("      builds demo.db with several tenants and unknown outcomes to settle, and opens it"),
		"",
		"  " + s.Key.Render(fmt.Sprintf("retrysafe call --db %s --tenant acme --key order-1 \\", textsafe.Visible(textsafe.ShellWord(db)))),
		"  " + s.Key.Render(`      --tool create_support_task --args '{"subject":"Printer on fire"}'`),
		s.Muted.Render("      records one tool call here; add --tool send_notification --fault lose-reply"),
		s.Muted.Render(`      (args {"to":…,"body":…}) to make an unknown outcome`),
		"",
		s.Muted.Render("This screen refreshes by itself as soon as operations arrive."),
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
