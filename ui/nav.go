package ui

// Navigation between the screens (list, detail, lab, audit log): each
// screen exists once, so "back" is the screens in the order they were
// last on screen, each at most once — esc walks down them and always ends
// at the list, never round a circle between two screens that each
// remember the other.

// goTo shows screen s: the screen on now goes on top of the way back,
// and s leaves it (it is on screen, not behind). Opening a detail from a
// detail (a link) keeps the way back as it is.
func (m *Model) goTo(s screenID) {
	if s == m.screen {
		return
	}
	back := make([]screenID, 0, len(m.back)+1)
	for _, b := range m.back {
		if b != s && b != m.screen {
			back = append(back, b)
		}
	}
	if m.screen != screenList {
		back = append(back, m.screen)
	}
	m.back, m.screen = back, s
}

// goBack shows the screen below the current one: the last one on screen
// before it, else the list.
func (m *Model) goBack() {
	if n := len(m.back); n > 0 {
		m.screen, m.back = m.back[n-1], m.back[:n-1]
		return
	}
	m.screen = screenList
}

// toList shows the list and forgets the way back (a new scope, a filter).
func (m *Model) toList() {
	m.screen, m.back = screenList, nil
}

// behind reports whether s is on the way back (its data is reloaded with
// the screen's, so going back shows it current).
func (m Model) behind(s screenID) bool {
	for _, b := range m.back {
		if b == s {
			return true
		}
	}
	return false
}
