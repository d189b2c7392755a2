package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/retrysafe/retrysafe/lab"
	"github.com/retrysafe/retrysafe/store"
)

// The Lab screen: pick a scenario, run it for real against the open ledger
// under a tenant of its own, watch its steps stream in, and read the
// before → after row. Worker processes that die are the point of the show;
// the console keeps responding while they do, because the run lives in a
// goroutine that only talks to the model through messages.

// labGate holds a run in step mode between its steps: the run's progress
// callback waits on it after reporting each step, so the step on screen is
// the one about to run. Update only signals it (never blocks): space lets
// one step through, enter (or leaving the screen) all the rest.
type labGate struct {
	next chan struct{} // one step; buffered, so a signal never waits
	rest chan struct{} // closed: run the rest without stopping
	once sync.Once
}

func newLabGate() *labGate { return &labGate{next: make(chan struct{}, 1), rest: make(chan struct{})} }

// step lets the step on screen run.
func (g *labGate) step() {
	select {
	case g.next <- struct{}{}:
	default:
	}
}

// release lets the run go on to its end.
func (g *labGate) release() { g.once.Do(func() { close(g.rest) }) }

// wait holds the run until a signal (or the console quits).
func (g *labGate) wait(ctx context.Context) {
	select {
	case <-g.next:
	case <-g.rest:
	case <-ctx.Done():
	}
}

// labStartedMsg hands the model the channel the run reports on.
type labStartedMsg struct {
	Seq    int
	Events <-chan tea.Msg
}

// labStepMsg is one step of the running scenario.
type labStepMsg struct {
	Seq    int
	Step   lab.Step
	Events <-chan tea.Msg
}

// labDoneMsg is the scenario's row (or why it could not run).
type labDoneMsg struct {
	Seq int
	Row lab.Row
	Err error
}

// maxLabSteps bounds the steps kept on screen.
const maxLabSteps = 200

type labModel struct {
	keys      labKeys
	runner    LabRunner // nil: no lab
	tenant    string    // the tenant its runs write under
	approved  bool      // running here was allowed (asked once per session)
	scenarios []lab.Scenario
	cursor    int
	seq       int
	running   bool
	scenario  lab.Scenario // running or last run
	steps     []lab.Step
	// gate holds a step-mode run between steps (nil: the run goes on its
	// own); waiting: the run is held at the last step shown.
	gate     *labGate
	waiting  bool
	row      *lab.Row
	err      error
	started  time.Time
	finished time.Time

	width, height int
}

func newLab(r LabRunner, sc []lab.Scenario, tenant string) labModel {
	return labModel{keys: newLabKeys(), runner: r, scenarios: sc, tenant: tenant}
}

// startLab runs one scenario in the background. Its steps and its row come
// back as messages read off one channel, one at a time.
func startLab(ctx context.Context, r LabRunner, ledger, tenant, id string, seq int, gate *labGate) tea.Cmd {
	return func() tea.Msg {
		events := make(chan tea.Msg, 64)
		go func() {
			defer close(events)
			row, err := r.RunIn(ctx, ledger, tenant, id, func(s lab.Step) {
				select {
				case events <- labStepMsg{Seq: seq, Step: s}:
				case <-ctx.Done():
				}
				if gate != nil && !s.Final {
					gate.wait(ctx)
				}
			})
			select {
			case events <- labDoneMsg{Seq: seq, Row: row, Err: err}:
			case <-ctx.Done():
			}
		}()
		return labStartedMsg{Seq: seq, Events: events}
	}
}

// nextLabEvent waits for the run's next message.
func nextLabEvent(events <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-events
		if !ok {
			return nil
		}
		if s, ok := msg.(labStepMsg); ok {
			s.Events = events
			return s
		}
		return msg
	}
}

