//go:build !unix

package cli

// processGone cannot tell here: nothing is taken for a gone build's.
func processGone(pid int) bool { return false }
