package ui

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/model"
)

// o in the detail opens the whole operation — arguments, receipt, every
// attempt and decision, as indented JSON (control characters escaped) — in
// $PAGER, the console suspended meanwhile, for reading what does not fit a
// screen or for searching it.

// pagerFileMsg: the file to page is written.
type pagerFileMsg struct {
	Path string
	Err  error
}

// pagerDoneMsg: the pager exited.
type pagerDoneMsg struct{ Err error }

func writePagerFile(d *model.Detail) tea.Cmd {
	return func() tea.Msg {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return pagerFileMsg{Err: err}
		}
		f, err := os.CreateTemp("", "retrysafe-"+d.Operation.Tenant+"-*.json")
		if err != nil {
			return pagerFileMsg{Err: err}
		}
		_, werr := f.Write(append(b, '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			return pagerFileMsg{Err: werr}
		}
		return pagerFileMsg{Path: f.Name()}
	}
}

// page runs the pager on path (the pager command may carry arguments, as
// PAGER="less -S" does) and removes the file after.
func page(pager, path string) tea.Cmd {
	argv := strings.Fields(pager)
	if len(argv) == 0 {
		argv = []string{"less"}
	}
	c := exec.Command(argv[0], append(argv[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		os.Remove(path)
		return pagerDoneMsg{Err: err}
	})
}
