package cli

import (
	"os"
	"runtime/debug"
)

// longRunGC gives the collector of a long-running, allocation-heavy command
// (serve, and bench, whose in-process call path is the same work) a target
// of 400 % instead of Go's 100 %: the live heap of these processes is small
// (caches of bounded size), and collecting a quarter as often took about a
// tenth of the CPU off a call — serve's under load, and the in-process
// bench's (--workers 32 --mix new: 108–109 against 119–121 µs/call, three
// interleaved pairs). The heap may grow to five times the live data between
// collections. $GOGC, when set, decides instead.
func longRunGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
