package cli

import (
	"os/signal"
	"syscall"
)

// outliveClosedPipes keeps a long-running server (serve, mcp, sandbox
// serve) alive when the pipe of its stdout or stderr closes — a log
// shipper that restarts, `serve 2>&1 | tee` whose tee dies, an MCP client
// that exits. Go's default is to die of SIGPIPE on the next write there,
// and a server dying mid-call leaves calls it accepted in progress (then
// unknown) though their provider answered. Ignored, such a write fails
// (EPIPE, the line is lost) and every call still runs to its end and is
// recorded. One-shot commands keep the default: `ops list | head` ends
// quietly, and they write their output only after recording.
func outliveClosedPipes() {
	signal.Ignore(syscall.SIGPIPE)
}
