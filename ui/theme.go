package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/retrysafe/retrysafe/model"
)

// Theme is the console's palette. It uses the sixteen ANSI colours only, so
// the terminal's own scheme (dark or light, whatever the on-call engineer
// chose) decides the exact shades, and nothing has to query the terminal for
// its background at start-up.
type Theme struct {
	Accent lipgloss.Color // the product's name, the selected tab
	Danger lipgloss.Color // unknown outcomes, errors
	Warn   lipgloss.Color // contradicted, in progress
	OK     lipgloss.Color // applied, success banners
	Info   lipgloss.Color // links, authorized
	Muted  lipgloss.Color // labels, secondary text
	Calm   lipgloss.Color // not applied
	Final  lipgloss.Color // failed
}

// DefaultTheme is the palette the console ships with.
func DefaultTheme() Theme {
	return Theme{
		Accent: lipgloss.Color("6"),
		Danger: lipgloss.Color("1"),
		Warn:   lipgloss.Color("3"),
		OK:     lipgloss.Color("2"),
		Info:   lipgloss.Color("4"),
		Muted:  lipgloss.Color("8"),
		Calm:   lipgloss.Color("6"),
		Final:  lipgloss.Color("5"),
	}
}

// Styles is a Theme turned into the styles the screens render with. Every
// style comes from one renderer, so the colour profile (NO_COLOR, a pinned
// profile in tests) is decided in one place and no package global changes.
type Styles struct {
	App        lipgloss.Style // "retrysafe" in the header
	HeaderKey  lipgloss.Style // "ledger", "tenant", …
	HeaderVal  lipgloss.Style
	ReadOnly   lipgloss.Style // the READ-ONLY badge
	Alarm      lipgloss.Style // "3 UNKNOWN" when something waits for a person
	AllClear   lipgloss.Style
	Tab        lipgloss.Style
	TabActive  lipgloss.Style
	TabHot     lipgloss.Style // the unknown tab while it has operations
	TabHotAct  lipgloss.Style
	TableHead  lipgloss.Style
	Selected   lipgloss.Style // the cursor row: reverse video survives NO_COLOR
	Contra     lipgloss.Style // contradicted rows
	Muted      lipgloss.Style
	Bold       lipgloss.Style
	Title      lipgloss.Style
	Section    lipgloss.Style
	Label      lipgloss.Style
	Link       lipgloss.Style
	Key        lipgloss.Style // a key name in hints: "a", "enter"
	BannerErr  lipgloss.Style
	BannerOK   lipgloss.Style
	BannerInfo lipgloss.Style
	Box        lipgloss.Style // forms, confirmations, pickers
	BoxDanger  lipgloss.Style
	Input      lipgloss.Style
	InputErr   lipgloss.Style
	Spinner    lipgloss.Style
	States     map[model.State]lipgloss.Style
	Help       help.Styles
}

// NewStyles builds the styles of theme t with renderer r.
func NewStyles(r *lipgloss.Renderer, t Theme) Styles {
	s := Styles{
		App:        r.NewStyle().Bold(true).Foreground(t.Accent),
		HeaderKey:  r.NewStyle().Foreground(t.Muted),
		HeaderVal:  r.NewStyle().Bold(true),
		ReadOnly:   r.NewStyle().Bold(true).Reverse(true).Foreground(t.Warn),
		Alarm:      r.NewStyle().Bold(true).Reverse(true).Foreground(t.Danger),
		AllClear:   r.NewStyle().Foreground(t.OK),
		Tab:        r.NewStyle().Foreground(t.Muted),
		TabActive:  r.NewStyle().Bold(true).Underline(true).Foreground(t.Accent),
		TabHot:     r.NewStyle().Bold(true).Foreground(t.Danger),
		TabHotAct:  r.NewStyle().Bold(true).Reverse(true).Foreground(t.Danger),
		TableHead:  r.NewStyle().Bold(true).Foreground(t.Muted),
		Selected:   r.NewStyle().Reverse(true).Bold(true),
		Contra:     r.NewStyle().Foreground(t.Warn).Bold(true),
		Muted:      r.NewStyle().Foreground(t.Muted),
		Bold:       r.NewStyle().Bold(true),
		Title:      r.NewStyle().Bold(true),
		Section:    r.NewStyle().Bold(true).Foreground(t.Accent),
		Label:      r.NewStyle().Foreground(t.Muted),
		Link:       r.NewStyle().Foreground(t.Info).Underline(true),
		Key:        r.NewStyle().Bold(true),
		BannerErr:  r.NewStyle().Bold(true).Foreground(t.Danger),
		BannerOK:   r.NewStyle().Bold(true).Foreground(t.OK),
		BannerInfo: r.NewStyle().Foreground(t.Info),
		Box:        r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(t.Accent).Padding(0, 1),
		BoxDanger:  r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(t.Danger).Padding(0, 1),
		Input:      r.NewStyle(),
		InputErr:   r.NewStyle().Foreground(t.Danger),
		Spinner:    r.NewStyle().Foreground(t.Accent),
		States: map[model.State]lipgloss.Style{
			model.StateUnknown:    r.NewStyle().Bold(true).Foreground(t.Danger),
			model.StateInProgress: r.NewStyle().Foreground(t.Warn),
			model.StateNotApplied: r.NewStyle().Foreground(t.Calm),
			model.StateFailed:     r.NewStyle().Foreground(t.Final),
			model.StateApplied:    r.NewStyle().Foreground(t.OK),
			model.StateSuperseded: r.NewStyle().Foreground(t.Muted),
			model.StateAuthorized: r.NewStyle().Foreground(t.Info),
		},
	}
	s.Help = help.Styles{
		Ellipsis:       r.NewStyle().Foreground(t.Muted),
		ShortKey:       r.NewStyle().Bold(true),
		ShortDesc:      r.NewStyle().Foreground(t.Muted),
		ShortSeparator: r.NewStyle().Foreground(t.Muted),
		FullKey:        r.NewStyle().Bold(true),
		FullDesc:       r.NewStyle(),
		FullSeparator:  r.NewStyle().Foreground(t.Muted),
	}
	return s
}

// State styles a state's name.
func (s Styles) State(st model.State) lipgloss.Style {
	if x, ok := s.States[st]; ok {
		return x
	}
	return s.Muted
}
