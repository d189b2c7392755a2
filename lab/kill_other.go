//go:build !unix

package lab

import "os"

// killSelf: without SIGKILL, the closest is an exit that runs no deferred
// code.
func killSelf() { os.Exit(137) }
