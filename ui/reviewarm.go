package ui

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A decision's review takes y only once it has been on screen: keys typed
// ahead ("enter" then "y" in one burst, faster than a frame) arrive as
// separate messages, and a y read before the review was drawn answered a
// review nobody saw. reviewArmDelay is well under anyone's time to read a
// review, and well over a frame.
const reviewArmDelay = 150 * time.Millisecond

// reviewArmedMsg says the review opened as Seq has been on screen long
// enough to take y.
type reviewArmedMsg struct{ Seq int }

// reviewGuard is the root model's state of that guard.
type reviewGuard struct {
	open  string // the review on screen ("" none), as reviewOnScreen names it
	seq   int
	armed bool
}

// reviewOnScreen names the review on screen whose y writes, "" when none
// is: a decision's (one or several operations), the review by finding at
// the stage where y writes, or a confirmation box (a sweep, the lab).
func (m Model) reviewOnScreen() string {
	switch {
	case m.overlay == overlayAction && m.action.stage == stageConfirm:
		return fmt.Sprintf("action %d", m.action.seq)
	case m.overlay == overlayReview && m.review.stage == reviewConfirm:
		return fmt.Sprintf("review %d", m.review.seq)
	case m.overlay == overlayConfirm && !m.confirm.notice:
		// A question whose y writes too: a sweep, the lab in a ledger
		// with other tenants.
		return "confirm " + m.confirm.title
	}
	return ""
}

// guardReview starts the guard when a review came on screen in this
// update: y waits for reviewArmedMsg (at once without timers: tests drive
// keys one by one, each after the screen they answer).
func (m Model) guardReview() (Model, tea.Cmd) {
	now := m.reviewOnScreen()
	if now == m.guard.open {
		return m, nil
	}
	m.guard.open, m.guard.armed = now, false
	if now == "" {
		return m, nil
	}
	m.guard.seq++
	seq := m.guard.seq
	if m.cfg.NoTimers {
		return m, func() tea.Msg { return reviewArmedMsg{Seq: seq} }
	}
	return m, tea.Tick(reviewArmDelay, func(time.Time) tea.Msg { return reviewArmedMsg{Seq: seq} })
}

// typedAhead reports whether k is a y that would answer a review not yet
// on screen long enough (and says so on the banner: nothing was written).
func (m Model) typedAhead(k tea.KeyMsg, e env) (Model, bool) {
	if m.guard.armed || m.reviewOnScreen() == "" || k.Type != tea.KeyRunes || string(k.Runes) != "y" {
		return m, false
	}
	m.banner = banner{kind: bannerErr, text: "A y typed before the review was on screen was not taken: nothing was written. Read the review, then press y.", at: e.now}
	return m, true
}