func (l labModel) update(msg tea.Msg, e env) (labModel, tea.Cmd) {
	switch msg := msg.(type) {
	case labStartedMsg:
		if msg.Seq != l.seq {
			return l, nil
		}
		return l, nextLabEvent(msg.Events)
	case labStepMsg:
		if msg.Seq != l.seq {
			return l, nil
		}
		l.steps = append(l.steps, msg.Step)
		if len(l.steps) > maxLabSteps {
			l.steps = l.steps[len(l.steps)-maxLabSteps:]
		}
		l.waiting = l.gate != nil && !msg.Step.Final
		return l, nextLabEvent(msg.Events)
	case labGoMsg:
		l.approved = true
		return l.start(e, msg.Scenario, msg.Step)
	case labDoneMsg:
		if msg.Seq != l.seq {
			return l, nil
		}
		l.running, l.finished, l.waiting = false, e.now, false
		if l.gate != nil {
			l.gate.release()
			l.gate = nil
		}
		row := msg.Row
		l.row, l.err = &row, msg.Err
		return l, nil
	}
	return l, nil
}

// start runs scenario i; in step mode it stops before each step until
// space.
func (l labModel) start(e env, i int, stepMode bool) (labModel, tea.Cmd) {
	if l.running || i < 0 || i >= len(l.scenarios) {
		return l, nil
	}
	l.seq++
	l.running, l.scenario, l.steps, l.row, l.err = true, l.scenarios[i], nil, nil, nil
	l.started, l.gate, l.waiting = e.now, nil, false
	if stepMode {
		l.gate = newLabGate()
	}
	return l, startLab(e.ctx, l.runner, e.st.Path(), l.tenant, l.scenario.ID, l.seq, l.gate)
}

// leave lets a held run go on: nobody is left to press space.
func (l labModel) leave() labModel {
	if l.gate != nil {
		l.gate.release()
		l.gate, l.waiting = nil, false
	}
	return l
}

// labLedgerMsg says which tenants other than the lab's the ledger holds.
type labLedgerMsg struct {
	Scenario int
	Step     bool // run it in step mode
	Others   []string
	Err      error
}

// labGoMsg runs a scenario once running it here is approved.
type labGoMsg struct {
	Scenario int
	Step     bool
}

func loadLabLedger(ctx context.Context, st store.Ledger, labTenant string, scenario int, step bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		ts, err := st.Tenants(ctx)
		msg := labLedgerMsg{Scenario: scenario, Step: step, Err: err}
		for _, t := range ts {
			if t != labTenant {
				msg.Others = append(msg.Others, t)
			}
		}
		return msg
	}
}

func (l labModel) key(msg tea.KeyMsg, e env) (labModel, tea.Cmd) {
	k := l.keys
	switch {
	case key.Matches(msg, k.Back):
		return l.leave(), emit(leaveLabMsg{})
	case l.running && l.gate != nil && key.Matches(msg, k.Step):
		// Step mode: space runs the step on screen, enter all the rest.
		if l.waiting {
			l.gate.step()
			l.waiting = false
		}
		return l, nil
	case l.running && l.gate != nil && key.Matches(msg, k.Run):
		return l.leave(), nil
	case key.Matches(msg, k.Up):
		l.cursor = max(l.cursor-1, 0)
	case key.Matches(msg, k.Down):
		l.cursor = min(l.cursor+1, len(l.scenarios)-1)
	case key.Matches(msg, k.Run), key.Matches(msg, k.Step):
		if l.running || len(l.scenarios) == 0 {
			return l, nil
		}
		stepMode := key.Matches(msg, k.Step)
		if e.readOnly {
			return l, emit(bannerMsg{kind: bannerErr, text: "Read-only console: the lab writes to the ledger, so it cannot run here. Reopen without --read-only."})
		}
		if !l.approved {
			// Asked once per session: is this a ledger the lab may write
			// into? The root looks at its tenants first.
			return l, loadLabLedger(e.ctx, e.st, l.tenant, l.cursor, stepMode)
		}
		return l.start(e, l.cursor, stepMode)
	case key.Matches(msg, k.Open):
		if l.row == nil {
			return l, nil
		}
		i := int(msg.String()[0] - '1')
		if i < len(l.row.Keys) {
			return l, emit(openDetailMsg{Target: detailTarget{Tenant: l.row.Tenant, Key: l.row.Keys[i]}})
		}
	}
	return l, nil
}

