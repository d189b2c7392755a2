package ui

import (
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/retrysafe/retrysafe/internal/textsafe"
)

// y copies the operation's key, Y a ready command line for it, to the
// terminal's clipboard with OSC 52 (it works over ssh and in tmux with
// set-clipboard on). The sequence is written in a command, never in
// Update; the terminal is Config.Clipboard (nil: copying is off and says
// so).

// copiedMsg says what was copied, or why not.
type copiedMsg struct {
	What string
	Err  error
}

// osc52 is the sequence that puts text on the system clipboard.
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
}

func copyText(w io.Writer, what, text string) tea.Cmd {
	return func() tea.Msg {
		if w == nil {
			return copiedMsg{What: what, Err: fmt.Errorf("no terminal to copy to")}
		}
		_, err := io.WriteString(w, osc52(text))
		return copiedMsg{What: what, Err: err}
	}
}

// ledgerArg is the ledger as a copied command names it: a file by its
// absolute path (the command is pasted in another shell, often in another
// directory), a postgres:// URL as it is.
func ledgerArg(path string) string {
	if strings.Contains(path, "://") {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// copyRequestMsg asks the root to copy an operation's key or command.
type copyRequestMsg struct {
	Tenant, Key string
	Command     bool // a ready CLI command instead of the key
	Unknown     bool // the command checks the provider first
}

func (m Model) copyOp(req copyRequestMsg) tea.Cmd {
	if req.Command {
		sub := "show"
		if req.Unknown {
			sub = "check"
		}
		cmd := fmt.Sprintf("retrysafe ops %s --db %s%s --tenant %s --key %s", sub, textsafe.ShellWord(ledgerArg(m.cfg.Store.Path())), m.cfg.CommandFlags, textsafe.ShellWord(req.Tenant), textsafe.ShellWord(req.Key))
		return copyText(m.cfg.Clipboard, "the command `"+cmd+"`", cmd)
	}
	return copyText(m.cfg.Clipboard, "the key "+req.Tenant+"/"+req.Key, req.Key)
}
