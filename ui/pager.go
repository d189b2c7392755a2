package ui

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/internal/textsafe"
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
		// encoding/json leaves C1 and bidirectional controls raw: a pager
		// would hand them to the terminal.
		b = textsafe.JSON(b)
		f, err := os.CreateTemp("", "retrysafe-"+fileWord(d.Operation.Tenant)+"-*.json")
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

// fileWord is s as a part of a file name: a tenant may hold a separator or
// be longer than a name may be; the name only helps a person find the file.
func fileWord(s string) string {
	b := make([]byte, 0, 32)
	for i := 0; i < len(s) && len(b) < 32; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
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