func (l labModel) keyMap(e env) keyMap {
	k := l.keys
	run := enabled(k.Run, !e.readOnly && !l.running)
	step := enabled(k.Step, !e.readOnly && !l.running)
	open := enabled(k.Open, l.row != nil && len(l.row.Keys) > 0)
	// What the screen is for comes first, and the way back: the help line
	// drops keys from its end on a narrow terminal (the arrows at 80
	// columns hid space and esc).
	short := []key.Binding{run, step, k.Back, open, k.Up, k.Down}
	if l.running && l.gate != nil {
		short = []key.Binding{enabled(relabel(k.Step, "run this step"), l.waiting), relabel(k.Run, "run the rest"), k.Back}
	}
	return keyMap{short: short, full: [][]key.Binding{short}}
}

func (l labModel) view(e env, w, h int) string {
	spin, tenant := e.spin, oneLine(l.tenant) // drawn: the one sanitizer
	s := e.styles
	var out []string
	add := func(str string) { out = append(out, str) }
	// wrap adds text wrapped to the width, with a hanging indent.
	wrap := func(lines *[]string, label, text string) {
		lead := "   " + s.Label.Render(label)
		indent := strings.Repeat(" ", 3+ansi.StringWidth(label))
		for i, l := range strings.Split(wrap(text, max(w-len(indent)-1, 20), " "), "\n") {
			if i == 0 {
				*lines = append(*lines, lead+l)
			} else {
				*lines = append(*lines, indent+l)
			}
		}
	}
	add(" " + s.Title.Render("Lab") + s.Muted.Render(" · real worker processes that die mid-call, run under tenant \""+tenant+"\""))
	add("")
	if len(l.scenarios) == 0 {
		add(s.Muted.Render("  No scenarios are available in this build."))
		return strings.Join(out, "\n")
	}
	// The expected column only where it fits beside the names; the
	// selected scenario's panel says it in full anyway.
	expW := 0
	if w >= 100 {
		for _, sc := range l.scenarios {
			expW = max(expW, ansi.StringWidth(sc.Expected))
		}
		expW = min(expW, w/3)
	}
	nameW := max(w-expW-6, 20)
	// The scenario list gives up rows on a short screen (listRows) to what
	// is below it — the run, the step about to run and its narration —
	// keeping the selected scenario and those around it.
	listAt := len(out)
	for i, sc := range l.scenarios {
		line := fit(sc.Name, nameW)
		if expW > 0 {
			line += " " + fit(sc.Expected, expW)
		}
		if i == l.cursor {
			add(" " + s.Selected.Render("› "+line))
		} else {
			add("   " + line)
		}
	}
	listRows := func(below int) {
		n := len(l.scenarios)
		keep := min(n, max(h-listAt-below, 1))
		if keep >= n {
			return
		}
		lo := min(max(l.cursor-keep/2, 0), n-keep)
		list := slices.Clone(out[listAt+lo : listAt+lo+keep])
		if lo > 0 && keep > 1 {
			list[0] = s.Muted.Render(fmt.Sprintf("   ↑ %d more", lo))
		}
		if lo+keep < n && keep > 1 {
			list[keep-1] = s.Muted.Render(fmt.Sprintf("   ↓ %d more", n-lo-keep))
		}
		rest := slices.Clone(out[listAt+n:])
		out = append(append(out[:listAt], list...), rest...)
	}
	add("")
	sc := l.scenario
	if sc.ID == "" || (!l.running && l.cursor < len(l.scenarios) && l.scenarios[l.cursor].ID != sc.ID) {
		// Nothing run yet, or another scenario selected: say what enter does.
		sel := l.scenarios[l.cursor]
		add(" " + s.Section.Render(sel.ID) + s.Muted.Render("  enter runs it against this ledger"))
		wrap(&out, "first call  ", sel.FirstCall)
		wrap(&out, "next        ", sel.NextAttempt)
		wrap(&out, "expected    ", sel.Expected)
		if sc.ID != "" && l.row != nil {
			add("")
			add(s.Muted.Render(fmt.Sprintf("   last run: %s — %s", sc.ID, map[bool]string{true: "held", false: "did not hold"}[l.row.OK && l.err == nil])))
		}
		below := len(out) - listAt - len(l.scenarios)
		listRows(below)
		return strings.Join(out, "\n")
	}
	status := ""
	switch {
	case l.running && l.waiting && w < ansi.StringWidth(sc.ID)+56:
		// The step's own line says what space and enter do.
		status = s.Bold.Render("step mode")
	case l.running && l.waiting:
		status = s.Bold.Render("step mode: space runs the next step, enter the rest")
	case l.running:
		status = spin + " running " + e.now.Sub(l.started).Truncate(100*time.Millisecond).String()
	case l.err != nil:
		status = s.BannerErr.Render("✗ could not run")
	case l.row != nil && l.row.OK:
		status = s.BannerOK.Render("✓ holds")
	case l.row != nil:
		status = s.BannerErr.Render("✗ does not hold")
	}
	add(spread(" "+s.Section.Render(sc.ID), status+" ", w))

	var result []string
	if l.err != nil {
		wrap(&result, "", s.BannerErr.Render(oneLine(l.err.Error())))
	}
	if r := l.row; r != nil && l.err == nil {
		verdict := fmt.Sprintf("%d → %d", r.Before, r.After)
		if r.OK {
			verdict = s.BannerOK.Render(verdict)
		} else {
			verdict = s.BannerErr.Render(verdict)
		}
		result = append(result, "   "+s.Label.Render("effects     ")+verdict+s.Muted.Render("   expected ")+r.Expected)
		wrap(&result, "ledger      ", r.Ledger)
		if r.FirstResult != "" {
			wrap(&result, "first call  ", r.FirstResult)
		}
		if r.NextResult != "" {
			wrap(&result, "next        ", r.NextResult)
		}
		for _, f := range r.Failures {
			wrap(&result, "✗ ", f)
		}
		if len(r.Keys) > 0 {
			var keys []string
			for i, k := range r.Keys {
				if i >= 9 {
					break
				}
				keys = append(keys, s.Key.Render(fmt.Sprint(i+1))+" "+s.Link.Render(k))
			}
			wrap(&result, "open        ", strings.Join(keys, "   "))
		}
	}
	// In step mode the last step is the one about to run (or running),
	// with its narration below it, for the audience.
	var narration []string
	steps := l.steps
	if l.gate != nil && len(steps) > 0 {
		cur := steps[len(steps)-1]
		steps = steps[:len(steps)-1]
		mark, state := "▶ ", "next: "
		if !l.waiting {
			mark, state = spin+" ", "running: "
		}
		narration = append(narration, "   "+s.Bold.Render(mark+state+truncate(localTimes(cur.Text, e), w-14)))
		if cur.Why != "" {
			wrap(&narration, "  ", cur.Why)
		}
		if l.waiting {
			narration = append(narration, "     "+s.Muted.Render("space runs this step · enter runs the rest"))
		}
	}
	// The run's status, narration and result come before the list's rows;
	// steps fill what is left, newest last.
	listRows(len(out) - listAt - len(l.scenarios) + len(result) + len(narration))
	room := h - len(out) - len(result) - len(narration)
	if room < len(steps) {
		steps = steps[len(steps)-max(room, 0):]
	}
	for _, st := range steps {
		mark := "• "
		if l.gate != nil {
			mark = "✓ "
		}
		add("   " + s.Muted.Render(mark+truncate(localTimes(st.Text, e), w-6)))
	}
	out = append(out, narration...)
	out = append(out, result...)
	return strings.Join(out, "\n")
}
