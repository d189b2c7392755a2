package cli

import (
	"os"
	"runtime/debug"
)

// longRunGC gives the collector of a long-running, allocation-heavy command
// (serve, bench) a target of 400 % instead of Go's 100 %: the live heap of
// these processes is small (caches of bounded size), and collecting four
// times less often took about a tenth of the in-process call path's CPU per
// new operation off (bench --workers 32 --mix new: 108–109 against 119–121
// µs/call, three interleaved pairs). The heap may grow to five times the
// live data between collections. GOGC, when set, is left to decide.
func longRunGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
