//go:build unix

package cli

import (
	"errors"
	"syscall"
)

// processGone reports whether no process of this id runs on this host
// (signal 0 answers ESRCH): a demo build of that id left its files.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
